import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { sql } from "kysely";
import { HYBRID_WEIGHTS } from "../../knowledge/fusion.js";
import type { KbSearchRequest } from "../../knowledge/service.js";
import { createRuntime, type Runtime } from "../../runtime.js";
import { openDatabase } from "../../store/database.js";
import {
  type FakeOpenAIServer,
  startFakeOpenAIServer,
} from "../../test/support/fake-openai-server.js";
import { freshPostgresDatabase } from "../lib/postgres.js";
import type { Scenario, TargetCheck } from "../lib/scenario.js";
import { median, percentile } from "../lib/stats.js";
import { bytes, fmt, int, type Table } from "../lib/table.js";
import { msSince, nowNs } from "../lib/timing.js";

const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), "../fixtures/cranfield");
const UID = "bench";

interface CranfieldDoc {
  id: number;
  title: string;
  body: string;
}
interface CranfieldQuery {
  id: number;
  text: string;
}
interface Qrel {
  queryId: number;
  docId: number;
  relevance: number;
}

function load<T>(name: string): T {
  return JSON.parse(readFileSync(join(FIXTURES, name), "utf8")) as T;
}

/** A runtime over its own store (SQLite file or PostgreSQL), the store kept open for sizes. */
async function openStore(engine: "sqlite" | "postgres") {
  const dataDir = mkdtempSync(join(tmpdir(), "bench-kb-"));
  const target =
    engine === "sqlite" ? join(dataDir, "agents.sqlite") : await freshPostgresDatabase("kb");
  if (target === undefined) return undefined;
  const database = await openDatabase(target);
  const runtime = await createRuntime({
    dataDir,
    database,
    checkpointer: "memory",
    env: {},
    warn: () => {},
  });
  return {
    runtime,
    database,
    async size(): Promise<number> {
      if (database.dialect === "postgres") {
        const { rows } = await sql<{
          size: string;
        }>`select pg_database_size(current_database()) as size`.execute(database.db);
        return Number(rows[0]?.size ?? 0);
      }
      await sql`pragma wal_checkpoint(TRUNCATE)`.execute(database.db);
      return statSync(target).size;
    },
    async dispose() {
      await runtime.close();
      await database.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

interface Relevance {
  retriever: string;
  queries: number;
  recallAt10: number;
  ndcgAt10: number;
  mrrAt10: number;
  ingestMs: number;
  chunks: number;
}

/** A way of searching a knowledge base: a label and the fusion weights (default: the constant). */
interface Retriever {
  label: string;
  fusion?: KbSearchRequest["fusion"];
}

/** The embedder of the hybrid variants: the test suite's hashed words and trigrams, 384 dims. */
const BENCH_DIMENSIONS = 384;
const benchEmbedder = (fake: FakeOpenAIServer) => ({
  model: `hash-${BENCH_DIMENSIONS}`,
  dimensions: BENCH_DIMENSIONS,
  base_url: fake.url,
});

/** The engines measured: `BENCH_KB_ENGINES` (e.g. `sqlite`), else both. */
function engines(): ("sqlite" | "postgres")[] {
  const named = (process.env.BENCH_KB_ENGINES ?? "sqlite,postgres")
    .split(",")
    .map((name) => name.trim());
  return (["sqlite", "postgres"] as const).filter((engine) => named.includes(engine));
}

/** The weights tried on the hybrid variant, the shipped constant first. */
const HYBRID_RETRIEVERS: Retriever[] = [
  { label: `hybrid ${HYBRID_WEIGHTS.bm25}:${HYBRID_WEIGHTS.vector} (shipped)` },
  { label: "hybrid 1:0.25", fusion: { bm25: 1, vector: 0.25 } },
  { label: "hybrid 1:0.5", fusion: { bm25: 1, vector: 0.5 } },
  { label: "hybrid 1:1 (equal)", fusion: { bm25: 1, vector: 1 } },
  { label: "vectors only", fusion: { bm25: 0, vector: 1 } },
];

/**
 * Cranfield: every document a file (title, blank line, body) of one knowledge base (with the
 * bench embedder when `fake` is given); each query searched with `runtime.kb.search` (50
 * chunks, folded to the best chunk per document) by each retriever, scored against the
 * judgements (any relevance ≥ 1 counts; nDCG with binary gains).
 */
async function relevance(
  runtime: Runtime,
  retrievers: readonly Retriever[],
  fake?: FakeOpenAIServer,
): Promise<Relevance[]> {
  const docs = load<CranfieldDoc[]>("docs.json");
  const queries = load<CranfieldQuery[]>("queries.json");
  const qrels = load<Qrel[]>("qrels.json");
  await runtime.kb.create(UID, {
    name: "cranfield",
    ...(fake === undefined ? {} : { embedder: benchEmbedder(fake) }),
  });
  const started = nowNs();
  for (let start = 0; start < docs.length; start += 200) {
    await runtime.kb.addFiles(
      UID,
      "cranfield",
      docs.slice(start, start + 200).map((doc) => ({
        name: `doc-${doc.id}.txt`,
        content: Buffer.from(`${doc.title.trim()}\n\n${doc.body.trim()}\n`),
      })),
    );
  }
  await runtime.kb.idle();
  const ingestMs = msSince(started);
  const files = await runtime.kb.listFiles(UID, "cranfield");
  const chunks = files.reduce((sum, file) => sum + file.chunk_count, 0);
  if (fake !== undefined && files.some((file) => file.vectors !== "ready")) {
    throw new Error("bench: some Cranfield files have no vectors; the hybrid rows would be BM25");
  }
  const relevant = new Map<number, Set<number>>();
  for (const qrel of qrels) {
    if (qrel.relevance < 1) continue;
    const set = relevant.get(qrel.queryId) ?? new Set<number>();
    set.add(qrel.docId);
    relevant.set(qrel.queryId, set);
  }
  const results: Relevance[] = [];
  for (const retriever of retrievers) {
    let recall = 0;
    let ndcg = 0;
    let mrr = 0;
    let counted = 0;
    for (const query of queries) {
      const wanted = relevant.get(query.id);
      if (!wanted || wanted.size === 0) continue;
      counted += 1;
      const hits = await runtime.kb.search(UID, {
        query: query.text,
        kb: "cranfield",
        top_k: 50,
        ...(retriever.fusion === undefined ? {} : { fusion: retriever.fusion }),
      });
      const ranked: number[] = [];
      for (const hit of hits) {
        const id = Number(/^doc-(\d+)\.txt$/.exec(hit.file)?.[1]);
        if (!ranked.includes(id)) ranked.push(id);
        if (ranked.length === 10) break;
      }
      const found = ranked.filter((id) => wanted.has(id)).length;
      recall += found / wanted.size;
      const dcg = ranked.reduce(
        (sum, id, i) => sum + (wanted.has(id) ? 1 / Math.log2(i + 2) : 0),
        0,
      );
      let ideal = 0;
      for (let i = 0; i < Math.min(10, wanted.size); i += 1) ideal += 1 / Math.log2(i + 2);
      ndcg += dcg / ideal;
      const first = ranked.findIndex((id) => wanted.has(id));
      mrr += first === -1 ? 0 : 1 / (first + 1);
    }
    results.push({
      retriever: retriever.label,
      queries: counted,
      recallAt10: recall / counted,
      ndcgAt10: ndcg / counted,
      mrrAt10: mrr / counted,
      ingestMs,
      chunks,
    });
  }
  return results;
}

interface SpeedRow {
  engine: string;
  retriever: string;
  chunks: number;
  ingestChunksPerS: number;
  allP50: number;
  allP95: number;
  twoP50: number;
  twoP95: number;
  dbBytes: number;
}

/**
 * Search speed at `target` chunks over 10 knowledge bases: files of Cranfield-vocabulary text
 * (random documents' sentences, ~100 chunks per file), then every Cranfield query searched over
 * all 10 and over 2 of them (top 10).
 */
async function speed(
  engine: "sqlite" | "postgres",
  target: number,
  fake?: FakeOpenAIServer,
): Promise<SpeedRow | undefined> {
  const store = await openStore(engine);
  if (!store) return undefined;
  try {
    const { runtime } = store;
    const docs = load<CranfieldDoc[]>("docs.json");
    const queries = load<CranfieldQuery[]>("queries.json");
    const kbs = Array.from({ length: 10 }, (_, i) => `kb-${i}`);
    for (const name of kbs) {
      await runtime.kb.create(UID, {
        name,
        ...(fake === undefined ? {} : { embedder: benchEmbedder(fake) }),
      });
    }
    // Deterministic pseudo-random choice of documents (no Math.random: repeatable numbers).
    // mulberry32: 32-bit integer arithmetic only (a float LCG loses bits and repeats, and
    // repeated files are deduplicated).
    let seed = 42;
    const next = () => {
      seed = (seed + 0x6d2b79f5) | 0;
      let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
      return (t ^ (t >>> 14)) >>> 0;
    };
    const chunksPerFile = 100;
    const files = Math.ceil(target / chunksPerFile);
    const started = nowNs();
    for (let f = 0; f < files; f += 1) {
      const lines: string[] = [];
      let length = 0;
      // ~100 chunks of ≤1000 characters: one document per paragraph.
      while (length < chunksPerFile * 900) {
        const doc = docs[next() % docs.length] as CranfieldDoc;
        const text = doc.body.slice(0, 850);
        lines.push(text, "");
        length += text.length + 2;
      }
      await runtime.kb.addFiles(UID, kbs[f % kbs.length] as string, [
        { name: `synthetic-${f}.txt`, content: Buffer.from(lines.join("\n")) },
      ]);
      if (f % 20 === 19) await runtime.kb.idle();
    }
    await runtime.kb.idle();
    const ingestMs = msSince(started);
    let chunks = 0;
    for (const name of kbs) {
      for (const file of await runtime.kb.listFiles(UID, name)) chunks += file.chunk_count;
    }
    const all: number[] = [];
    const two: number[] = [];
    for (const query of queries) {
      let start = nowNs();
      await runtime.kb.search(UID, { query: query.text, top_k: 10 });
      all.push(msSince(start));
      start = nowNs();
      await runtime.kb.search(UID, { query: query.text, kb: ["kb-0", "kb-1"], top_k: 10 });
      two.push(msSince(start));
    }
    return {
      engine,
      retriever: fake === undefined ? "BM25" : "hybrid",
      chunks,
      ingestChunksPerS: chunks / (ingestMs / 1000),
      allP50: median(all),
      allP95: percentile(all, 95),
      twoP50: median(two),
      twoP95: percentile(two, 95),
      dbBytes: await store.size(),
    };
  } finally {
    await store.dispose();
  }
}

/**
 * Knowledge bases: retrieval quality on Cranfield (BM25 over FTS5 on SQLite, ts_rank on
 * PostgreSQL), ingest rate, and search latency at 10k (and 100k) chunks over 10 knowledge bases,
 * all of them and 2 of 10, with the database's size.
 */
export const knowledgeScenario: Scenario = {
  name: "knowledge",
  title: "Knowledge bases: Cranfield relevance, ingest and search speed",
  async run({ quick }) {
    const quality: (Relevance & { engine: string })[] = [];
    // The bench's embedder: the fake OpenAI server's hashed /v1/embeddings (no real model here).
    const fake = await startFakeOpenAIServer(() => {
      throw new Error("bench: no chat completions expected");
    });
    const speeds: SpeedRow[] = [];
    try {
      for (const engine of engines()) {
        for (const embedded of [false, true]) {
          const store = await openStore(engine);
          if (!store) continue;
          try {
            const rows = embedded
              ? await relevance(store.runtime, HYBRID_RETRIEVERS, fake)
              : await relevance(store.runtime, [{ label: "BM25" }]);
            quality.push(...rows.map((row) => ({ engine, ...row })));
          } finally {
            await store.dispose();
          }
        }
      }
      const sizes = quick ? [10_000] : [10_000, 100_000];
      for (const size of sizes) {
        for (const engine of engines()) {
          for (const embedder of [undefined, fake]) {
            const row = await speed(engine, size, embedder);
            if (row) speeds.push(row);
          }
        }
      }
    } finally {
      await fake.close();
    }
    const qualityTable: Table = {
      title: "Cranfield (1,400 docs, 225 queries): retrieval quality and ingest",
      headers: [
        "engine",
        "retriever",
        "queries",
        "recall@10",
        "nDCG@10",
        "MRR@10",
        "chunks",
        "ingest ms",
        "chunks/s",
      ],
      rows: quality.map((q) => [
        q.engine,
        q.retriever,
        int(q.queries),
        fmt(q.recallAt10, 3),
        fmt(q.ndcgAt10, 3),
        fmt(q.mrrAt10, 3),
        int(q.chunks),
        int(q.ingestMs),
        int(q.chunks / (q.ingestMs / 1000)),
      ]),
      notes: [
        "reference (FTS5 BM25 over title+body, measured when the issue was filed): recall@10 0.394, nDCG@10 0.348, MRR 0.516.",
        "each query's 50 best chunks folded to documents (best chunk per document); any judged relevance counts, nDCG with binary gains.",
        `hybrid: weighted reciprocal-rank fusion (k 60) of BM25 and the vectors of a deterministic hashed bag of words and character trigrams (${BENCH_DIMENSIONS} dims, the test suite's fake /v1/embeddings): a weak embedder that knows no synonyms, standing in for a real model (none reachable here).`,
        "ingest with embeddings includes the HTTP round trips to the fake server and writing the vectors.",
      ],
    };
    const speedTable: Table = {
      title: "Search latency over 10 knowledge bases (225 Cranfield queries, top 10; ms)",
      headers: [
        "engine",
        "retriever",
        "chunks",
        "ingest chunks/s",
        "all p50",
        "all p95",
        "2 of 10 p50",
        "2 of 10 p95",
        "db size",
      ],
      rows: speeds.map((s) => [
        s.engine,
        s.retriever,
        int(s.chunks),
        int(s.ingestChunksPerS),
        fmt(s.allP50),
        fmt(s.allP95),
        fmt(s.twoP50),
        fmt(s.twoP95),
        bytes(s.dbBytes),
      ]),
      notes: [
        "runtime.kb.search end to end (visibility check, query, file names); synthetic files of Cranfield sentences, ~100 chunks each.",
      ],
    };
    const sqliteQuality = quality.find((q) => q.engine === "sqlite" && q.retriever === "BM25");
    const largest = speeds.filter((s) => s.engine === "sqlite" && s.retriever === "BM25").at(-1);
    const largestHybrid = speeds
      .filter((s) => s.engine === "sqlite" && s.retriever === "hybrid")
      .at(-1);
    const targets: TargetCheck[] = [
      {
        target: "Cranfield recall@10 ≥ 0.394 and nDCG@10 ≥ 0.348 (offline default, SQLite)",
        met:
          sqliteQuality === undefined
            ? undefined
            : sqliteQuality.recallAt10 >= 0.394 && sqliteQuality.ndcgAt10 >= 0.348,
        detail: sqliteQuality
          ? `recall@10 ${fmt(sqliteQuality.recallAt10, 3)}, nDCG@10 ${fmt(sqliteQuality.ndcgAt10, 3)}`
          : "not measured",
      },
      {
        target: "search p50 ≤ 50 ms at 100k chunks, 2 of 10 knowledge bases, SQLite",
        met: largest && largest.chunks >= 90_000 ? largest.twoP50 <= 50 : undefined,
        detail: largest
          ? `${fmt(largest.twoP50)} ms at ${int(largest.chunks)} chunks`
          : "not measured",
      },
      {
        target: "hybrid search p50 ≤ 50 ms at 100k chunks, 2 of 10 knowledge bases, SQLite",
        met:
          largestHybrid && largestHybrid.chunks >= 90_000 ? largestHybrid.twoP50 <= 50 : undefined,
        detail: largestHybrid
          ? `${fmt(largestHybrid.twoP50)} ms at ${int(largestHybrid.chunks)} chunks`
          : "not measured",
      },
    ];
    return { tables: [qualityTable, speedTable], data: { quality, speeds }, targets };
  },
};
