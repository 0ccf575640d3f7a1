/**
 * Runs as queued jobs, for a fleet on PostgreSQL.
 *
 * A run asked for over HTTP is written `pending` with what was asked (`request`); any worker
 * claims the oldest pending run of a thread that runs nothing, taking the thread's lease in the
 * same transaction (`FOR UPDATE SKIP LOCKED`: workers never wait for each other's candidates).
 * A run whose worker died is put back `pending` (`requeue`) and claimed again as its next
 * attempt, until it has been tried `maxAttempts` times. Which worker holds a run, and which of
 * its attempts, is on its row: a worker that lost it (a takeover while it stalled) sees that at
 * its next heartbeat (`holder`) and stops.
 */

import { type Kysely, sql } from "kysely";
import type { ProcessIdentity } from "../util/process-identity.js";
import { type RunRow, runnerColumns } from "./runs.js";
import type { DatabaseSchema } from "./schema.js";

/**
 * What a new run does when its thread has a run pending or running (the LangGraph API's
 * `multitask_strategy`): refuse (`reject`), wait behind it (`enqueue`), stop it and go next
 * (`interrupt`, keeping what it did), or stop it and go next from where it started (`rollback`:
 * the new run branches from the checkpoint the stopped one started from, and the stopped run's
 * record is deleted once it has stopped).
 */
export type MultitaskStrategy = "reject" | "enqueue" | "interrupt" | "rollback";

/** Every {@link MultitaskStrategy}, the default first. */
export const MULTITASK_STRATEGIES: readonly MultitaskStrategy[] = [
  "reject",
  "enqueue",
  "interrupt",
  "rollback",
];

/** What a queued run was asked to do (its `request` column). */
export interface QueuedRunRequest {
  /** The new message; undefined = run what the thread (or `checkpointId`) has next. */
  input?: string;
  checkpointId?: string;
  /** The API's stream modes its events are made for. */
  streamModes: string[];
  subgraphs: boolean;
  /** What it was asked to do if its thread was busy. */
  multitaskStrategy?: MultitaskStrategy;
  /** A run this one rolled back: its record is deleted when this one starts. */
  rollbackOf?: string;
}

/** A new run for the queue. */
export interface NewQueuedRun {
  runId: string;
  threadId: string;
  uid: string;
  agentId: string;
  metadata: Record<string, unknown>;
  request: QueuedRunRequest;
}

/** A run a worker has claimed: its row (status running, this worker's) and its request. */
export interface ClaimedRun {
  row: RunRow;
  request: QueuedRunRequest;
}

/** Who holds a run now, as its row says. */
export interface RunHolder {
  status: string;
  attempt: number;
  runnerInstance: string | null;
  cancelRequested: boolean;
}

/** Candidates a claim looks at: a thread busy meanwhile is skipped for the next. */
const CLAIM_CANDIDATES = 8;

/** The queue of runs on the shared (PostgreSQL) database. */
export class RunQueue {
  readonly #db: Kysely<DatabaseSchema>;

  constructor(db: Kysely<DatabaseSchema>) {
    this.#db = db;
  }

  /**
   * Writes `run` as pending. When its thread has a run pending or running, or is held by a run
   * outside the queue (one of the library's), `strategy` decides (see {@link MultitaskStrategy}):
   * `interrupt` and `rollback` mark the pending ones interrupted and ask the running one to stop.
   * @returns whether it was queued (false: the thread is busy and the strategy is `reject`)
   */
  async enqueue(run: NewQueuedRun, strategy: MultitaskStrategy = "reject"): Promise<boolean> {
    return this.#db.transaction().execute(async (trx) => {
      // Enqueues on one thread take turns, so two never both find it free.
      await sql`select pg_advisory_xact_lock(hashtext(${`run_queue:${run.threadId}`}))`.execute(
        trx,
      );
      const now = new Date().toISOString();
      const active = await trx
        .selectFrom("runs")
        .select(["run_id", "status", "start_checkpoint_id"])
        .where("thread_id", "=", run.threadId)
        .where("status", "in", ["pending", "running"])
        .execute();
      const held = await trx
        .selectFrom("thread_leases")
        .select("run_id")
        .where("thread_id", "=", run.threadId)
        .where("lease_until", ">=", now)
        .executeTakeFirst();
      if ((active.length > 0 || held) && strategy === "reject") return false;
      let request = run.request;
      if (strategy === "interrupt" || strategy === "rollback") {
        const reason = `stopped for run ${run.runId} (multitask_strategy "${strategy}")`;
        await trx
          .updateTable("runs")
          .set({ status: "interrupted", status_reason: reason, updated_at: now })
          .where("thread_id", "=", run.threadId)
          .where("status", "=", "pending")
          .execute();
        await trx
          .updateTable("runs")
          .set({ cancel_requested: 1, updated_at: now })
          .where("thread_id", "=", run.threadId)
          .where("status", "=", "running")
          .execute();
        const stopped = active.find((row) => row.status === "running");
        if (strategy === "rollback" && stopped) {
          // From where the stopped run started (a thread that had no checkpoint: from its
          // latest, as nothing older exists); its record goes when this run starts.
          request = {
            ...request,
            rollbackOf: stopped.run_id,
            ...(stopped.start_checkpoint_id && !request.checkpointId
              ? { checkpointId: stopped.start_checkpoint_id }
              : {}),
          };
        }
      }
      await trx
        .insertInto("runs")
        .values({
          run_id: run.runId,
          thread_id: run.threadId,
          owner_uid: run.uid,
          agent_id: run.agentId,
          status: "pending",
          created_at: now,
          updated_at: now,
          ...runnerColumns(undefined),
          status_reason: null,
          metadata: JSON.stringify(run.metadata),
          attempt: 0,
          request: JSON.stringify(request),
        })
        .execute();
      return true;
    });
  }

  /**
   * Claims the oldest pending run whose thread runs nothing, for `runner`: the thread's lease is
   * taken for `leaseMs` and the run is marked running as its next attempt, in one transaction.
   */
  async claim(runner: ProcessIdentity, leaseMs: number): Promise<ClaimedRun | undefined> {
    return this.#db.transaction().execute(async (trx) => {
      const candidates = await trx
        .selectFrom("runs as r")
        .select(["r.run_id", "r.thread_id"])
        .where("r.status", "=", "pending")
        .where(({ not, exists, selectFrom }) =>
          not(
            exists(
              selectFrom("runs as o")
                .select("o.run_id")
                .whereRef("o.thread_id", "=", "r.thread_id")
                .where("o.status", "=", "running"),
            ),
          ),
        )
        .orderBy("r.created_at")
        .orderBy("r.run_id")
        .limit(CLAIM_CANDIDATES)
        .forUpdate()
        .skipLocked()
        .execute();
      const now = new Date();
      const until = new Date(now.getTime() + leaseMs).toISOString();
      const seen = new Set<string>();
      for (const candidate of candidates) {
        // The oldest pending run of a thread goes first.
        if (seen.has(candidate.thread_id)) continue;
        seen.add(candidate.thread_id);
        const leased = await trx
          .insertInto("thread_leases")
          .values({ thread_id: candidate.thread_id, run_id: candidate.run_id, lease_until: until })
          .onConflict((conflict) =>
            conflict
              .column("thread_id")
              .doUpdateSet({ run_id: candidate.run_id, lease_until: until })
              .where("thread_leases.lease_until", "<", now.toISOString()),
          )
          .returning("run_id")
          .executeTakeFirst();
        if (leased?.run_id !== candidate.run_id) continue;
        const row = await trx
          .updateTable("runs")
          .set({
            status: "running",
            attempt: sql<number>`attempt + 1`,
            updated_at: now.toISOString(),
            // The first claim's time: when the run began, whatever attempt follows.
            claimed_at: sql<string>`coalesce(claimed_at, ${now.toISOString()})`,
            ...runnerColumns(runner),
          })
          .where("run_id", "=", candidate.run_id)
          .returningAll()
          .executeTakeFirstOrThrow();
        return { row, request: JSON.parse(row.request ?? "{}") as QueuedRunRequest };
      }
      return undefined;
    });
  }

  /**
   * Puts a running run whose worker is gone back in the queue, or ends it `error` once it has
   * been tried `maxAttempts` times; `reason` says what happened to its worker.
   * @returns its status now, or undefined when it was not running (ended meanwhile)
   */
  async requeue(
    runId: string,
    reason: string,
    maxAttempts: number,
  ): Promise<"pending" | "error" | undefined> {
    const row = await this.#db
      .updateTable("runs")
      .set({
        status: sql<string>`case when attempt >= ${maxAttempts} then 'error' else 'pending' end`,
        status_reason: sql<string>`case when attempt >= ${maxAttempts} then ${`tried ${maxAttempts} times, and each time the worker running it stopped; the last time: ${reason}`} else ${reason} end`,
        updated_at: new Date().toISOString(),
        runner_instance: null,
        runner_pid: null,
      })
      .where("run_id", "=", runId)
      .where("status", "=", "running")
      .returning("status")
      .executeTakeFirst();
    return row?.status as "pending" | "error" | undefined;
  }

  /**
   * Ends a claimed run `error` before it ran (refused at its start: its agent deleted since, say),
   * if `runner`'s attempt still holds it, and frees its thread.
   */
  async fail(runId: string, attempt: number, runner: ProcessIdentity, reason: string) {
    await this.#db.transaction().execute(async (trx) => {
      const result = await trx
        .updateTable("runs")
        .set({ status: "error", status_reason: reason, updated_at: new Date().toISOString() })
        .where("run_id", "=", runId)
        .where("attempt", "=", attempt)
        .where("runner_instance", "=", runner.instanceId)
        .where("status", "=", "running")
        .executeTakeFirst();
      if (Number(result.numUpdatedRows) === 1) {
        await trx.deleteFrom("thread_leases").where("run_id", "=", runId).execute();
      }
    });
  }

  /** Deletes the record and events of a run that has ended (rolled back by a later run). */
  async deleteEnded(runId: string): Promise<void> {
    await this.#db.transaction().execute(async (trx) => {
      const result = await trx
        .deleteFrom("runs")
        .where("run_id", "=", runId)
        .where("status", "not in", ["pending", "running"])
        .executeTakeFirst();
      if (Number(result.numDeletedRows) === 1) {
        await trx.deleteFrom("run_events").where("run_id", "=", runId).execute();
      }
    });
  }

  /** Records the thread's newest checkpoint when the run's first attempt began (once). */
  async setStartCheckpoint(runId: string, checkpointId: string): Promise<void> {
    await this.#db
      .updateTable("runs")
      .set({ start_checkpoint_id: checkpointId })
      .where("run_id", "=", runId)
      .where("start_checkpoint_id", "is", null)
      .execute();
  }

  /**
   * Ends a pending run of `uid` before any worker claimed it (`interrupted`).
   * @returns false when it is not pending (claimed, ended, or not `uid`'s)
   */
  async cancelPending(uid: string, runId: string): Promise<boolean> {
    const result = await this.#db
      .updateTable("runs")
      .set({
        status: "interrupted",
        status_reason: "cancelled before a worker started it",
        updated_at: new Date().toISOString(),
      })
      .where("run_id", "=", runId)
      .where("owner_uid", "=", uid)
      .where("status", "=", "pending")
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  /** Who holds `runId` now (for a worker's heartbeat: lost, cancelled, or still its own). */
  async holder(runId: string): Promise<RunHolder | undefined> {
    const row = await this.#db
      .selectFrom("runs")
      .select(["status", "attempt", "runner_instance", "cancel_requested"])
      .where("run_id", "=", runId)
      .executeTakeFirst();
    if (!row) return undefined;
    return {
      status: row.status,
      attempt: Number(row.attempt),
      runnerInstance: row.runner_instance,
      cancelRequested: Number(row.cancel_requested) === 1,
    };
  }

  /** How many runs wait, and since when the oldest has (ISO-8601; undefined when none). */
  async depth(): Promise<{ pending: number; oldestCreatedAt: string | undefined }> {
    const row = await this.#db
      .selectFrom("runs")
      .select(({ fn }) => [fn.countAll<string>().as("pending"), fn.min("created_at").as("oldest")])
      .where("status", "=", "pending")
      .executeTakeFirst();
    return {
      pending: Number(row?.pending ?? 0),
      oldestCreatedAt: (row?.oldest as string | null | undefined) ?? undefined,
    };
  }
}
