/**
 * Search over full text and vectors. Knowledge bases without an embedder, and those whose
 * vectors are not all there (a file waiting for or failing its vectors: during a reindex after
 * an embedder change), are searched by full text alone, exactly as without vectors. The others
 * also by the query's vector, one embedding per embedder, and the two rankings are fused
 * (`fusion.ts`, BM25 dominant).
 */

import { sql } from "kysely";
import { messageOf } from "../errors.js";
import type { Database } from "../store/database.js";
import { activeEmbedder, type EmbedderFactory } from "./embedder.js";
import { type ChunkHit, searchChunks } from "./fts.js";
import { fuseRankings, HYBRID_WEIGHTS } from "./fusion.js";
import type { KnowledgeBaseRecord } from "./schema.js";
import type { VectorHit } from "./vector-cache.js";
import type { VectorStore } from "./vector-store.js";

/** The weights of the two rankings (see {@link HYBRID_WEIGHTS}). */
export interface FusionWeights {
  bm25: number;
  vector: number;
}

/** What {@link hybridSearch} needs. */
export interface HybridDeps {
  database: Database;
  vectors: VectorStore;
  embedders: EmbedderFactory;
  /** Where a failed query embedding is reported (the search goes on by full text). */
  warn(message: string): void;
}

/** Candidates each ranking contributes, at least: fusion needs more than the hits it returns. */
const MIN_CANDIDATES = 30;

/** The best chunks of `records` for `query`, best first (scores: BM25, or fused when hybrid). */
export async function hybridSearch(
  deps: HybridDeps,
  records: readonly KnowledgeBaseRecord[],
  search: {
    query: string;
    fileIds: readonly string[] | undefined;
    limit: number;
    weights?: FusionWeights | undefined;
  },
): Promise<ChunkHit[]> {
  const { db, dialect } = deps.database;
  const kbIds = records.map((record) => record.id);
  const embedded = await withVectors(deps.database, records);
  if (embedded.length === 0) {
    return searchChunks(db, dialect, {
      kbIds,
      fileIds: search.fileIds,
      query: search.query,
      limit: search.limit,
    });
  }
  const pool = Math.max(MIN_CANDIDATES, search.limit * 2);
  const [words, near] = await Promise.all([
    searchChunks(db, dialect, { kbIds, fileIds: search.fileIds, query: search.query, limit: pool }),
    nearestChunks(deps, embedded, search.query, pool, search.fileIds),
  ]);
  if (near.length === 0) return words.slice(0, search.limit);
  const weights = search.weights ?? HYBRID_WEIGHTS;
  const fused = fuseRankings([
    { ids: words.map((hit) => hit.id), weight: weights.bm25 },
    { ids: near.map((hit) => hit.id), weight: weights.vector },
  ]).slice(0, search.limit);
  const known = new Map(words.map((hit) => [hit.id, hit]));
  const missing = fused.filter((entry) => !known.has(entry.id)).map((entry) => entry.id);
  if (missing.length > 0) {
    const { rows } = await sql<ChunkHit>`
      select id, kb_id, file_id, seq, line_start, line_end, text, 0 as score
      from kb_chunks where id in (${sql.join(missing)})`.execute(db);
    for (const row of rows) known.set(Number(row.id), { ...row, id: Number(row.id) });
  }
  return fused.flatMap(({ id, score }) => {
    const hit = known.get(id);
    return hit === undefined ? [] : [{ ...hit, score }];
  });
}

/**
 * The knowledge bases among `records` searched by vectors too: with an embedder, and every
 * indexed file's vectors `ready`.
 */
async function withVectors(
  database: Database,
  records: readonly KnowledgeBaseRecord[],
): Promise<KnowledgeBaseRecord[]> {
  const candidates = records.filter((record) => activeEmbedder(record.embedder) !== undefined);
  if (candidates.length === 0) return [];
  const incomplete = await database.db
    .selectFrom("kb_files")
    .select("kb_id")
    .where(
      "kb_id",
      "in",
      candidates.map((record) => record.id),
    )
    .where("status", "=", "indexed")
    .where("vectors", "<>", "ready")
    .groupBy("kb_id")
    .execute();
  const waiting = new Set(incomplete.map((row) => row.kb_id));
  return candidates.filter((record) => !waiting.has(record.id));
}

/**
 * The chunks nearest the query over `records`, nearest first: the query embedded once per
 * embedder. Distances of different embedders are merged as they are (cosine, 0 to 2).
 */
async function nearestChunks(
  deps: HybridDeps,
  records: readonly KnowledgeBaseRecord[],
  query: string,
  limit: number,
  fileIds: readonly string[] | undefined,
): Promise<VectorHit[]> {
  const byEmbedder = new Map<
    string,
    { embedder: ReturnType<EmbedderFactory>; kbs: KnowledgeBaseRecord[] }
  >();
  for (const record of records) {
    const active = activeEmbedder(record.embedder);
    if (active === undefined) continue;
    const embedder = deps.embedders(active);
    const group = byEmbedder.get(embedder.key) ?? { embedder, kbs: [] };
    group.kbs.push(record);
    byEmbedder.set(embedder.key, group);
  }
  const hits: VectorHit[] = [];
  for (const { embedder, kbs } of byEmbedder.values()) {
    let vector: Float32Array | undefined;
    try {
      [vector] = await embedder.embed([query]);
    } catch (error) {
      const reason = messageOf(error);
      deps.warn(
        `knowledge search: full-text only for ${kbs.map((kb) => `"${kb.name}"`).join(", ")}: ${reason}`,
      );
      continue;
    }
    if (vector === undefined) continue;
    hits.push(...(await deps.vectors.nearest({ kbs, key: embedder.key, vector, limit, fileIds })));
  }
  return hits.sort((a, b) => a.distance - b.distance || a.id - b.id).slice(0, limit);
}
