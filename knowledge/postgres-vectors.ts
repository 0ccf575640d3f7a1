/**
 * Chunk vectors on PostgreSQL without pgvector (not packaged for this machine's Debian): the
 * vectors live in `kb_chunk_vectors` as base64 float32 text, and a search scans a knowledge
 * base's vectors held in this process's memory, loaded once and loaded again when the
 * knowledge base's version or its vectors change (their count or newest chunk id, read with each
 * search: cheap, and it catches writes of other processes too).
 *
 * The scan is a dot product per vector (they are unit length): ~40 ms for 100k vectors of 384
 * dimensions on one core. Memory: 4 bytes per dimension per chunk of every knowledge base
 * searched.
 */

import { type Kysely, sql, type Transaction } from "kysely";
import type { DatabaseSchema } from "../store/schema.js";
import type { ChunkVector, VectorHit } from "./sqlite-vectors.js";

type Executor = Kysely<DatabaseSchema> | Transaction<DatabaseSchema>;

/** Stores vectors of chunks of knowledge base `kbId`, made by the embedder `key`. */
export async function writePostgresVectors(
  db: Executor,
  kbId: string,
  key: string,
  vectors: readonly ChunkVector[],
): Promise<void> {
  if (vectors.length === 0) return;
  await db
    .insertInto("kb_chunk_vectors")
    .values(
      vectors.map(({ chunkId, vector }) => ({
        chunk_id: chunkId,
        kb_id: kbId,
        embedder_key: key,
        embedding: Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength).toString(
          "base64",
        ),
      })),
    )
    .onConflict((oc) =>
      oc.column("chunk_id").doUpdateSet((eb) => ({
        kb_id: eb.ref("excluded.kb_id"),
        embedder_key: eb.ref("excluded.embedder_key"),
        embedding: eb.ref("excluded.embedding"),
      })),
    )
    .execute();
}

/** Removes the vectors of the chunks of a knowledge base or of a file. */
export async function deletePostgresVectors(
  db: Executor,
  where: { kbId: string } | { fileId: string },
): Promise<void> {
  if ("kbId" in where) {
    await db.deleteFrom("kb_chunk_vectors").where("kb_id", "=", where.kbId).execute();
    return;
  }
  await sql`delete from kb_chunk_vectors where chunk_id in (select id from kb_chunks where file_id = ${where.fileId})`.execute(
    db,
  );
}

interface Cached {
  stamp: string;
  ids: Int32Array;
  vectors: Float32Array;
  dimensions: number;
}

/** The vectors of each knowledge base searched by this process, as one flat array each. */
export class PostgresVectorCache {
  readonly #cache = new Map<string, Cached>();

  /**
   * The `limit` chunks of knowledge base `kbId` nearest `vector` among those the embedder `key`
   * made (of `indexed` files, of `fileIds` when given), nearest first.
   */
  async nearest(
    db: Executor,
    search: {
      kbId: string;
      version: number;
      key: string;
      vector: Float32Array;
      limit: number;
      fileIds?: readonly string[] | undefined;
    },
  ): Promise<VectorHit[]> {
    const cached = await this.#load(db, search.kbId, search.version, search.key);
    const dimensions = search.vector.length;
    if (cached.dimensions !== dimensions || cached.ids.length === 0) return [];
    const k = search.fileIds === undefined ? search.limit : search.limit * 4 + 32;
    const top = topByDot(cached, search.vector, k + 32);
    if (top.length === 0) return [];
    // Only chunks of files indexed now (and of the files asked for): a file deleted or being
    // reindexed since the vectors were loaded drops out.
    const fileFilter =
      search.fileIds === undefined
        ? sql`1 = 1`
        : search.fileIds.length === 0
          ? sql`1 = 0`
          : sql`c.file_id in (${sql.join(search.fileIds)})`;
    const { rows } = await sql<{ id: number }>`
      select c.id from kb_chunks c join kb_files f on f.id = c.file_id and f.status = 'indexed'
      where c.id in (${sql.join(top.map((hit) => hit.id))}) and ${fileFilter}`.execute(db);
    const live = new Set(rows.map((row) => Number(row.id)));
    return top.filter((hit) => live.has(hit.id)).slice(0, search.limit);
  }

  async #load(db: Executor, kbId: string, version: number, key: string): Promise<Cached> {
    const { rows } = await sql<{ n: number; newest: number }>`
      select count(*)::integer as n, coalesce(max(chunk_id), 0) as newest
      from kb_chunk_vectors where kb_id = ${kbId} and embedder_key = ${key}`.execute(db);
    const stamp = JSON.stringify([version, key, rows[0]?.n ?? 0, rows[0]?.newest ?? 0]);
    const hit = this.#cache.get(kbId);
    if (hit?.stamp === stamp) return hit;
    const stored = await db
      .selectFrom("kb_chunk_vectors")
      .select(["chunk_id", "embedding"])
      .where("kb_id", "=", kbId)
      .where("embedder_key", "=", key)
      .execute();
    const first = stored[0];
    const dimensions = first === undefined ? 0 : Buffer.from(first.embedding, "base64").length / 4;
    const ids = new Int32Array(stored.length);
    const vectors = new Float32Array(stored.length * dimensions);
    stored.forEach((row, index) => {
      const bytes = Buffer.from(row.embedding, "base64");
      ids[index] = Number(row.chunk_id);
      vectors.set(new Float32Array(bytes.buffer, bytes.byteOffset, dimensions), index * dimensions);
    });
    const loaded = { stamp, ids, vectors, dimensions };
    this.#cache.set(kbId, loaded);
    return loaded;
  }
}

/** The `k` cached vectors with the largest dot product with `query`, as cosine distances. */
function topByDot(cached: Cached, query: Float32Array, k: number): VectorHit[] {
  const { ids, vectors, dimensions } = cached;
  const best: VectorHit[] = [];
  let worst = Number.POSITIVE_INFINITY;
  for (let row = 0; row < ids.length; row += 1) {
    let dot = 0;
    const offset = row * dimensions;
    for (let i = 0; i < dimensions; i += 1) {
      dot += (vectors[offset + i] as number) * (query[i] as number);
    }
    const distance = 1 - dot;
    if (best.length < k || distance < worst) {
      best.push({ id: ids[row] as number, distance });
      if (best.length > k * 2) {
        best.sort(byDistance);
        best.length = k;
        worst = (best[k - 1] as VectorHit).distance;
      }
    }
  }
  return best.sort(byDistance).slice(0, k);
}

function byDistance(a: VectorHit, b: VectorHit): number {
  return a.distance - b.distance || a.id - b.id;
}
