/**
 * Chunk vectors on either engine (sqlite-vec on SQLite, `kb_chunk_vectors` and an in-process
 * scan on PostgreSQL), and the one rule that keeps vectors of two models apart: every write of
 * vectors, the end of a file's embedding and a change of a knowledge base's embedder happen in a
 * transaction that holds the knowledge base's row and compares the embedder that made the
 * vectors with the one it has now. A writer whose embedder was replaced meanwhile writes
 * nothing; the change itself drops every vector and queues the files again.
 */

import { type Kysely, sql, type Transaction } from "kysely";
import type { Database, DialectName } from "../store/database.js";
import type { DatabaseSchema } from "../store/schema.js";
import { activeEmbedder, embedderKey } from "./embedder.js";
import {
  deletePostgresVectors,
  postgresVectorSource,
  writePostgresVectors,
} from "./postgres-vectors.js";
import { embedderSchema } from "./schema.js";
import {
  type ChunkVector,
  deleteSqliteVectors,
  sqliteVectorKeys,
  sqliteVectorSource,
  writeSqliteVectors,
} from "./sqlite-vectors.js";
import { VectorCache, type VectorHit } from "./vector-cache.js";

type Executor = Kysely<DatabaseSchema> | Transaction<DatabaseSchema>;

/**
 * The embedder key knowledge base `kbId` has now (undefined: none, or the knowledge base is
 * gone), its row locked until the transaction ends on PostgreSQL (SQLite's transactions run
 * one at a time anyway).
 */
export async function lockedEmbedderKey(
  trx: Transaction<DatabaseSchema>,
  dialect: DialectName,
  kbId: string,
): Promise<string | undefined> {
  const lock = dialect === "postgres" ? sql` for update` : sql``;
  const { rows } = await sql<{ embedder: string }>`
    select embedder from knowledge_bases where id = ${kbId}${lock}`.execute(trx);
  const row = rows[0];
  if (row === undefined) return undefined;
  const parsed = embedderSchema.safeParse(JSON.parse(row.embedder));
  const active = parsed.success ? activeEmbedder(parsed.data) : undefined;
  return active === undefined ? undefined : embedderKey(active);
}

/** Removes the vectors of the chunks of a knowledge base or of a file. */
export function deleteVectorsWhere(
  db: Executor,
  dialect: DialectName,
  where: { kbId: string } | { fileId: string },
): Promise<void> {
  return dialect === "postgres" ? deletePostgresVectors(db, where) : deleteSqliteVectors(db, where);
}

/**
 * After a knowledge base's embedder changed (inside that update's transaction): its vectors go,
 * and its indexed files wait for new ones (`pending`), or have none to wait for.
 */
export async function resetVectors(
  trx: Transaction<DatabaseSchema>,
  dialect: DialectName,
  kbId: string,
  embedded: boolean,
): Promise<void> {
  await deleteVectorsWhere(trx, dialect, { kbId });
  await trx
    .updateTable("kb_files")
    .set({ vectors: embedded ? "pending" : "none", vectors_error: null })
    .where("kb_id", "=", kbId)
    .where("status", "in", ["indexed", "indexing"])
    .execute();
}

/** Writing and finding vectors of one database. */
export class VectorStore {
  readonly #database: Database;
  readonly #cache: VectorCache;

  constructor(database: Database) {
    this.#database = database;
    this.#cache = new VectorCache(
      database.dialect === "postgres" ? postgresVectorSource : sqliteVectorSource,
    );
  }

  /**
   * Stores `vectors` made by the embedder `key` for chunks of `kbId`, unless the knowledge base
   * no longer has that embedder (or is gone). Chunks deleted meanwhile are skipped.
   * @returns false when nothing was written because the embedder changed.
   */
  async write(
    kbId: string,
    key: string,
    dimensions: number,
    vectors: readonly ChunkVector[],
  ): Promise<boolean> {
    const { db, dialect } = this.#database;
    return db.transaction().execute(async (trx) => {
      if ((await lockedEmbedderKey(trx, dialect, kbId)) !== key) return false;
      if (vectors.length === 0) return true;
      const live = await trx
        .selectFrom("kb_chunks")
        .select("id")
        .where(
          "id",
          "in",
          vectors.map((entry) => entry.chunkId),
        )
        .execute();
      const ids = new Set(live.map((row) => Number(row.id)));
      const kept = vectors.filter((entry) => ids.has(entry.chunkId));
      if (dialect === "postgres") await writePostgresVectors(trx, kbId, key, kept);
      else await writeSqliteVectors(trx, kbId, key, dimensions, kept);
      return true;
    });
  }

  /**
   * The `limit` chunks of knowledge bases `kbs` nearest `vector` (made by the embedder `key`),
   * among indexed files (and `fileIds` when given), nearest first.
   */
  async nearest(search: {
    kbs: readonly { id: string; version: number }[];
    key: string;
    vector: Float32Array;
    limit: number;
    fileIds?: readonly string[] | undefined;
  }): Promise<VectorHit[]> {
    const { db } = this.#database;
    const { key, vector, limit, fileIds } = search;
    const hits: VectorHit[] = [];
    for (const kb of search.kbs) {
      hits.push(
        ...(await this.#cache.nearest(db, {
          kbId: kb.id,
          version: kb.version,
          key,
          vector,
          limit,
          fileIds,
        })),
      );
    }
    return hits.sort((a, b) => a.distance - b.distance || a.id - b.id).slice(0, limit);
  }

  /** How many vectors of `kbId` each embedder made (a check that they are never mixed). */
  async keysOf(kbId: string): Promise<Map<string, number>> {
    const { db, dialect } = this.#database;
    if (dialect === "sqlite") return sqliteVectorKeys(db, kbId);
    const rows = await db
      .selectFrom("kb_chunk_vectors")
      .select(["embedder_key", (eb) => eb.fn.countAll<number>().as("n")])
      .where("kb_id", "=", kbId)
      .groupBy("embedder_key")
      .execute();
    return new Map(rows.map((row) => [row.embedder_key, Number(row.n)]));
  }
}
