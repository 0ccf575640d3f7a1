/**
 * The two ingest queues over `kb_files` rows, claimed one way: files waiting for indexing, and
 * indexed files waiting for vectors after an embedder change. A claim takes the oldest waiting
 * row (a lapsed lease counts as waiting: its process died) and leases it, in one statement, so
 * each file is one process's also when several share the database. On PostgreSQL the candidate
 * is locked `FOR UPDATE SKIP LOCKED`, as the run queue's (`store/run-queue.ts`): indexers never
 * wait on each other's candidates; SQLite has one writer at a time, so the statement is atomic.
 */

import type { Expression, ExpressionBuilder, SqlBool, Transaction, Updateable } from "kysely";
import type { Database, DialectName } from "../store/database.js";
import type { DatabaseSchema } from "../store/schema.js";
import { deleteVectorsWhere } from "./vector-store.js";

type FilesTable = DatabaseSchema["kb_files"];

/** One queue over `kb_files`: which rows wait, and what a claim writes. */
export interface FileQueue {
  /** The rows waiting at `now` (ISO text), lapsed leases included. */
  waiting(eb: ExpressionBuilder<DatabaseSchema, "kb_files">, now: string): Expression<SqlBool>;
  /** The columns a claim sets, the lease lasting until `leaseUntil`. */
  claim(leaseUntil: string, now: string): Updateable<FilesTable>;
  /** Also done in the claim's transaction (e.g. dropping the file's old vectors). */
  onClaim?(trx: Transaction<DatabaseSchema>, fileId: string): Promise<void>;
}

/** Files waiting for indexing: `queued`, or `indexing` with a lapsed lease. */
export const INDEX_QUEUE: FileQueue = {
  waiting: (eb, now) =>
    eb.or([
      eb("status", "=", "queued"),
      eb.and([eb("status", "=", "indexing"), eb("lease_until", "<", now)]),
    ]),
  claim: (leaseUntil, now) => ({
    status: "indexing",
    lease_until: leaseUntil,
    error: null,
    updated_at: now,
  }),
};

/**
 * Indexed files waiting for vectors after an embedder change: `pending`, or `embedding` with a
 * lapsed lease. A claim drops the file's old vectors in its transaction.
 */
export function vectorsQueue(dialect: DialectName): FileQueue {
  return {
    waiting: (eb, now) =>
      eb.and([
        eb("status", "=", "indexed"),
        eb.or([
          eb("vectors", "=", "pending"),
          eb.and([eb("vectors", "=", "embedding"), eb("lease_until", "<", now)]),
        ]),
      ]),
    claim: (leaseUntil) => ({ vectors: "embedding", vectors_error: null, lease_until: leaseUntil }),
    onClaim: (trx, fileId) => deleteVectorsWhere(trx, dialect, { fileId }),
  };
}

/**
 * Claims the oldest row `queue` says is waiting, leased for `leaseMs` from `now`.
 *
 * @returns the claimed file's id, or undefined when none waits (or another process took the
 *   last one first)
 */
export function claimOldestFile(
  database: Pick<Database, "db" | "dialect">,
  queue: FileQueue,
  leaseMs: number,
  now: Date,
): Promise<string | undefined> {
  const nowText = now.toISOString();
  const leaseUntil = new Date(now.getTime() + leaseMs).toISOString();
  const locks = database.dialect === "postgres";
  return database.db.transaction().execute(async (trx) => {
    const claimed = await trx
      .updateTable("kb_files")
      .set(queue.claim(leaseUntil, nowText))
      .where("id", "=", (eb) =>
        eb
          .selectFrom("kb_files")
          .select("id")
          .where((waiting) => queue.waiting(waiting, nowText))
          .orderBy("created_at")
          .orderBy("id")
          .limit(1)
          .$if(locks, (select) => select.forUpdate().skipLocked()),
      )
      .returning("id")
      .executeTakeFirst();
    if (claimed && queue.onClaim) await queue.onClaim(trx, claimed.id);
    return claimed?.id;
  });
}
