import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import * as sqliteVec from "sqlite-vec";
import { afterEach, describe, expect, it } from "vitest";
import { embedderKey } from "../../knowledge/embedder.js";
import { VectorStore } from "../../knowledge/vector-store.js";
import { createRuntime, type Runtime } from "../../runtime.js";
import { openDatabase } from "../../store/database.js";
import { type FakeOpenAIServer, startFakeOpenAIServer } from "../support/fake-openai-server.js";

const FILES = [
  { name: "paint.txt", content: Buffer.from("Paint the fence in a bright colour every spring.\n") },
  { name: "engine.txt", content: Buffer.from("The engine oil needs changing every winter.\n") },
  { name: "garden.txt", content: Buffer.from("The garden hose leaks at the tap.\n") },
];

/**
 * SQLite finds vector candidates by their sign bits and ranks them by their floats
 * (`knowledge/sqlite-vectors.ts`); a database whose vectors an earlier version stored as float
 * `vec0` tables is moved to that layout when it is opened (migration 0010), nothing embedded
 * again. Through the runtime, with the fake OpenAI server's hashed embeddings.
 */
describe("knowledge base vectors on SQLite: sign bits, then floats", () => {
  const cleanups: Array<() => Promise<void> | void> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  async function open(dataDir: string): Promise<Runtime> {
    const runtime = await createRuntime({
      dataDir,
      checkpointer: "memory",
      env: {},
      warn: () => {},
    });
    cleanups.push(() => runtime.close());
    return runtime;
  }

  async function fakeServer(): Promise<FakeOpenAIServer> {
    const fake = await startFakeOpenAIServer(() => {
      throw new Error("no chat completions expected");
    });
    cleanups.push(() => fake.close());
    return fake;
  }

  /**
   * Rewrites the database's vectors into the layout of the previous version (one float `vec0`
   * table per length, as its `knowledge/sqlite-vectors.ts` made it) and forgets migration 0010.
   */
  function downgrade(file: string, dimensions: number): void {
    const db = new Database(file);
    sqliteVec.load(db);
    try {
      db.exec(`
        create virtual table kb_vec_${dimensions} using vec0(kb_id text partition key, embedding float[${dimensions}] distance_metric=cosine, +embedder_key text);
        insert into kb_vec_${dimensions} (rowid, kb_id, embedder_key, embedding)
          select b.rowid, b.kb_id, b.embedder_key, f.embedding
          from kb_vecbit_${dimensions} b join kb_vector_floats f on f.chunk_id = b.rowid;
        drop table kb_vecbit_${dimensions};
        drop table kb_vector_floats;
        delete from kysely_migration where name = '0010_knowledge_vector_bits';`);
    } finally {
      db.close();
    }
  }

  function tables(file: string): string[] {
    const db = new Database(file, { readonly: true });
    try {
      return (
        db
          .prepare("select name from sqlite_master where name like 'kb_vec%' order by name")
          .all() as { name: string }[]
      ).map((row) => row.name);
    } finally {
      db.close();
    }
  }

  it("finds the nearest by meaning over a length that is not a whole number of bytes, and keeps them after an upgrade from float tables", async () => {
    const fake = await fakeServer();
    const dataDir = mkdtempSync(join(tmpdir(), "kb-bits-"));
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    const file = join(dataDir, "agents.sqlite");
    const embedder = { model: "hash-252", dimensions: 252, base_url: fake.url };

    const first = await open(dataDir);
    await first.kb.create("alice", { name: "house", embedder });
    await first.kb.addFiles("alice", "house", FILES);
    await first.kb.idle();
    // No chunk has the word "color": only the vectors can find the colour one.
    const before = await first.kb.search("alice", { query: "color", kb: "house", top_k: 3 });
    expect(before[0]?.file).toBe("paint.txt");
    await first.close();
    cleanups.pop();
    expect(tables(file)).toContain("kb_vecbit_252");

    downgrade(file, 252);
    expect(tables(file).filter((name) => name.startsWith("kb_vec_252"))).not.toEqual([]);

    const second = await open(dataDir);
    const after = await second.kb.search("alice", { query: "color", kb: "house", top_k: 3 });
    expect(after.map((hit) => [hit.file, hit.line_start])).toEqual(
      before.map((hit) => [hit.file, hit.line_start]),
    );
    expect(tables(file).some((name) => /^kb_vec_252/.test(name))).toBe(false);
    const requests = fake.embeddingRequests.length;
    await second.kb.idle();
    // Moved, not embedded again: one request per search above, none for the files.
    expect(fake.embeddingRequests.length).toBe(requests);

    const database = await openDatabase(file);
    cleanups.push(() => database.close());
    const kb = await second.kb.get("alice", "house");
    expect([...(await new VectorStore(database).keysOf(kb.id)).values()]).toEqual([3]);
  });
});

/** Deterministic unit vectors (mulberry32), centred like a real embedding model's. */
function randomVectors(count: number, dimensions: number, seed: number): Float32Array[] {
  let state = seed;
  const next = () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32 - 0.5;
  };
  return Array.from({ length: count }, () => {
    const vector = Float32Array.from({ length: dimensions }, next);
    const norm = Math.hypot(...vector);
    return vector.map((value) => value / norm);
  });
}

describe("the bit search's candidates", () => {
  it("hold the exact nearest among many more vectors than it ranks exactly", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "kb-bits-many-"));
    const database = await openDatabase(join(dataDir, "agents.sqlite"));
    try {
      const now = new Date().toISOString();
      const kb = "kb-1";
      const settings = { model: "m", dimensions: 64 };
      const key = embedderKey(settings);
      await database.db
        .insertInto("knowledge_bases")
        .values({
          id: kb,
          owner_uid: "alice",
          name: "many",
          description: "",
          share_config: JSON.stringify({ mode: "private" }),
          embedder: JSON.stringify(settings),
          version: 1,
          created_at: now,
          updated_at: now,
        })
        .execute();
      await database.db
        .insertInto("kb_files")
        .values({
          id: "file-1",
          kb_id: kb,
          name: "f.txt",
          content_hash: "0",
          bytes: 1,
          format: "txt",
          status: "indexed",
          error: null,
          lease_until: null,
          created_at: now,
          updated_at: now,
        })
        .execute();
      const vectors = randomVectors(3_000, 64, 7);
      const ids: number[] = [];
      for (let start = 0; start < vectors.length; start += 500) {
        const rows = await database.db
          .insertInto("kb_chunks")
          .values(
            vectors.slice(start, start + 500).map((_, index) => ({
              kb_id: kb,
              file_id: "file-1",
              seq: start + index,
              line_start: start + index + 1,
              line_end: start + index + 1,
              text: `chunk ${start + index}`,
            })),
          )
          .returning("id")
          .execute();
        ids.push(...rows.map((row) => Number(row.id)));
      }
      const store = new VectorStore(database);
      expect(
        await store.write(
          kb,
          key,
          64,
          vectors.map((vector, index) => ({ chunkId: ids[index] as number, vector })),
        ),
      ).toBe(true);

      const exactNearest = (query: Float32Array, k: number) =>
        vectors
          .map((vector, index) => ({
            id: ids[index] as number,
            distance: 1 - vector.reduce((sum, value, i) => sum + value * (query[i] as number), 0),
          }))
          .sort((a, b) => a.distance - b.distance)
          .slice(0, k)
          .map((hit) => hit.id);
      let found = 0;
      const queries = randomVectors(20, 64, 99);
      for (const query of queries) {
        const hits = await store.nearest({
          kbs: [{ id: kb, version: 1 }],
          key,
          vector: query,
          limit: 10,
        });
        expect(hits).toHaveLength(10);
        // Ranked by the exact distance, whatever the bits said.
        expect(hits.map((hit) => hit.distance)).toEqual(
          [...hits.map((hit) => hit.distance)].sort((a, b) => a - b),
        );
        const exact = new Set(exactNearest(query, 10));
        found += hits.filter((hit) => exact.has(hit.id)).length;
      }
      // 256 candidates of 3,000 by Hamming distance hold most of the exact 10 (0.895 with these
      // seeds, random queries far from every vector being the hard case)
      // (a random choice of 256 would hold about 0.09 of them, as would wrong bits).
      expect(found / (queries.length * 10)).toBeGreaterThan(0.8);
    } finally {
      await database.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
