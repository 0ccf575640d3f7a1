/**
 * Chunk vectors on PostgreSQL without pgvector (not packaged for this machine's Debian): the
 * vectors live in `kb_chunk_vectors` as base64 float32 text, and a search scans a knowledge
 * base's vectors held in this process's memory (`vector-cache.ts`), loaded again when its
 * vectors change (their count or newest chunk id, read with each search: cheap, and it catches
 * writes of other processes too).
 */

import { type Kysely, sql, type Transaction } from "kysely";
import type { DatabaseSchema } from "../store/schema.js";
import type { ChunkVector } from "./sqlite-vectors.js";
import type { VectorSource } from "./vector-cache.js";

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

/** Where the shared {@link VectorCache} scan reads PostgreSQL's vectors. */
export const postgresVectorSource: VectorSource = {
  async stamp(db, kbId, key) {
    const { rows } = await sql<{ n: number; newest: number }>`
      select count(*)::integer as n, coalesce(max(chunk_id), 0) as newest
      from kb_chunk_vectors where kb_id = ${kbId} and embedder_key = ${key}`.execute(db);
    return JSON.stringify([rows[0]?.n ?? 0, Number(rows[0]?.newest ?? 0)]);
  },
  async load(db, kbId, key) {
    const stored = await db
      .selectFrom("kb_chunk_vectors")
      .select(["chunk_id", "embedding"])
      .where("kb_id", "=", kbId)
      .where("embedder_key", "=", key)
      .execute();
    return stored.map((row) => {
      const bytes = Buffer.from(row.embedding, "base64");
      return {
        id: Number(row.chunk_id),
        vector: new Float32Array(bytes.buffer, bytes.byteOffset, bytes.length / 4),
      };
    });
  },
  async live(db, ids, fileIds) {
    const fileFilter =
      fileIds === undefined ? sql`1 = 1` : sql`c.file_id in (${sql.join(fileIds)})`;
    const { rows } = await sql<{ id: number }>`
      select c.id from kb_chunks c join kb_files f on f.id = c.file_id and f.status = 'indexed'
      where c.id in (${sql.join(ids)}) and ${fileFilter}`.execute(db);
    return new Set(rows.map((row) => Number(row.id)));
  },
};
