/**
 * Chunk vectors on SQLite: sqlite-vec `vec0` virtual tables (the extension is loaded where the
 * database is opened, `store/database.ts`), one per vector length, `kb_vec_<dimensions>`, made
 * the first time a knowledge base of that length writes. `rowid` is the chunk's id, `kb_id` the
 * partition key (a knowledge base's vectors are read without the others'), and the embedder
 * that made each vector is kept beside it. Searches scan them in this process
 * (`vector-cache.ts`).
 */

import { type Kysely, sql, type Transaction } from "kysely";
import { ErrorCode, messageOf, SubagentGraphError } from "../errors.js";
import type { DatabaseSchema } from "../store/schema.js";
import type { VectorSource } from "./vector-cache.js";

type Executor = Kysely<DatabaseSchema> | Transaction<DatabaseSchema>;

/** A chunk's vector to store. */
export interface ChunkVector {
  chunkId: number;
  vector: Float32Array;
}

const TABLE = /^kb_vec_(\d+)$/;

function tableName(dimensions: number): string {
  if (!Number.isInteger(dimensions) || dimensions < 1 || dimensions > 8192) {
    throw new SubagentGraphError(
      ErrorCode.Validation,
      `dimensions: vector length ${dimensions} is out of range: use a whole number from 1 to 8192`,
      { field: "dimensions" },
    );
  }
  return `kb_vec_${dimensions}`;
}

/** The `vec0` tables that exist. */
async function vectorTables(db: Executor): Promise<string[]> {
  const { rows } = await sql<{ name: string }>`
    select name from sqlite_master where type = 'table' and name like 'kb_vec_%'`.execute(db);
  return rows.map((row) => row.name).filter((name) => TABLE.test(name));
}

async function ensureTable(db: Executor, dimensions: number): Promise<string> {
  const name = tableName(dimensions);
  try {
    await sql`create virtual table if not exists ${sql.id(name)} using vec0(kb_id text partition key, embedding float[${sql.raw(String(dimensions))}] distance_metric=cosine, +embedder_key text)`.execute(
      db,
    );
  } catch (error) {
    const reason = messageOf(error);
    throw new SubagentGraphError(
      ErrorCode.Internal,
      `cannot store vectors on SQLite (${reason}): the sqlite-vec extension did not load for this database; reinstall the sqlite-vec package for this platform, or remove the knowledge base's embedder for full-text search only`,
      { cause: error },
    );
  }
  return name;
}

/** Stores vectors of chunks of knowledge base `kbId`, made by the embedder `key`. */
export async function writeSqliteVectors(
  db: Executor,
  kbId: string,
  key: string,
  dimensions: number,
  vectors: readonly ChunkVector[],
): Promise<void> {
  if (vectors.length === 0) return;
  const table = await ensureTable(db, dimensions);
  const rows = vectors.map(
    ({ chunkId, vector }) =>
      // rowid as a BigInt: better-sqlite3 binds other numbers as floats, which vec0 refuses.
      sql`(${BigInt(chunkId)}, ${kbId}, ${key}, ${Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength)})`,
  );
  await sql`insert into ${sql.id(table)} (rowid, kb_id, embedder_key, embedding) values ${sql.join(rows)}`.execute(
    db,
  );
}

/** Removes the vectors of the chunks of a knowledge base or of a file, of every length. */
export async function deleteSqliteVectors(
  db: Executor,
  where: { kbId: string } | { fileId: string },
): Promise<void> {
  const [column, value] = "kbId" in where ? ["kb_id", where.kbId] : ["file_id", where.fileId];
  for (const table of await vectorTables(db)) {
    await sql`delete from ${sql.id(table)} where rowid in (select id from kb_chunks where ${sql.ref(column)} = ${value})`.execute(
      db,
    );
  }
}

/**
 * Where the shared {@link VectorCache} scan reads SQLite's vectors (the scan in this process is
 * faster than a `vec0` KNN statement, `vector-cache.ts`). The stamp is read from the files whose
 * vectors are complete: their vectors change only with their number, their chunks or their
 * times, and a knowledge base's embedder change bumps its version.
 */
export const sqliteVectorSource: VectorSource = {
  async stamp(db, kbId) {
    const { rows } = await sql<{ n: number; chunks: number; newest: string | null }>`
      select count(*) as n, coalesce(sum(chunk_count), 0) as chunks, max(updated_at) as newest
      from kb_files where kb_id = ${kbId} and vectors = 'ready'`.execute(db);
    const row = rows[0];
    return JSON.stringify([row?.n ?? 0, row?.chunks ?? 0, row?.newest ?? null]);
  },
  async load(db, kbId, key, dimensions) {
    const table = tableName(dimensions);
    if (!(await vectorTables(db)).includes(table)) return [];
    const { rows } = await sql<{ id: number; embedding: Uint8Array }>`
      select rowid as id, embedding from ${sql.id(table)}
      where kb_id = ${kbId} and embedder_key = ${key}`.execute(db);
    return rows.map((row) => {
      // A copy: the driver's buffer may not be aligned for float32s.
      const bytes = new Uint8Array(row.embedding);
      return { id: Number(row.id), vector: new Float32Array(bytes.buffer) };
    });
  },
  async live(db, ids, fileIds) {
    const fileFilter =
      fileIds === undefined ? sql`1 = 1` : sql`c.file_id in (${sql.join(fileIds)})`;
    // CROSS JOIN keeps SQLite's join order (the chunks found, then their files): left to itself,
    // without statistics, it started from every indexed file's chunks (20-30 ms at 119k chunks
    // instead of 1).
    const { rows } = await sql<{ id: number }>`
      select c.id from kb_chunks c cross join kb_files f on f.id = c.file_id
      where c.id in (${sql.join(ids)}) and f.status = 'indexed' and ${fileFilter}`.execute(db);
    return new Set(rows.map((row) => Number(row.id)));
  },
};

/** How many vectors of knowledge base `kbId` each embedder key has (for tests and checks). */
export async function sqliteVectorKeys(db: Executor, kbId: string): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  for (const table of await vectorTables(db)) {
    const { rows } = await sql<{ embedder_key: string; n: number }>`
      select embedder_key, count(*) as n from ${sql.id(table)} where kb_id = ${kbId}
      group by embedder_key`.execute(db);
    for (const row of rows) {
      counts.set(row.embedder_key, (counts.get(row.embedder_key) ?? 0) + Number(row.n));
    }
  }
  return counts;
}
