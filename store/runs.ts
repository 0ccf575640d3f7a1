/**
 * Runs and thread leases shared by every process on one database.
 *
 * A run's row lets any process report it and ask it to stop (the process running it polls its
 * row); a thread's lease lets one run at a time hold the thread across processes. A lease is
 * renewed while its run lives, so one left by a killed process expires and the thread can be
 * resumed elsewhere. Timestamps are ISO-8601 UTC strings, which compare like the times.
 */

import type { Kysely, Selectable } from "kysely";
import { clockOf, type RepositoryOptions } from "./repository-options.js";
import type { DatabaseSchema, RunsTable } from "./schema.js";

/** A run's row. */
export type RunRow = Selectable<RunsTable>;

/** How a run ended (or that it still runs). */
export type StoredRunStatus = "running" | "success" | "error" | "interrupted";

/** Reads and writes `runs` and `thread_leases`. */
export class RunRepository {
  readonly #db: Kysely<DatabaseSchema>;
  readonly #now: () => Date;

  constructor(db: Kysely<DatabaseSchema>, options: RepositoryOptions = {}) {
    this.#db = db;
    this.#now = clockOf(options);
  }

  /**
   * Takes `threadId` for `runId` until `leaseMs` from now, unless another run holds an
   * unexpired lease on it. Atomic on SQLite and PostgreSQL alike (an upsert guarded by the old
   * lease's expiry).
   *
   * @returns whether the lease is now this run's
   */
  async acquireThread(threadId: string, runId: string, leaseMs: number): Promise<boolean> {
    const now = this.#now();
    const until = new Date(now.getTime() + leaseMs).toISOString();
    await this.#db
      .insertInto("thread_leases")
      .values({ thread_id: threadId, run_id: runId, lease_until: until })
      .onConflict((conflict) =>
        conflict
          .column("thread_id")
          .doUpdateSet({ run_id: runId, lease_until: until })
          .where("thread_leases.lease_until", "<", now.toISOString()),
      )
      .execute();
    const row = await this.#db
      .selectFrom("thread_leases")
      .select("run_id")
      .where("thread_id", "=", threadId)
      .executeTakeFirst();
    return row?.run_id === runId;
  }

  /** Extends the lease of a run that still holds it; false when it lost it. */
  async renewThread(threadId: string, runId: string, leaseMs: number): Promise<boolean> {
    const until = new Date(this.#now().getTime() + leaseMs).toISOString();
    const result = await this.#db
      .updateTable("thread_leases")
      .set({ lease_until: until })
      .where("thread_id", "=", threadId)
      .where("run_id", "=", runId)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  /** Gives the thread up (only if this run holds it). */
  async releaseThread(threadId: string, runId: string): Promise<void> {
    await this.#db
      .deleteFrom("thread_leases")
      .where("thread_id", "=", threadId)
      .where("run_id", "=", runId)
      .execute();
  }

  /** Records a run that starts now. */
  async start(run: { runId: string; threadId: string; uid: string; agentId: string }) {
    const now = this.#now().toISOString();
    await this.#db
      .insertInto("runs")
      .values({
        run_id: run.runId,
        thread_id: run.threadId,
        owner_uid: run.uid,
        agent_id: run.agentId,
        status: "running",
        created_at: now,
        updated_at: now,
      })
      .execute();
  }

  /** Records how the run ended. */
  async finish(runId: string, status: Exclude<StoredRunStatus, "running">): Promise<void> {
    await this.#db
      .updateTable("runs")
      .set({ status, updated_at: this.#now().toISOString() })
      .where("run_id", "=", runId)
      .execute();
  }

  /** The run `runId` of `uid`, whichever process runs (or ran) it. */
  async get(uid: string, runId: string): Promise<RunRow | undefined> {
    return this.#db
      .selectFrom("runs")
      .selectAll()
      .where("run_id", "=", runId)
      .where("owner_uid", "=", uid)
      .executeTakeFirst();
  }

  /**
   * Asks a running run of `uid` to stop; the process running it sees the flag at its next poll.
   * @returns false when there is no such running run
   */
  async requestCancel(uid: string, runId: string): Promise<boolean> {
    const result = await this.#db
      .updateTable("runs")
      .set({ cancel_requested: 1, updated_at: this.#now().toISOString() })
      .where("run_id", "=", runId)
      .where("owner_uid", "=", uid)
      .where("status", "=", "running")
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  /** Whether someone asked `runId` to stop. */
  async cancelRequested(runId: string): Promise<boolean> {
    const row = await this.#db
      .selectFrom("runs")
      .select("cancel_requested")
      .where("run_id", "=", runId)
      .executeTakeFirst();
    return Number(row?.cancel_requested ?? 0) === 1;
  }
}
