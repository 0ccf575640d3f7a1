/**
 * Files of knowledge bases and their ingest state, in the shared database. The uploaded bytes
 * are stored with the file, so a file queued when a process stops is indexed by the next one,
 * and the state a client reads (`queued`, `indexing`, `indexed`, `error`) is the store's, never
 * a process's memory. Visibility is the caller's business (`KnowledgeBases`): this class is
 * handed knowledge base ids already checked.
 */

import { createHash, randomUUID } from "node:crypto";
import type { Kysely } from "kysely";
import type { Database } from "../store/database.js";
import { clockOf, type RepositoryOptions } from "../store/repository-options.js";
import type { DatabaseSchema } from "../store/schema.js";
import { isUniqueViolation } from "../store/sql-errors.js";
import { claimOldestFile, type FileQueue, INDEX_QUEUE, vectorsQueue } from "./file-leases.js";
import type { FileFormat } from "./formats.js";
import { deleteChunksWhere, insertChunks, type NewChunk } from "./fts.js";
import { fromFileRow, fromKbRow } from "./rows.js";
import type { EmbedderSettings, KbFileRecord } from "./schema.js";
import { deleteVectorsWhere, lockedEmbedderKey } from "./vector-store.js";

/** A file claimed for indexing, with what the indexer needs. */
export interface ClaimedFile {
  file: KbFileRecord;
  content: Uint8Array;
}

/** The result of {@link KbFileStore.add}: the file, and whether this call stored it. */
export interface AddedFile {
  file: KbFileRecord;
  /** False when the knowledge base already had a file with the same bytes (nothing changed). */
  created: boolean;
}

/** Reads and writes `kb_files`, `kb_file_contents` and (through `fts.ts`) `kb_chunks`. */
export class KbFileStore {
  readonly #db: Kysely<DatabaseSchema>;
  readonly #database: Database;
  readonly #now: () => Date;
  readonly #embedQueue: FileQueue;

  constructor(database: Database, options: RepositoryOptions = {}) {
    this.#database = database;
    this.#db = database.db;
    this.#now = clockOf(options);
    this.#embedQueue = vectorsQueue(database.dialect);
  }

  /**
   * Stores a file as `queued`, or returns the knowledge base's file with the same bytes
   * (whatever its name or status) without changing anything.
   */
  async add(
    kbId: string,
    name: string,
    format: FileFormat,
    content: Uint8Array,
  ): Promise<AddedFile> {
    const hash = createHash("sha256").update(content).digest("hex");
    const existing = await this.#byHash(kbId, hash);
    if (existing) return { file: existing, created: false };
    const now = this.#now().toISOString();
    const row = {
      id: randomUUID(),
      kb_id: kbId,
      name,
      content_hash: hash,
      bytes: content.length,
      format,
      status: "queued",
      error: null,
      lease_until: null,
      created_at: now,
      updated_at: now,
    };
    try {
      await this.#db.transaction().execute(async (trx) => {
        await trx.insertInto("kb_files").values(row).execute();
        await trx
          .insertInto("kb_file_contents")
          .values({ file_id: row.id, content: Buffer.from(content).toString("base64"), text: null })
          .execute();
      });
    } catch (error) {
      // Another upload of the same bytes won the race: that one is the file.
      const raced = isUniqueViolation(error) ? await this.#byHash(kbId, hash) : undefined;
      if (raced) return { file: raced, created: false };
      throw error;
    }
    return {
      file: {
        ...row,
        status: "queued",
        chunk_count: 0,
        line_count: 0,
        vectors: "none",
        vectors_error: null,
      },
      created: true,
    };
  }

  /** The files of a knowledge base, oldest first. */
  async list(kbId: string): Promise<KbFileRecord[]> {
    const rows = await this.#db
      .selectFrom("kb_files")
      .selectAll()
      .where("kb_id", "=", kbId)
      .orderBy("created_at")
      .orderBy("id")
      .execute();
    return rows.map(fromFileRow);
  }

  /** Files of these knowledge bases, by id, for naming search hits. */
  async byIds(ids: readonly string[]): Promise<Map<string, KbFileRecord>> {
    if (ids.length === 0) return new Map();
    const rows = await this.#db
      .selectFrom("kb_files")
      .selectAll()
      .where("id", "in", [...new Set(ids)])
      .execute();
    return new Map(rows.map((row) => [row.id, fromFileRow(row)]));
  }

  /** The file `fileId` of knowledge base `kbId`, or undefined. */
  async get(kbId: string, fileId: string): Promise<KbFileRecord | undefined> {
    const row = await this.#db
      .selectFrom("kb_files")
      .selectAll()
      .where("kb_id", "=", kbId)
      .where("id", "=", fileId)
      .executeTakeFirst();
    return row === undefined ? undefined : fromFileRow(row);
  }

  /** Ids of the files of these knowledge bases whose name is `name`. */
  async idsByName(kbIds: readonly string[], name: string): Promise<string[]> {
    if (kbIds.length === 0) return [];
    const rows = await this.#db
      .selectFrom("kb_files")
      .select("id")
      .where("kb_id", "in", [...kbIds])
      .where("name", "=", name)
      .execute();
    return rows.map((row) => row.id);
  }

  /** The extracted text of an indexed file, or undefined before it is parsed. */
  async text(fileId: string): Promise<string | undefined> {
    const row = await this.#db
      .selectFrom("kb_file_contents")
      .select("text")
      .where("file_id", "=", fileId)
      .executeTakeFirst();
    return row?.text ?? undefined;
  }

  /** Deletes a file with its bytes and chunks; false when there was none. */
  async delete(kbId: string, fileId: string): Promise<boolean> {
    return this.#db.transaction().execute(async (trx) => {
      const found = await trx
        .selectFrom("kb_files")
        .select("id")
        .where("kb_id", "=", kbId)
        .where("id", "=", fileId)
        .executeTakeFirst();
      if (!found) return false;
      await deleteChunksWhere(trx, this.#database.dialect, { fileId });
      await trx.deleteFrom("kb_file_contents").where("file_id", "=", fileId).execute();
      await trx.deleteFrom("kb_files").where("id", "=", fileId).execute();
      return true;
    });
  }

  /**
   * Claims the oldest file waiting for indexing: `queued`, or `indexing` with a lapsed lease
   * (its process died). The conditional update makes each file one process's, also when several
   * share the database.
   */
  async claimNext(leaseMs: number): Promise<ClaimedFile | undefined> {
    const id = await claimOldestFile(this.#database, INDEX_QUEUE, leaseMs, this.#now());
    if (id === undefined) return undefined;
    const row = await this.#db
      .selectFrom("kb_files")
      .innerJoin("kb_file_contents", "kb_file_contents.file_id", "kb_files.id")
      .selectAll("kb_files")
      .select("kb_file_contents.content")
      .where("kb_files.id", "=", id)
      .executeTakeFirst();
    if (!row) return undefined;
    const { content, ...file } = row;
    return { file: fromFileRow(file), content: Buffer.from(content, "base64") };
  }

  /** Extends the lease of a file being indexed; false when it is no longer this indexer's. */
  async renewLease(fileId: string, leaseMs: number): Promise<boolean> {
    const now = this.#now();
    const result = await this.#db
      .updateTable("kb_files")
      .set({ lease_until: new Date(now.getTime() + leaseMs).toISOString() })
      .where("id", "=", fileId)
      .where("status", "=", "indexing")
      .executeTakeFirst();
    return result.numUpdatedRows === 1n;
  }

  /** Starts a file's index afresh: its old chunks go, its extracted text is stored. */
  async beginIndex(fileId: string, text: string): Promise<void> {
    await this.#db.transaction().execute(async (trx) => {
      await deleteChunksWhere(trx, this.#database.dialect, { fileId });
      await trx
        .updateTable("kb_file_contents")
        .set({ text })
        .where("file_id", "=", fileId)
        .execute();
    });
  }

  /**
   * Adds one batch of a file's chunks (search shows them once the file is `indexed`).
   * @returns their ids, in order.
   */
  addChunks(chunks: readonly NewChunk[]): Promise<number[]> {
    return this.#db
      .transaction()
      .execute((trx) => insertChunks(trx, this.#database.dialect, chunks));
  }

  /**
   * Marks a file searchable. `embeddedWith` is the embedder whose vectors it now has (every
   * chunk's), undefined for none: when the knowledge base has that embedder still, its vectors
   * are `ready`; when it has another, they are dropped and the file waits for new ones
   * (`pending`); with no embedder, `none`.
   */
  async markIndexed(
    file: { id: string; kb_id: string },
    counts: { chunks: number; lines: number },
    embeddedWith: string | undefined,
  ): Promise<void> {
    const { dialect } = this.#database;
    await this.#db.transaction().execute(async (trx) => {
      const current = await lockedEmbedderKey(trx, dialect, file.kb_id);
      const vectors =
        current === undefined ? "none" : current === embeddedWith ? "ready" : "pending";
      if (vectors !== "ready") await deleteVectorsWhere(trx, dialect, { fileId: file.id });
      await trx
        .updateTable("kb_files")
        .set({
          status: "indexed",
          chunk_count: counts.chunks,
          line_count: counts.lines,
          error: null,
          vectors,
          vectors_error: null,
          lease_until: null,
          updated_at: this.#now().toISOString(),
        })
        .where("id", "=", file.id)
        .execute();
    });
  }

  /** The embedder settings of knowledge base `kbId` now (undefined when it is gone). */
  async embedderOf(kbId: string): Promise<EmbedderSettings | undefined> {
    const row = await this.#db
      .selectFrom("knowledge_bases")
      .selectAll()
      .where("id", "=", kbId)
      .executeTakeFirst();
    return row === undefined ? undefined : fromKbRow(row).embedder;
  }

  /**
   * Claims the oldest indexed file waiting for vectors (`pending`, or `embedding` with a lapsed
   * lease): a reindex after an embedder change. Its old vectors, if any, are dropped.
   */
  async claimEmbedding(leaseMs: number): Promise<KbFileRecord | undefined> {
    const id = await claimOldestFile(this.#database, this.#embedQueue, leaseMs, this.#now());
    if (id === undefined) return undefined;
    const row = await this.#db
      .selectFrom("kb_files")
      .selectAll()
      .where("id", "=", id)
      .executeTakeFirst();
    return row === undefined ? undefined : fromFileRow(row);
  }

  /** Up to `limit` chunks of a file after position `afterSeq`, in order (for re-embedding). */
  chunksAfter(
    fileId: string,
    afterSeq: number,
    limit: number,
  ): Promise<{ id: number; seq: number; text: string }[]> {
    return this.#db
      .selectFrom("kb_chunks")
      .select(["id", "seq", "text"])
      .where("file_id", "=", fileId)
      .where("seq", ">", afterSeq)
      .orderBy("seq")
      .limit(limit)
      .execute();
  }

  /** Extends the lease of a file whose vectors this process makes; false when no longer so. */
  async renewEmbeddingLease(fileId: string, leaseMs: number): Promise<boolean> {
    const result = await this.#db
      .updateTable("kb_files")
      .set({ lease_until: new Date(this.#now().getTime() + leaseMs).toISOString() })
      .where("id", "=", fileId)
      .where("vectors", "=", "embedding")
      .executeTakeFirst();
    return result.numUpdatedRows === 1n;
  }

  /**
   * Ends a re-embedding: `ready` when the knowledge base still has the embedder `key`, `none`
   * when it has none any more; else (another embedder since) nothing changes, the change having
   * queued the file again.
   */
  async finishEmbedding(
    file: { id: string; kb_id: string },
    key: string | undefined,
  ): Promise<void> {
    const { dialect } = this.#database;
    await this.#db.transaction().execute(async (trx) => {
      const current = await lockedEmbedderKey(trx, dialect, file.kb_id);
      if (current !== undefined && current !== key) return;
      await trx
        .updateTable("kb_files")
        .set({
          vectors: current === undefined ? "none" : "ready",
          vectors_error: null,
          lease_until: null,
        })
        .where("id", "=", file.id)
        .where("vectors", "=", "embedding")
        .execute();
    });
  }

  /**
   * Records why a file's re-embedding failed (it stays searchable by its words). With no
   * message, the file goes back to waiting (a graceful stop).
   */
  async embeddingFailed(fileId: string, message: string | undefined): Promise<void> {
    await this.#db.transaction().execute(async (trx) => {
      await deleteVectorsWhere(trx, this.#database.dialect, { fileId });
      await trx
        .updateTable("kb_files")
        .set({
          vectors: message === undefined ? "pending" : "error",
          vectors_error: message ?? null,
          lease_until: null,
        })
        .where("id", "=", fileId)
        .where("vectors", "=", "embedding")
        .execute();
    });
  }

  /** Marks a file failed, keeping why; its chunks (if any were written) are removed. */
  async markError(fileId: string, message: string): Promise<void> {
    await this.#db.transaction().execute(async (trx) => {
      await deleteChunksWhere(trx, this.#database.dialect, { fileId });
      await trx
        .updateTable("kb_files")
        .set({
          status: "error",
          error: message,
          chunk_count: 0,
          lease_until: null,
          updated_at: this.#now().toISOString(),
        })
        .where("id", "=", fileId)
        .execute();
    });
  }

  /** Puts a file this process was indexing back in the queue (a graceful stop). */
  async requeue(fileId: string): Promise<void> {
    await this.#db
      .updateTable("kb_files")
      .set({ status: "queued", lease_until: null, updated_at: this.#now().toISOString() })
      .where("id", "=", fileId)
      .where("status", "=", "indexing")
      .execute();
  }

  async #byHash(kbId: string, hash: string): Promise<KbFileRecord | undefined> {
    const row = await this.#db
      .selectFrom("kb_files")
      .selectAll()
      .where("kb_id", "=", kbId)
      .where("content_hash", "=", hash)
      .executeTakeFirst();
    return row === undefined ? undefined : fromFileRow(row);
  }
}
