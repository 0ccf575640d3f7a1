/**
 * Chunk vectors on SQLite: sqlite-vec `vec0` virtual tables (the extension is loaded where the
 * database is opened, `store/database.ts`), one per vector length, `kb_vec_<dimensions>`, made
 * the first time a knowledge base of that length writes. `rowid` is the chunk's id, `kb_id` the
 * partition key (a search of some knowledge bases reads only their vectors), and the embedder
 * that made each vector is kept beside it. Distances are cosine (0 = same direction).
 */

import { type Kysely, sql, type Transaction } from "kysely";
import { ErrorCode, SubagentGraphError } from "../errors.js";
import type { DatabaseSchema } from "../store/schema.js";

type Executor = Kysely<DatabaseSchema> | Transaction<DatabaseSchema>;

/** A chunk's vector to store. */
export interface ChunkVector {
  chunkId: number;
  vector: Float32Array;
}

/** A chunk near the query, with its cosine distance (smaller is nearer). */
export interface VectorHit {
  id: number;
  distance: number;
}

const TABLE = /^kb_vec_(\d+)$/;

function tableName(dimensions: number): string {
  if (!Number.isInteger(dimensions) || dimensions < 1 || dimensions > 8192) {
    throw new Error(`vector length ${dimensions} out of range`);
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
    const reason = error instanceof Error ? error.message : String(error);
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
 * The `limit` chunks of knowledge bases `kbIds` nearest `vector` among those the embedder `key`
 * made (of `indexed` files, of `fileIds` when given), nearest first. One KNN statement: vec0
 * answers `kb_id in (…)` with the `k` nearest of each partition.
 */
export async function nearestSqlite(
  db: Executor,
  search: {
    kbIds: readonly string[];
    key: string;
    vector: Float32Array;
    limit: number;
    fileIds?: readonly string[] | undefined;
  },
): Promise<VectorHit[]> {
  const table = tableName(search.vector.length);
  if (!(await vectorTables(db)).includes(table)) return [];
  if (search.kbIds.length === 0) return [];
  if (search.fileIds !== undefined && search.fileIds.length === 0) return [];
  const fileFilter =
    search.fileIds === undefined ? sql`1 = 1` : sql`c.file_id in (${sql.join(search.fileIds)})`;
  const blob = Buffer.from(
    search.vector.buffer,
    search.vector.byteOffset,
    search.vector.byteLength,
  );
  // A file filter is applied after the nearest are found: ask for more in that case.
  const k = search.fileIds === undefined ? search.limit : search.limit * 4 + 32;
  // The KNN query alone (vec0 takes no other ORDER BY), then the chunks' files checked.
  const { rows } = await sql<VectorHit & { embedder_key: string }>`
    select rowid as id, distance, embedder_key from ${sql.id(table)}
    where embedding match ${blob} and k = ${k} and kb_id in (${sql.join(search.kbIds)})`.execute(
    db,
  );
  const near = rows.filter((row) => row.embedder_key === search.key);
  if (near.length === 0) return [];
  // CROSS JOIN keeps SQLite's join order (the nearest chunks, then their files): left to
  // itself, without statistics, it started from every indexed file's chunks (20-30 ms at 119k
  // chunks instead of 1, bench/README.md).
  const { rows: live } = await sql<{ id: number }>`
    select c.id from kb_chunks c cross join kb_files f on f.id = c.file_id
    where c.id in (${sql.join(near.map((row) => Number(row.id)))})
    and f.status = 'indexed' and ${fileFilter}`.execute(db);
  const kept = new Set(live.map((row) => Number(row.id)));
  return near
    .map((row) => ({ id: Number(row.id), distance: Number(row.distance) }))
    .filter((hit) => kept.has(hit.id))
    .sort((a, b) => a.distance - b.distance || a.id - b.id)
    .slice(0, search.limit);
}

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
