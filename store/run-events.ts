/**
 * The events of runs, kept in the shared database so any process can stream or replay a run
 * that another process runs (`runs/run-event-log.ts` writes and follows them).
 *
 * A run's events are numbered from 0 in the order it sent them (the SSE `id`); the process
 * running it appends them in batches and, when the run is over, one more row: the end marker
 * ({@link RUN_END_EVENT}), which no client ever receives (its data: the run's final values when
 * it ended well, see `RunEnding` in `runs/run-event-log.ts`, else null). Rows are deleted with
 * their thread, and pruned once their run has been over for a while.
 */

import type { Kysely } from "kysely";
import { type Announcement, insertAnnounced } from "./announced-insert.js";
import { hasNul } from "./portable-text.js";
import type { DatabaseSchema } from "./schema.js";

/** The `event` of the row that closes a run's log. Not an API event name. */
export const RUN_END_EVENT = "__subagent_graph_run_end__";

/** One event of a run, as the log stores it. */
export interface StoredRunEvent {
  seq: number;
  event: string;
  /** The event's data, as JSON text. */
  data: string;
}

/** Reads and writes `run_events`. */
export class RunEventRepository {
  readonly #db: Kysely<DatabaseSchema>;

  constructor(db: Kysely<DatabaseSchema>) {
    this.#db = db;
  }

  /**
   * Appends `events` to the log of `runId`. A `seq` already written is left as it is (a retried
   * batch writes nothing twice). With `announce` (PostgreSQL only), the same statement sends
   * that notification.
   */
  async append(
    runId: string,
    threadId: string,
    events: readonly StoredRunEvent[],
    announce?: Announcement,
  ): Promise<void> {
    if (events.length === 0) return;
    const createdAt = new Date().toISOString();
    const insert = this.#db
      .insertInto("run_events")
      .values(
        events.map((event) => ({
          run_id: runId,
          thread_id: threadId,
          seq: event.seq,
          event: event.event,
          data: event.data,
          created_at: createdAt,
        })),
      )
      .onConflict((conflict) => conflict.columns(["run_id", "seq"]).doNothing());
    await insertAnnounced(this.#db, insert, announce);
  }

  /** Up to `limit` events of `runId` after `afterSeq` (-1: from the first), in order. */
  async after(runId: string, afterSeq: number, limit: number): Promise<StoredRunEvent[]> {
    if (hasNul(runId)) return [];
    return this.#db
      .selectFrom("run_events")
      .select(["seq", "event", "data"])
      .where("run_id", "=", runId)
      .where("seq", ">", afterSeq)
      .orderBy("seq")
      .limit(limit)
      .execute();
  }

  /** The id after the last event of `runId` (its end marker aside); 0 for an empty log. */
  async nextSeq(runId: string): Promise<number> {
    const row = await this.#db
      .selectFrom("run_events")
      .select(({ fn }) => fn.max("seq").as("last"))
      .where("run_id", "=", runId)
      .where("event", "<>", RUN_END_EVENT)
      .executeTakeFirst();
    const last = row?.last;
    return last === null || last === undefined ? 0 : Number(last) + 1;
  }

  /** Whether `runId` has a log at all (some process streamed it to the database). */
  async has(runId: string): Promise<boolean> {
    if (hasNul(runId)) return false;
    const row = await this.#db
      .selectFrom("run_events")
      .select("seq")
      .where("run_id", "=", runId)
      .limit(1)
      .executeTakeFirst();
    return row !== undefined;
  }

  /** Deletes the events of `runId` up to `seq` (a run past its bound keeps its newest events). */
  async trim(runId: string, throughSeq: number): Promise<void> {
    await this.#db
      .deleteFrom("run_events")
      .where("run_id", "=", runId)
      .where("seq", "<=", throughSeq)
      .execute();
  }

  /** Deletes the events of every run of `threadId` (its thread is being deleted). */
  async deleteForThread(threadId: string): Promise<void> {
    if (hasNul(threadId)) return;
    await this.#db.deleteFrom("run_events").where("thread_id", "=", threadId).execute();
  }

  /**
   * Deletes the events of runs that ended before `endedBefore` (ISO-8601), and of runs whose
   * row is gone.
   * @returns how many events were deleted
   */
  async prune(endedBefore: string): Promise<number> {
    const result = await this.#db
      .deleteFrom("run_events")
      .where((eb) =>
        eb.or([
          eb(
            "run_id",
            "in",
            eb
              .selectFrom("runs")
              .select("runs.run_id")
              .where("runs.status", "<>", "running")
              .where("runs.updated_at", "<", endedBefore),
          ),
          eb.not(
            eb.exists(
              eb
                .selectFrom("runs")
                .select("runs.run_id")
                .whereRef("runs.run_id", "=", "run_events.run_id"),
            ),
          ),
        ]),
      )
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}
