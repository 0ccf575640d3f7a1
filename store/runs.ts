import type { RecordedRunStatus } from "../contract.js";
/**
 * Runs and thread leases shared by every process on one database.
 *
 * A run's row lets any process report it and ask it to stop (the process running it polls its
 * row); a thread's lease lets one run at a time hold the thread across processes. A lease is
 * renewed while its run lives, so one left by a killed process expires and the thread can be
 * resumed elsewhere. The row names the process running it, so that a row left `running` by a
 * dead process can be found and marked `interrupted` (`runs/abandoned-runs.ts` decides when).
 * Timestamps are ISO-8601 UTC strings, which compare like the times.
 */

import { type Kysely, type Selectable, sql } from "kysely";
import type { ProcessIdentity } from "../util/process-identity.js";
import { compareText, hasNul } from "./portable-text.js";
import { clockOf, type RepositoryOptions } from "./repository-options.js";
import type { DatabaseSchema, RunsTable } from "./schema.js";

/** A run's row. */
export type RunRow = Selectable<RunsTable>;

/** The `status_reason` of a run its user cancelled (`POST …/cancel`, `runtime.cancel`). */
export const CANCEL_REASON = "cancelled by its user";

/** How a run ended (or that it still runs). */
export type StoredRunStatus = RecordedRunStatus;

/** A thread's lease as it stands. */
export interface ThreadLease {
  /** The run holding it (or a process reclaiming the thread for a dead run). */
  run_id: string;
  /** ISO-8601, UTC. */
  lease_until: string;
  /** Whether it has run out by this repository's clock (its holder stopped renewing it). */
  expired: boolean;
}

/** What a run's row keeps about its end besides its status. */
export interface RunEnd {
  /** The subagent records the run made, stored as JSON (the caller validates what it reads). */
  subagentRuns?: readonly unknown[];
  /** The background tasks it started or saw move on, stored as JSON likewise. */
  asyncTasks?: readonly unknown[];
  /** Why it ended so, when it did not end by itself. */
  reason?: string | null;
}

/** A new run's identity columns, as every writer of a new `runs` row sets them. */
export function newRunColumns(run: {
  runId: string;
  threadId: string;
  uid: string;
  agentId: string;
  metadata?: Record<string, unknown>;
}) {
  return {
    run_id: run.runId,
    thread_id: run.threadId,
    owner_uid: run.uid,
    agent_id: run.agentId,
    status_reason: null,
    metadata: JSON.stringify(run.metadata ?? {}),
  };
}

/** The columns of a run's row that name the process running it (all null for none). */
export function runnerColumns(runner: ProcessIdentity | undefined) {
  return {
    runner_instance: runner?.instanceId ?? null,
    runner_host: runner?.host ?? null,
    runner_pid: runner?.pid ?? null,
    runner_pid_scope: runner?.pidScope ?? null,
    runner_pid_start: runner?.pidStart ?? null,
  };
}

/** What a thread's runs say of it (see {@link RunRepository.threadRunStates}). */
export interface ThreadRunState {
  /** A run of it is pending or running, in any process. */
  active: boolean;
  /** Its latest run ended `error`. */
  lastFailed: boolean;
}

/** Reads and writes `runs` and `thread_leases`. */
export class RunRepository {
  readonly #db: Kysely<DatabaseSchema>;
  readonly #now: () => Date;

  constructor(db: Kysely<DatabaseSchema>, options: RepositoryOptions = {}) {
    this.#db = db;
    this.#now = clockOf(options);
  }

  /**
   * For each of `threadIds` that has runs: whether one is pending or running (in any process),
   * and whether its latest run ended `error`. One query.
   */
  async threadRunStates(threadIds: readonly string[]): Promise<Map<string, ThreadRunState>> {
    const states = new Map<string, ThreadRunState>();
    if (threadIds.length === 0) return states;
    const rows = await this.#db
      .selectFrom("runs as r")
      .select(["r.thread_id", "r.status", "r.created_at"])
      .where("r.thread_id", "in", [...threadIds])
      .where((eb) =>
        eb.or([
          eb("r.status", "in", ["pending", "running"]),
          eb(
            "r.created_at",
            "=",
            eb
              .selectFrom("runs as o")
              .select((inner) => inner.fn.max("o.created_at").as("latest"))
              .whereRef("o.thread_id", "=", "r.thread_id"),
          ),
        ]),
      )
      .orderBy("r.created_at")
      .execute();
    // Oldest first: the last row seen of a thread is its latest run.
    for (const row of rows) {
      const state = states.get(row.thread_id) ?? { active: false, lastFailed: false };
      if (row.status === "pending" || row.status === "running") state.active = true;
      state.lastFailed = row.status === "error";
      states.set(row.thread_id, state);
    }
    return states;
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
    // A row comes back only when this run now holds the lease: inserted, or an expired one
    // taken over (a live lease of another run leaves the conflict's update undone).
    const taken = await this.#db
      .insertInto("thread_leases")
      .values({ thread_id: threadId, run_id: runId, lease_until: until })
      .onConflict((conflict) =>
        conflict
          .column("thread_id")
          .doUpdateSet({ run_id: runId, lease_until: until })
          .where("thread_leases.lease_until", "<", now.toISOString()),
      )
      .returning("run_id")
      .executeTakeFirst();
    if (taken) return taken.run_id === runId;
    // Held already: by another run, or by this one (a second acquire keeps it).
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

  /**
   * The thread's lease, if any. `expired` is judged by this repository's clock, the same one
   * {@link acquireThread} takes expired leases over by.
   */
  async lease(threadId: string): Promise<ThreadLease | undefined> {
    const row = await this.#db
      .selectFrom("thread_leases")
      .select(["run_id", "lease_until"])
      .where("thread_id", "=", threadId)
      .executeTakeFirst();
    if (!row) return undefined;
    return { ...row, expired: row.lease_until < this.#now().toISOString() };
  }

  /**
   * Deletes the lease `runId` holds on `threadId`, only if it still reads `leaseUntil` (a holder
   * that renewed it meanwhile keeps it). For a holder known to be dead.
   * @returns whether the lease was deleted
   */
  async breakLease(threadId: string, runId: string, leaseUntil: string): Promise<boolean> {
    const result = await this.#db
      .deleteFrom("thread_leases")
      .where("thread_id", "=", threadId)
      .where("run_id", "=", runId)
      .where("lease_until", "=", leaseUntil)
      .executeTakeFirst();
    return Number(result.numDeletedRows) === 1;
  }

  /**
   * Records a run that starts now, run by `runner` (so others can tell when it died), with the
   * metadata its client gave it.
   */
  async start(run: {
    runId: string;
    threadId: string;
    uid: string;
    agentId: string;
    runner?: ProcessIdentity;
    metadata?: Record<string, unknown>;
  }) {
    const now = this.#now().toISOString();
    await this.#db
      .insertInto("runs")
      .values({
        ...newRunColumns(run),
        status: "running",
        created_at: now,
        updated_at: now,
        ...runnerColumns(run.runner),
      })
      .execute();
  }

  /**
   * Records how the run ended, with the subagent records it made, and frees its thread, in one
   * transaction: nobody ever sees the run over while its thread is still held, so a client that
   * saw it end (a join that read its row) can start the thread's next run at once. With
   * `holder`, only while the row still names that attempt and runner: a queued run taken over
   * meanwhile is not touched, nor is the lease its new attempt holds under the same run id.
   */
  async end(
    runId: string,
    threadId: string,
    status: Exclude<StoredRunStatus, "running">,
    end: RunEnd = {},
    holder?: { attempt: number; runnerInstance: string },
  ): Promise<void> {
    const updatedAt = this.#now().toISOString();
    await this.#db.transaction().execute(async (trx) => {
      let query = trx
        .updateTable("runs")
        .set({
          status,
          updated_at: updatedAt,
          // A run stopped on request ends with the reason its request gave (see requestCancel).
          status_reason:
            end.reason ??
            (status === "interrupted"
              ? sql<string | null>`case when cancel_requested = 1 then status_reason end`
              : null),
          ...(end.subagentRuns ? { subagent_runs: JSON.stringify(end.subagentRuns) } : {}),
          ...(end.asyncTasks ? { async_tasks: JSON.stringify(end.asyncTasks) } : {}),
        })
        .where("run_id", "=", runId);
      if (holder) {
        query = query
          .where("attempt", "=", holder.attempt)
          .where("runner_instance", "=", holder.runnerInstance);
      }
      const ended = await query.executeTakeFirst();
      if (holder && Number(ended.numUpdatedRows) === 0) return;
      await trx
        .deleteFrom("thread_leases")
        .where("thread_id", "=", threadId)
        .where("run_id", "=", runId)
        .execute();
    });
  }

  /**
   * Records that a run still marked running was cut short (its process died), with why and
   * the subagent records it made, unless it has ended meanwhile.
   * @returns whether the row was still running (and is now interrupted)
   */
  async interrupt(runId: string, reason: string, subagentRuns: readonly unknown[]) {
    const result = await this.#db
      .updateTable("runs")
      .set({
        status: "interrupted",
        status_reason: reason,
        subagent_runs: JSON.stringify(subagentRuns),
        updated_at: this.#now().toISOString(),
      })
      .where("run_id", "=", runId)
      .where("status", "=", "running")
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  /** The run `runId`, whoever owns it (for the processes that keep rows truthful). */
  async find(runId: string): Promise<RunRow | undefined> {
    return this.#db.selectFrom("runs").selectAll().where("run_id", "=", runId).executeTakeFirst();
  }

  /** Every run marked running, of `threadId` or of every thread, oldest first. */
  async running(threadId?: string): Promise<RunRow[]> {
    let query = this.#db.selectFrom("runs").selectAll().where("status", "=", "running");
    if (threadId !== undefined) query = query.where("thread_id", "=", threadId);
    return query.orderBy("created_at").orderBy("run_id").execute();
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
   * The runs of `uid` on `threadId`, newest first (ties by run id, byte order), optionally only
   * those with `status`; `offset` and `limit` page through them.
   */
  async listForThread(
    uid: string,
    threadId: string,
    options: { status?: StoredRunStatus; limit?: number; offset?: number } = {},
  ): Promise<RunRow[]> {
    if (hasNul(threadId)) return [];
    let query = this.#db
      .selectFrom("runs")
      .selectAll()
      .where("thread_id", "=", threadId)
      .where("owner_uid", "=", uid);
    if (options.status !== undefined) query = query.where("status", "=", options.status);
    // Sorted here, not in SQL: PostgreSQL would order run ids by the database's collation and
    // SQLite by bytes (see `ThreadRepository.listForUser`).
    const rows = (await query.execute()).sort(
      (a, b) => compareText(b.created_at, a.created_at) || compareText(a.run_id, b.run_id),
    );
    const offset = options.offset ?? 0;
    return rows.slice(offset, offset + (options.limit ?? rows.length));
  }

  /** Deletes every run row of `threadId`, and the runs' events (its thread is being deleted). */
  async deleteForThread(threadId: string): Promise<void> {
    if (hasNul(threadId)) return;
    await this.#db.deleteFrom("run_events").where("thread_id", "=", threadId).execute();
    await this.#db.deleteFrom("runs").where("thread_id", "=", threadId).execute();
  }

  /**
   * Asks a running run of `uid` to stop; the process running it sees the flag at its next poll.
   * `reason` becomes the run's `status_reason` once it has stopped.
   * @returns false when there is no such running run
   */
  async requestCancel(uid: string, runId: string, reason = CANCEL_REASON): Promise<boolean> {
    const result = await this.#db
      .updateTable("runs")
      .set({ cancel_requested: 1, status_reason: reason, updated_at: this.#now().toISOString() })
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
