/**
 * Chunk vectors on SQLite, in two parts:
 * - the vectors as they are, float32 blobs in `kb_vector_floats` (`chunk_id` the key);
 * - their sign bits in sqlite-vec `vec0` tables (the extension is loaded where the database is
 *   opened, `store/database.ts`), one per vector length, `kb_vecbit_<dimensions>`, with `kb_id`
 *   as partition key (a search of some knowledge bases reads only theirs) and the embedder that
 *   made each vector beside it.
 * A search finds candidates by Hamming distance over the bits (1 bit per dimension instead of
 * 32: ~4× faster than an exact float scan at 24k vectors, `bench/README.md`), then ranks them
 * by exact cosine distance over their floats. Tables are made the first time a knowledge base
 * of that length writes; `store/migrations.ts` (0010) moved the float `vec0` tables of earlier
 * versions into this layout.
 */

import { type Kysely, sql, type Transaction } from "kysely";
import { ErrorCode, SubagentGraphError } from "../errors.js";
import type { DatabaseSchema } from "../store/schema.js";
import { cosineDistance, signBits } from "../util/vector-bits.js";

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

const TABLE = /^kb_vecbit_(\d+)$/;

/**
 * Candidates the bit search returns per result wanted, and at least: measured on 119k chunks
 * of 384 dimensions, 8 per result kept 89% of the exact 30 nearest (`bench/README.md`).
 */
const OVERSAMPLE = 8;
const MIN_CANDIDATES = 256;

function tableName(dimensions: number): string {
  if (!Number.isInteger(dimensions) || dimensions < 1 || dimensions > 8192) {
    throw new Error(`vector length ${dimensions} out of range`);
  }
  return `kb_vecbit_${dimensions}`;
}

/** The `vec0` bit tables that exist. */
async function vectorTables(db: Executor): Promise<string[]> {
  const { rows } = await sql<{ name: string }>`
    select name from sqlite_master where type = 'table' and name like 'kb_vecbit_%'`.execute(db);
  return rows.map((row) => row.name).filter((name) => TABLE.test(name));
}

async function ensureTables(db: Executor, dimensions: number): Promise<string> {
  const name = tableName(dimensions);
  const bits = Math.ceil(dimensions / 8) * 8;
  try {
    await sql`create virtual table if not exists ${sql.id(name)} using vec0(kb_id text partition key, embedding bit[${sql.raw(String(bits))}], +embedder_key text)`.execute(
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
  await sql`create table if not exists kb_vector_floats (chunk_id integer primary key, embedding blob not null)`.execute(
    db,
  );
  return name;
}

const blobOf = (vector: Float32Array) =>
  Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength);
/** The sign bits as better-sqlite3 binds a blob (a Buffer). */
const bitsBlob = (vector: Float32Array) => Buffer.from(signBits(vector));

/** Stores vectors of chunks of knowledge base `kbId`, made by the embedder `key`. */
export async function writeSqliteVectors(
  db: Executor,
  kbId: string,
  key: string,
  dimensions: number,
  vectors: readonly ChunkVector[],
): Promise<void> {
  if (vectors.length === 0) return;
  const table = await ensureTables(db, dimensions);
  const bitRows = vectors.map(
    ({ chunkId, vector }) =>
      // rowid as a BigInt: better-sqlite3 binds other numbers as floats, which vec0 refuses.
      sql`(${BigInt(chunkId)}, ${kbId}, ${key}, vec_bit(${bitsBlob(vector)}))`,
  );
  await sql`insert into ${sql.id(table)} (rowid, kb_id, embedder_key, embedding) values ${sql.join(bitRows)}`.execute(
    db,
  );
  const floatRows = vectors.map(({ chunkId, vector }) => sql`(${chunkId}, ${blobOf(vector)})`);
  await sql`insert or replace into kb_vector_floats (chunk_id, embedding) values ${sql.join(floatRows)}`.execute(
    db,
  );
}

/** Removes the vectors of the chunks of a knowledge base or of a file, of every length. */
export async function deleteSqliteVectors(
  db: Executor,
  where: { kbId: string } | { fileId: string },
): Promise<void> {
  const [column, value] = "kbId" in where ? ["kb_id", where.kbId] : ["file_id", where.fileId];
  const tables = await vectorTables(db);
  for (const table of tables) {
    await sql`delete from ${sql.id(table)} where rowid in (select id from kb_chunks where ${sql.ref(column)} = ${value})`.execute(
      db,
    );
  }
  if (tables.length > 0) {
    await sql`delete from kb_vector_floats where chunk_id in (select id from kb_chunks where ${sql.ref(column)} = ${value})`.execute(
      db,
    );
  }
}

/**
 * The `limit` chunks of knowledge bases `kbIds` nearest `vector` among those the embedder `key`
 * made (of `indexed` files, of `fileIds` when given), nearest first by cosine distance. One KNN
 * statement over the bits (vec0 answers `kb_id in (…)`), then one read of the candidates'
 * floats with their files checked.
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
  // A file filter is applied after the candidates are found: ask for more in that case.
  const wanted = search.fileIds === undefined ? search.limit : search.limit * 4 + 32;
  const k = Math.max(MIN_CANDIDATES, wanted * OVERSAMPLE);
  // The KNN query alone (vec0 takes no other ORDER BY), then the candidates' floats and files.
  const { rows } = await sql<{ id: number; embedder_key: string }>`
    select rowid as id, embedder_key from ${sql.id(table)}
    where embedding match vec_bit(${bitsBlob(search.vector)}) and k = ${k}
    and kb_id in (${sql.join(search.kbIds)})`.execute(db);
  const candidates = rows.filter((row) => row.embedder_key === search.key);
  if (candidates.length === 0) return [];
  // CROSS JOIN keeps SQLite's join order (candidates, their chunks, their files): left to
  // itself, without statistics, it started from every indexed file's chunks (20-30 ms at 119k
  // chunks instead of 1).
  const { rows: floats } = await sql<{ id: number; embedding: Uint8Array }>`
    select v.chunk_id as id, v.embedding from kb_vector_floats v
    cross join kb_chunks c on c.id = v.chunk_id
    cross join kb_files f on f.id = c.file_id
    where v.chunk_id in (${sql.join(candidates.map((row) => Number(row.id)))})
    and f.status = 'indexed' and ${fileFilter}`.execute(db);
  return floats
    .map((row) => ({
      id: Number(row.id),
      distance: cosineDistance(search.vector, floatsOf(row.embedding)),
    }))
    .sort((a, b) => a.distance - b.distance || a.id - b.id)
    .slice(0, search.limit);
}

/** A stored float32 blob as a vector (copied when the driver's buffer is not 4-byte aligned). */
function floatsOf(blob: Uint8Array): Float32Array {
  if (blob.byteOffset % 4 === 0) {
    return new Float32Array(blob.buffer, blob.byteOffset, blob.byteLength / 4);
  }
  return new Float32Array(new Uint8Array(blob).buffer);
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
