/**
 * Thread ownership: which user a thread id belongs to.
 *
 * Thread ids are chosen by clients, so a thread id alone proves nothing. The first user to
 * claim an id owns it; for everyone else it does not exist (never "forbidden", which would
 * confirm that someone else's thread is there).
 */

import type { Kysely, Selectable } from "kysely";
import { ErrorCode, SubagentGraphError } from "../errors.js";
import { compareText, hasNul } from "./portable-text.js";
import { clockOf, type RepositoryOptions } from "./repository-options.js";
import type { DatabaseSchema, ThreadsTable } from "./schema.js";

/** A thread's ownership row. */
export type ThreadRecord = Selectable<ThreadsTable>;

/** Reads and writes `threads`. */
export class ThreadRepository {
  readonly #db: Kysely<DatabaseSchema>;
  readonly #now: () => Date;

  constructor(db: Kysely<DatabaseSchema>, options: RepositoryOptions = {}) {
    this.#db = db;
    this.#now = clockOf(options);
  }

  /**
   * Records `uid` as the owner of `threadId` unless the thread is already owned, and returns the
   * stored row. Claiming one's own thread again returns it unchanged (its `agent_id` stays the
   * one it was started with).
   *
   * Race-safe: two concurrent claims both insert with "on conflict do nothing" and then read the
   * single winner back.
   *
   * @throws SubagentGraphError `INVALID_THREAD_ID` for an empty id or one containing NUL;
   *   `NOT_FOUND` when another user owns the thread.
   */
  async claim(uid: string, threadId: string, agentId: string): Promise<ThreadRecord> {
    if (threadId === "") throw invalidThreadId(threadId);
    checkStorable(threadId);
    const now = this.#now().toISOString();
    const created = await this.#db
      .insertInto("threads")
      .values({
        thread_id: threadId,
        owner_uid: uid,
        agent_id: agentId,
        metadata: "{}",
        created_at: now,
        updated_at: now,
      })
      .onConflict((conflict) => conflict.column("thread_id").doNothing())
      // The new row, or none when the id existed (anyone's, so it is read below as `uid`'s).
      .returningAll()
      .executeTakeFirst();
    if (created) return created;
    const row = await this.get(uid, threadId);
    if (row === undefined) throw threadNotFound(threadId);
    if (row.agent_id !== "") return row;
    // Created without a run (`create`): the first run binds its agent.
    await this.#db
      .updateTable("threads")
      .set({ agent_id: agentId, updated_at: now })
      .where("thread_id", "=", threadId)
      .where("agent_id", "=", "")
      .where("deleted_at", "is", null)
      .execute();
    return (await this.get(uid, threadId)) ?? row;
  }

  /**
   * Creates a thread for `uid` with no agent yet (a run binds one) and client `metadata`.
   * Returns the row and whether it was created now; an id that exists already (the caller's or
   * anyone's) is not touched and comes back as `created: false` with the row when it is the
   * caller's, else `undefined`.
   *
   * @throws SubagentGraphError `INVALID_THREAD_ID` for an id containing NUL.
   */
  async create(
    uid: string,
    threadId: string,
    metadata: Record<string, unknown>,
  ): Promise<{ created: boolean; row: ThreadRecord | undefined }> {
    checkStorable(threadId);
    const now = this.#now().toISOString();
    const inserted = await this.#db
      .insertInto("threads")
      .values({
        thread_id: threadId,
        owner_uid: uid,
        agent_id: "",
        metadata: JSON.stringify(metadata),
        created_at: now,
        updated_at: now,
      })
      .onConflict((conflict) => conflict.column("thread_id").doNothing())
      .executeTakeFirst();
    const created = (inserted.numInsertedOrUpdatedRows ?? 0n) > 0n;
    return { created, row: await this.get(uid, threadId) };
  }

  /** Merges `metadata` into the thread's (keys set to `null` are removed). */
  async mergeMetadata(uid: string, threadId: string, metadata: Record<string, unknown>) {
    const row = await this.get(uid, threadId);
    if (row === undefined) throw threadNotFound(threadId);
    const merged: Record<string, unknown> = { ...metadataOf(row), ...metadata };
    for (const [key, value] of Object.entries(metadata)) if (value === null) delete merged[key];
    await this.#db
      .updateTable("threads")
      .set({ metadata: JSON.stringify(merged), updated_at: this.#now().toISOString() })
      .where("thread_id", "=", threadId)
      .execute();
  }

  /**
   * The thread's row, or `undefined` when it does not exist, belongs to another user or is being
   * deleted (unless `deleting` is set: then such a row is returned too, for finishing its
   * deletion).
   */
  async get(
    uid: string,
    threadId: string,
    options: { deleting?: boolean } = {},
  ): Promise<ThreadRecord | undefined> {
    // Such an id was never stored, and PostgreSQL refuses to compare it.
    if (hasNul(threadId)) return undefined;
    let query = this.#db
      .selectFrom("threads")
      .selectAll()
      .where("thread_id", "=", threadId)
      .where("owner_uid", "=", uid);
    if (!options.deleting) query = query.where("deleted_at", "is", null);
    return query.executeTakeFirst();
  }

  /**
   * Marks `uid`'s thread as being deleted (from now on {@link get}, {@link listForUser} and
   * {@link claim} no longer find it, and nobody can claim its id) and returns its row. A thread
   * whose deletion had begun already keeps its mark and is returned too, so a deletion cut short
   * can be finished.
   *
   * @returns undefined when `uid` has no such thread
   */
  async beginDeletion(uid: string, threadId: string): Promise<ThreadRecord | undefined> {
    if (hasNul(threadId)) return undefined;
    await this.#db
      .updateTable("threads")
      .set({ deleted_at: this.#now().toISOString() })
      .where("thread_id", "=", threadId)
      .where("owner_uid", "=", uid)
      .where("deleted_at", "is", null)
      .execute();
    return this.get(uid, threadId, { deleting: true });
  }

  /** Threads whose deletion began and has not finished (a process stopped half-way), oldest first. */
  async deleting(): Promise<ThreadRecord[]> {
    const rows = await this.#db
      .selectFrom("threads")
      .selectAll()
      .where("deleted_at", "is not", null)
      .execute();
    return rows.sort((a, b) => compareText(a.deleted_at ?? "", b.deleted_at ?? ""));
  }

  /**
   * Deletes the row of a thread marked by {@link beginDeletion}: the last step of a deletion,
   * after its data. A live thread's row is never deleted here.
   * @returns whether a row was deleted
   */
  async finishDeletion(threadId: string): Promise<boolean> {
    if (hasNul(threadId)) return false;
    const result = await this.#db
      .deleteFrom("threads")
      .where("thread_id", "=", threadId)
      .where("deleted_at", "is not", null)
      .executeTakeFirst();
    return Number(result.numDeletedRows) === 1;
  }

  /** Marks the thread as used now (`updated_at`). Does nothing for an unknown thread. */
  async touch(threadId: string): Promise<void> {
    if (hasNul(threadId)) return;
    await this.#db
      .updateTable("threads")
      .set({ updated_at: this.#now().toISOString() })
      .where("thread_id", "=", threadId)
      .execute();
  }

  /** The user's threads, most recently used first (ties by thread id, byte order). */
  async listForUser(uid: string): Promise<ThreadRecord[]> {
    const rows = await this.#db
      .selectFrom("threads")
      .selectAll()
      .where("owner_uid", "=", uid)
      .where("deleted_at", "is", null)
      .execute();
    // Sorted here, not in SQL: thread ids are free text, which PostgreSQL would order by the
    // database's collation and SQLite by bytes.
    return rows.sort(
      (a, b) => compareText(b.updated_at, a.updated_at) || compareText(a.thread_id, b.thread_id),
    );
  }
}

/** A row's metadata as an object (a damaged value reads as empty rather than failing). */
export function metadataOf(row: ThreadRecord): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(row.metadata);
    return typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)
      ? (parsed as Record<string, unknown>)
      : {};
  } catch {
    return {};
  }
}

/** Refuses a thread id that cannot be stored (NUL), alike on every database. */
function checkStorable(threadId: string): void {
  if (hasNul(threadId)) throw invalidThreadId(threadId);
}

function invalidThreadId(threadId: string): SubagentGraphError {
  return new SubagentGraphError(
    ErrorCode.InvalidThreadId,
    `thread id ${JSON.stringify(threadId.slice(0, 80))} is invalid: use a non-empty id without NUL characters (for example a UUID)`,
    { field: "thread_id" },
  );
}

function threadNotFound(threadId: string): SubagentGraphError {
  return new SubagentGraphError(
    ErrorCode.NotFound,
    `thread "${threadId}" not found: start a new thread or use one of your own thread ids`,
    { field: "thread_id" },
  );
}
