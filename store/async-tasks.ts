/**
 * Background tasks' rows (README "Background subagents"), shared by every process on one
 * database.
 *
 * A task is written `pending` with the inputs it has to run; any process claims it (the oldest
 * first), holds it by a lease it renews while the child runs, and writes how it ended. A task
 * whose process died (its lease ran out, or its pid is gone on this machine) is claimed again
 * as its next `attempt`: the child resumes from its own checkpoints. Every write of the process
 * running a task is fenced by its attempt and instance, so a process that lost a task (taken
 * over while it stalled) changes nothing any more. Cancels and follow-ups from any process are
 * written on the row; the running process reads them at its next heartbeat.
 */

import { type Kysely, type Selectable, sql, type Transaction, type Updateable } from "kysely";
import type { ProcessIdentity } from "../util/process-identity.js";
import type { DialectName } from "./database.js";
import { runnerColumns } from "./runs.js";
import type { AsyncTasksTable, DatabaseSchema } from "./schema.js";

/** A task's row. */
export type AsyncTaskRow = Selectable<AsyncTasksTable>;

/** What a task has yet to run: a message for its child, or a person's decision on its request. */
export type AsyncTaskInput =
  | { kind: "message"; text: string; id: string }
  | { kind: "resume"; resume: unknown };

/** A new task (its first input is its description). */
export interface NewAsyncTask {
  taskId: string;
  parentThreadId: string;
  uid: string;
  agentId: string;
  subagentType: string;
  childThreadId: string;
  description: string;
  timeoutMs: number | undefined;
  notifyParent: boolean;
  firstInput: AsyncTaskInput;
}

/** The statuses that hold one of a parent thread's `max_async_tasks` places. */
const ACTIVE = ["pending", "running", "waiting"];

/** The columns a process that runs a task may change (fenced by attempt and instance). */
export type AsyncTaskPatch = Updateable<AsyncTasksTable>;

/** What a heartbeat tells the process running a task. */
export type HeartbeatAnswer = "ok" | "cancel" | "lost";

/** Reads and writes `async_tasks`. */
export class AsyncTaskRepository {
  constructor(
    private readonly db: Kysely<DatabaseSchema>,
    private readonly dialect: DialectName,
  ) {}

  /**
   * Writes a new task unless its parent thread has `max` active tasks already: the count and
   * the insert are one transaction, serialised per parent thread (SQLite has one writer; on
   * PostgreSQL an advisory lock on the thread), so parallel starts never pass the limit. A task
   * id written before (the same tool call run again after a crash) returns "exists".
   */
  async insertIfRoom(task: NewAsyncTask, max: number): Promise<"inserted" | "full" | "exists"> {
    return this.db.transaction().execute(async (trx) => {
      if (this.dialect === "postgres") {
        await sql`select pg_advisory_xact_lock(hashtext(${task.parentThreadId}))`.execute(trx);
      }
      const existing = await trx
        .selectFrom("async_tasks")
        .select("task_id")
        .where("task_id", "=", task.taskId)
        .executeTakeFirst();
      if (existing) return "exists";
      const active = await countActive(trx, task.parentThreadId);
      if (active >= max) return "full";
      const now = new Date().toISOString();
      await trx
        .insertInto("async_tasks")
        .values({
          task_id: task.taskId,
          parent_thread_id: task.parentThreadId,
          owner_uid: task.uid,
          agent_id: task.agentId,
          subagent_type: task.subagentType,
          child_thread_id: task.childThreadId,
          description: task.description,
          status: "pending",
          inputs: JSON.stringify([task.firstInput]),
          result: null,
          error: null,
          approval: null,
          runner_instance: null,
          runner_host: null,
          runner_pid: null,
          runner_pid_scope: null,
          runner_pid_start: null,
          lease_until: null,
          timeout_ms: task.timeoutMs ?? null,
          notify_parent: task.notifyParent ? 1 : 0,
          created_at: now,
          updated_at: now,
        })
        .execute();
      return "inserted";
    });
  }

  async get(taskId: string): Promise<AsyncTaskRow | undefined> {
    return this.db
      .selectFrom("async_tasks")
      .selectAll()
      .where("task_id", "=", taskId)
      .executeTakeFirst();
  }

  /** The tasks of a parent thread, oldest first. */
  async listForParent(parentThreadId: string): Promise<AsyncTaskRow[]> {
    return this.db
      .selectFrom("async_tasks")
      .selectAll()
      .where("parent_thread_id", "=", parentThreadId)
      .orderBy("created_at")
      .orderBy("task_id")
      .execute();
  }

  /** The task whose child thread this is, if any. */
  async findByChildThread(childThreadId: string): Promise<AsyncTaskRow | undefined> {
    return this.db
      .selectFrom("async_tasks")
      .selectAll()
      .where("child_thread_id", "=", childThreadId)
      .executeTakeFirst();
  }

  /**
   * Claims the oldest pending task for `runner` (its next attempt), holding it for `leaseMs`.
   * PostgreSQL skips rows another process is claiming (`FOR UPDATE SKIP LOCKED`); SQLite has
   * one writer, so its one statement is atomic.
   */
  async claimPending(runner: ProcessIdentity, leaseMs: number): Promise<AsyncTaskRow | undefined> {
    const now = new Date();
    const lock = this.dialect === "postgres" ? sql`for update skip locked` : sql``;
    const candidate = sql<{ task_id: string }>`
      select task_id from async_tasks
      where status = 'pending' and cancel_requested = 0
      order by updated_at, task_id limit 1 ${lock}`;
    const rows = await sql<AsyncTaskRow>`
      update async_tasks set
        status = 'running',
        attempt = attempt + 1,
        lease_until = ${new Date(now.getTime() + leaseMs).toISOString()},
        updated_at = ${now.toISOString()},
        runner_instance = ${runner.instanceId},
        runner_host = ${runner.host},
        runner_pid = ${runner.pid},
        runner_pid_scope = ${runner.pidScope},
        runner_pid_start = ${runner.pidStart}
      where task_id = (${candidate}) and status = 'pending'
      returning *`.execute(this.db);
    return rows.rows[0];
  }

  /** Running tasks, for the sweep that finds those whose process died. */
  async running(): Promise<AsyncTaskRow[]> {
    return this.db.selectFrom("async_tasks").selectAll().where("status", "=", "running").execute();
  }

  /**
   * Takes over a running task whose process died (seen at `attempt`), as `runner`'s next
   * attempt; undefined when another process took it first.
   */
  async takeOver(
    row: AsyncTaskRow,
    runner: ProcessIdentity,
    leaseMs: number,
  ): Promise<AsyncTaskRow | undefined> {
    const now = new Date();
    return this.db
      .updateTable("async_tasks")
      .set((eb) => ({
        attempt: eb("attempt", "+", 1),
        lease_until: new Date(now.getTime() + leaseMs).toISOString(),
        updated_at: now.toISOString(),
        ...runnerColumns(runner),
      }))
      .where("task_id", "=", row.task_id)
      .where("status", "=", "running")
      .where("attempt", "=", row.attempt)
      .returningAll()
      .executeTakeFirst();
  }

  /**
   * Renews the lease of a task `runner` holds at `attempt`: "lost" when the row names another
   * attempt or is gone (taken over, or its parent thread deleted), "cancel" when a cancel was
   * asked for.
   */
  async heartbeat(
    taskId: string,
    runner: ProcessIdentity,
    attempt: number,
    leaseMs: number,
  ): Promise<HeartbeatAnswer> {
    const row = await this.db
      .updateTable("async_tasks")
      .set({ lease_until: new Date(Date.now() + leaseMs).toISOString() })
      .where("task_id", "=", taskId)
      .where("attempt", "=", attempt)
      .where("runner_instance", "=", runner.instanceId)
      .where("status", "=", "running")
      .returning("cancel_requested")
      .executeTakeFirst();
    if (!row) return "lost";
    return row.cancel_requested === 1 ? "cancel" : "ok";
  }

  /**
   * A write of the process holding the task at `attempt`; false when it no longer holds it (or,
   * with `onlyIfNoInputs`, when an input was added meanwhile).
   */
  async fencedUpdate(
    taskId: string,
    runner: ProcessIdentity,
    attempt: number,
    patch: AsyncTaskPatch,
    options: { onlyIfNoInputs?: boolean } = {},
  ): Promise<boolean> {
    let query = this.db
      .updateTable("async_tasks")
      .set({ ...patch, updated_at: new Date().toISOString() })
      .where("task_id", "=", taskId)
      .where("attempt", "=", attempt)
      .where("runner_instance", "=", runner.instanceId);
    // A task ends only with nothing left to run: a follow-up written meanwhile keeps it going.
    if (options.onlyIfNoInputs) query = query.where("inputs", "=", "[]");
    const result = await query.executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  /**
   * Changes a task whatever process holds it, if its status is one of `from` (a cancel, a
   * follow-up, a decision from any door); the row as it now stands, or undefined when its
   * status was not one of them (read it again to tell why).
   */
  async updateIf(
    taskId: string,
    from: readonly string[],
    change: (row: AsyncTaskRow) => AsyncTaskPatch,
  ): Promise<AsyncTaskRow | undefined> {
    return this.db.transaction().execute(async (trx) => {
      const lock = this.dialect === "postgres" ? sql`for update` : sql``;
      const found = await sql<AsyncTaskRow>`
        select * from async_tasks where task_id = ${taskId} ${lock}`.execute(trx);
      const row = found.rows[0];
      if (!row || !from.includes(row.status)) return undefined;
      return trx
        .updateTable("async_tasks")
        .set({ ...change(row), updated_at: new Date().toISOString() })
        .where("task_id", "=", taskId)
        .returningAll()
        .executeTakeFirst();
    });
  }

  /** Deletes the tasks of a deleted parent thread; their rows as they were. */
  async deleteForParent(parentThreadId: string): Promise<AsyncTaskRow[]> {
    return this.db
      .deleteFrom("async_tasks")
      .where("parent_thread_id", "=", parentThreadId)
      .returningAll()
      .execute();
  }
}

async function countActive(trx: Transaction<DatabaseSchema>, parentThreadId: string) {
  const row = await trx
    .selectFrom("async_tasks")
    .select((eb) => eb.fn.countAll<number | string>().as("count"))
    .where("parent_thread_id", "=", parentThreadId)
    .where("status", "in", ACTIVE)
    .executeTakeFirst();
  return Number(row?.count ?? 0);
}
