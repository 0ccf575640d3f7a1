/**
 * Runs as queued jobs, for a fleet on PostgreSQL.
 *
 * A run asked for over HTTP is written `pending` with what was asked (`request`); any worker
 * claims the oldest pending run of a thread that runs nothing, taking the thread's lease in the
 * same transaction (`FOR UPDATE SKIP LOCKED`: workers never wait for each other's candidates).
 * A run whose worker died is put back `pending` (`requeue`) and claimed again as its next
 * attempt, until its worker has died `maxAttempts` times (a run given back at a worker's
 * shutdown, `handBack`, is not counted). Which worker holds a run, and which of
 * its attempts, is on its row: a worker that lost it (a takeover while it stalled) sees that at
 * its next heartbeat (`heartbeat`) and stops.
 */

import { type Kysely, sql, type Transaction } from "kysely";
import type { ProcessIdentity } from "../util/process-identity.js";
import { insertAnnounced } from "./announced-insert.js";
import { newRunColumns, type RunRow, runnerColumns } from "./runs.js";
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
  /** The id the message gets (`RunRequest.inputMessageId`). */
  inputMessageId?: string;
  checkpointId?: string;
  /**
   * Answers to the approval requests the thread waits on (`RunRequest.command`, README
   * "Approvals"), checked by the process that queued the run and again by the worker that
   * claims it. Stored as JSON with the rest of the request, so a run paused on one process is
   * resumed by whichever worker claims this one, and by the next if that worker dies.
   */
  command?: { resume: unknown };
  /** The API's stream modes its events are made for. */
  streamModes: string[];
  subgraphs: boolean;
  /** What it was asked to do if its thread was busy. */
  multitaskStrategy?: MultitaskStrategy;
  /** A run this one rolled back: its record is deleted when this one starts. */
  rollbackOf?: string;
  /**
   * The run rolled back was its thread's first: every checkpoint of the thread is its own, so
   * they are deleted when this one starts, which runs on an empty thread.
   */
  fromEmptyThread?: boolean;
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

/** A worker claiming a run as it is written: the process, and how long its lease lasts (ms). */
export interface Claimer {
  runner: ProcessIdentity;
  leaseMs: number;
}

/** Who holds a run now, as its row says. */
export interface RunHolder {
  status: string;
  attempt: number;
  runnerInstance: string | null;
  cancelRequested: boolean;
}

/**
 * Now, as the database's clock tells it, in the ISO form of the other times: when a queued run
 * is written and when it is claimed. One clock for both, read as each statement runs, so a run's
 * wait in the queue (`claimed_at − created_at`) is neither skewed by two machines' clocks nor
 * stretched or shrunk by the time a statement waited for a connection.
 */
const DATABASE_NOW = sql<string>`to_char(clock_timestamp() at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/** The queue of runs on the shared (PostgreSQL) database. */
export class RunQueue {
  readonly #db: Kysely<DatabaseSchema>;
  readonly #wakeChannel: string | undefined;

  /**
   * @param options.wakeChannel the NOTIFY channel {@link enqueue} announces a new run on, in the
   *   same statement that writes it (none: the caller wakes the workers itself)
   */
  constructor(db: Kysely<DatabaseSchema>, options: { wakeChannel?: string } = {}) {
    this.#db = db;
    this.#wakeChannel = options.wakeChannel;
  }

  /**
   * Writes `run` as pending. When its thread has a run pending or running, or is held by a run
   * outside the queue (one of the library's), `strategy` decides (see {@link MultitaskStrategy}):
   * `interrupt` and `rollback` mark the pending ones interrupted and ask the running one to stop
   * (never for a resume, `request.command`, which is refused on a busy thread unless it waits).
   * @returns whether it was queued (false: the thread is busy and the strategy is `reject`, or
   *   it is a resume that would stop a run)
   */
  async enqueue(run: NewQueuedRun, strategy: MultitaskStrategy = "reject"): Promise<boolean> {
    return (await this.enqueueOrClaim(run, strategy, undefined)) !== "refused";
  }

  /**
   * {@link enqueue}, except that with a `claimer` a run which could start at once is claimed for
   * it in the same transaction (written `running` as its attempt 1, its thread's lease taken),
   * instead of waiting for a worker to hear of it: what a process that is also a worker with a
   * free slot does with the runs it is asked for. "At once" means its thread runs nothing, holds
   * no lease and has nothing pending, and no other run anywhere waits for a worker (so a run
   * never passes an older one that could go). Otherwise it is queued as {@link enqueue} queues it.
   * @returns the claimed run, "queued", or "refused" (busy thread, strategy `reject`; or a
   *   resume whose strategy would stop a run)
   */
  async enqueueOrClaim(
    run: NewQueuedRun,
    strategy: MultitaskStrategy,
    claimer: Claimer | undefined,
  ): Promise<ClaimedRun | "queued" | "refused"> {
    return this.#db.transaction().execute(async (trx) => {
      // Enqueues on one thread take turns, so two never both find it free.
      await sql`select pg_advisory_xact_lock(hashtext(${`run_queue:${run.threadId}`}))`.execute(
        trx,
      );
      const now = new Date().toISOString();
      // The thread's pending and running runs, and its lease when held (status "leased"): one
      // round trip.
      const busy = await trx
        .selectFrom("runs")
        .select(["run_id", "status", "start_checkpoint_id"])
        .where("thread_id", "=", run.threadId)
        .where("status", "in", ["pending", "running"])
        .unionAll(
          trx
            .selectFrom("thread_leases")
            .select([
              "run_id",
              sql<string>`'leased'`.as("status"),
              sql<string | null>`null`.as("start_checkpoint_id"),
            ])
            .where("thread_id", "=", run.threadId)
            .where("lease_until", ">=", now),
        )
        .execute();
      if (busy.length > 0 && (strategy === "reject" || stopsForResume(run.request, strategy))) {
        return "refused";
      }
      if (claimer && busy.length === 0) {
        const claimed = await claimAtOnce(trx, run, claimer);
        if (claimed) return claimed;
      }
      const active = busy.filter((row) => row.status !== "leased");
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
          .set({ cancel_requested: 1, status_reason: reason, updated_at: now })
          .where("thread_id", "=", run.threadId)
          .where("status", "=", "running")
          .execute();
        const stopped = active.find((row) => row.status === "running");
        if (strategy === "rollback" && stopped) {
          // From the checkpoint the stopped run started from, or from an empty thread when it
          // was the thread's first run ("": the thread had no checkpoint then). Its record goes
          // when this run starts. A run stopped before it recorded its start (null): from the
          // latest.
          const start = stopped.start_checkpoint_id;
          request = {
            ...request,
            rollbackOf: stopped.run_id,
            ...(request.checkpointId || !start ? {} : { checkpointId: start }),
            ...(request.checkpointId || start !== "" ? {} : { fromEmptyThread: true }),
          };
        }
      }
      const insert = trx.insertInto("runs").values({
        ...newRunColumns(run),
        status: "pending",
        created_at: DATABASE_NOW,
        updated_at: DATABASE_NOW,
        ...runnerColumns(undefined),
        attempt: 0,
        request: JSON.stringify(request),
      });
      // Written and announced in one statement; the workers hear it when this commits.
      const wake = this.#wakeChannel;
      await insertAnnounced(
        trx,
        insert,
        wake === undefined ? undefined : { channel: wake, payload: "" },
      );
      return "queued";
    });
  }

  /**
   * Claims the oldest pending run whose thread runs nothing, for `runner`: see {@link claimSome}.
   */
  async claim(runner: ProcessIdentity, leaseMs: number): Promise<ClaimedRun | undefined> {
    return (await this.claimSome(runner, leaseMs, 1))[0];
  }

  /**
   * Claims up to `max` runs for `runner`, oldest first: of each thread that runs nothing and
   * whose lease is free, its oldest pending run. Each claimed thread's lease is taken for
   * `leaseMs` and each run is marked running as its next attempt.
   *
   * One statement, so one round trip: under load a worker waits for the CPU at every round
   * trip, and a claim made of a transaction of one statement per step was most of a queued
   * run's wait before it started (bench/README.md, "Scenario: fleet"). The statement is atomic as
   * the transaction was: candidates are locked `FOR UPDATE SKIP LOCKED` (two workers never wait
   * for each other, nor claim the same run), a lease is taken only when free (the upsert's
   * condition, checked again under the row's lock), and only runs whose lease was taken change.
   */
  async claimSome(runner: ProcessIdentity, leaseMs: number, max: number): Promise<ClaimedRun[]> {
    const now = new Date();
    const nowText = now.toISOString();
    const until = new Date(now.getTime() + leaseMs).toISOString();
    const runnerSet = runnerColumns(runner);
    const { rows } = await sql<RunRow>`
      with locked as (
        select r.run_id, r.thread_id from runs as r
        where r.status = 'pending' and ${threadIsFree(nowText)}
          -- Only a thread's oldest pending run: a younger one must never start first, even
          -- while another worker holds the older one's row lock (which SKIP LOCKED skips).
          and not exists (
            select 1 from runs as p
            where p.thread_id = r.thread_id and p.status = 'pending'
              and (p.created_at, p.run_id) < (r.created_at, r.run_id)
          )
        order by r.created_at, r.run_id
        limit ${max}
        for update of r skip locked
      ),
      leased as (
        insert into thread_leases (thread_id, run_id, lease_until)
        select thread_id, run_id, ${until} from locked
        on conflict (thread_id) do update
          set run_id = excluded.run_id, lease_until = excluded.lease_until
          where thread_leases.lease_until < ${nowText}
        returning run_id
      )
      update runs set
        status = 'running',
        attempt = runs.attempt + 1,
        updated_at = ${DATABASE_NOW},
        claimed_at = coalesce(runs.claimed_at, ${DATABASE_NOW}),
        runner_instance = ${runnerSet.runner_instance},
        runner_host = ${runnerSet.runner_host},
        runner_pid = ${runnerSet.runner_pid},
        runner_pid_scope = ${runnerSet.runner_pid_scope},
        runner_pid_start = ${runnerSet.runner_pid_start}
      from leased
      where runs.run_id = leased.run_id
      returning runs.*`.execute(this.#db);
    // The first claim's time (`claimed_at`) stays: when the run began, whatever attempt follows.
    return rows
      .sort((a, b) => a.created_at.localeCompare(b.created_at) || a.run_id.localeCompare(b.run_id))
      .map((row) => ({ row, request: JSON.parse(row.request ?? "{}") as QueuedRunRequest }));
  }

  /**
   * Puts a running run whose worker is gone back in the queue, or ends it `error` once its
   * worker has died `maxAttempts` times (attempts handed back at a shutdown do not count, see
   * {@link handBack}); `reason` says what happened to its worker.
   * @returns its status now, or undefined when it was not running (ended meanwhile)
   */
  async requeue(
    runId: string,
    reason: string,
    maxAttempts: number,
  ): Promise<"pending" | "error" | undefined> {
    const failed = sql<boolean>`attempt - handed_back >= ${maxAttempts}`;
    const row = await this.#db
      .updateTable("runs")
      .set({
        ...unclaimed(),
        status: sql<string>`case when ${failed} then 'error' else 'pending' end`,
        status_reason: sql<string>`case when ${failed} then ${`tried ${maxAttempts} times, and each time the worker running it stopped; the last time: ${reason}`} else ${reason} end`,
      })
      .where("run_id", "=", runId)
      .where("status", "=", "running")
      .returning("status")
      .executeTakeFirst();
    return row?.status as "pending" | "error" | undefined;
  }

  /**
   * Gives a run this worker holds back to the queue (it is shutting down), for another worker to
   * resume as its next attempt. Not a failure: it never ends the run `error`, nor counts towards
   * {@link requeue}'s `maxAttempts`.
   * @returns whether it was given back (false: it had ended, or is not this attempt's any more)
   */
  async handBack(runId: string, attempt: number, reason: string): Promise<boolean> {
    const result = await this.#db
      .updateTable("runs")
      .set({
        ...unclaimed(),
        status: "pending",
        status_reason: reason,
        handed_back: sql<number>`handed_back + 1`,
      })
      .where("run_id", "=", runId)
      .where("attempt", "=", attempt)
      .where("status", "=", "running")
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
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

  /**
   * Announces on the wake channel that `threadId` has a pending run, if it has one: what a
   * run's end owes the fleet (its thread is free). Nothing is sent otherwise, so a fleet whose
   * runs end with nothing queued behind them wakes no worker for nothing.
   */
  async announcePending(threadId: string): Promise<void> {
    if (this.#wakeChannel === undefined) return;
    await sql`select pg_notify(${this.#wakeChannel}, '') where exists (
      select 1 from runs where thread_id = ${threadId} and status = 'pending'
    )`.execute(this.#db);
  }

  /**
   * A claimed run's heartbeat in one statement: renews its thread's lease for `leaseMs` (only
   * while this run holds it) and reads who holds the run now.
   * @returns whether the lease was renewed, and the holder (undefined: the run is gone)
   */
  async heartbeat(
    threadId: string,
    runId: string,
    leaseMs: number,
  ): Promise<{ renewed: boolean; holder: RunHolder | undefined }> {
    const until = new Date(Date.now() + leaseMs).toISOString();
    const { rows } = await sql<HolderRow & { renewed: number | string }>`
      with renewed as (
        update thread_leases set lease_until = ${until}
        where thread_id = ${threadId} and run_id = ${runId}
        returning 1
      )
      select (select count(*) from renewed) as renewed, r.status, r.attempt, r.runner_instance,
        r.cancel_requested
      from (select 1) as one
      left join runs as r on r.run_id = ${runId}`.execute(this.#db);
    const row = rows[0];
    return {
      renewed: Number(row?.renewed) === 1,
      holder: row?.status ? holderOf(row) : undefined,
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

/**
 * Whether `strategy` would stop a busy thread's runs for a resume, which it never does: a resume
 * answers the requests its thread waits on, and stopping the run in progress would answer them
 * for it (`interrupt` repairs the stopped turn, answering its open calls as cancelled) or branch
 * away from them (`rollback`). Such a resume is refused like a busy thread's `reject`; with
 * `enqueue` it waits, and is checked again against what the thread waits on when it starts.
 */
function stopsForResume(request: QueuedRunRequest, strategy: MultitaskStrategy): boolean {
  return request.command !== undefined && (strategy === "interrupt" || strategy === "rollback");
}

/** The columns of a running run that no worker holds any more (requeued or handed back). */
function unclaimed() {
  return { updated_at: new Date().toISOString(), runner_instance: null, runner_pid: null };
}

/**
 * The condition that the thread of the run aliased `r` runs nothing and its lease is free (or
 * has run out by `nowText`): what makes a pending run claimable.
 */
function threadIsFree(nowText: string) {
  return sql<boolean>`not exists (
      select 1 from runs as o where o.thread_id = r.thread_id and o.status = 'running'
    )
    and not exists (
      select 1 from thread_leases as l
      where l.thread_id = r.thread_id and l.lease_until >= ${nowText}
    )`;
}

/**
 * Writes `run` as claimed by `claimer` (running, attempt 1, its thread's lease taken) if no
 * other run waits for a worker and its thread's lease is free, in one statement; the caller
 * holds the thread's enqueue lock and has seen it run nothing.
 * @returns the claimed run, or undefined when it must be queued instead
 */
async function claimAtOnce(
  trx: Transaction<DatabaseSchema>,
  run: NewQueuedRun,
  claimer: Claimer,
): Promise<ClaimedRun | undefined> {
  const now = new Date();
  const nowText = now.toISOString();
  const until = new Date(now.getTime() + claimer.leaseMs).toISOString();
  const columns = {
    ...newRunColumns(run),
    ...runnerColumns(claimer.runner),
    request: JSON.stringify(run.request),
  };
  const names = Object.keys(columns);
  const { rows } = await sql<RunRow>`
    with waiting as (
      -- A run that a worker could claim now: this one must not pass it.
      select 1 from runs as r
      where r.status = 'pending' and ${threadIsFree(nowText)}
      limit 1
    ),
    leased as (
      insert into thread_leases (thread_id, run_id, lease_until)
      select ${run.threadId}, ${run.runId}, ${until}
      where not exists (select 1 from waiting)
      on conflict (thread_id) do update
        set run_id = excluded.run_id, lease_until = excluded.lease_until
        where thread_leases.lease_until < ${nowText}
      returning run_id
    ),
    stamp as (select ${DATABASE_NOW} as now)
    insert into runs (${sql.join(names.map((name) => sql.ref(name)))},
      status, attempt, created_at, updated_at, claimed_at)
    select ${sql.join(Object.values(columns))}, 'running', 1, stamp.now, stamp.now, stamp.now
    from leased, stamp
    returning *`.execute(trx);
  const row = rows[0];
  return row ? { row, request: run.request } : undefined;
}

/** The columns {@link RunHolder} is read from. */
interface HolderRow {
  status: string;
  attempt: number | string;
  runner_instance: string | null;
  cancel_requested: number | string;
}

function holderOf(row: HolderRow): RunHolder {
  return {
    status: row.status,
    attempt: Number(row.attempt),
    runnerInstance: row.runner_instance,
    cancelRequested: Number(row.cancel_requested) === 1,
  };
}
