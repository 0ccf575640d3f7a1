/**
 * The process side of background tasks: claims pending tasks (its own first, the moment they
 * are written; others' within a second), runs their inputs on their child threads while
 * renewing their leases, takes over the tasks of processes that died, and writes how each
 * ended. Any process of a fleet runs any task; a cancel written on a task's row by any process
 * reaches the one running it at its next heartbeat (twice a second).
 */

import { AsyncLocalStorageProviderSingleton } from "@langchain/core/singletons";
import type { AgentRecord } from "../../agents/schema.js";
import { isFinishedAsyncTask } from "../../contract.js";
import { messageOf } from "../../errors.js";
import type { AsyncTask } from "../../middleware/async-task-records.js";
import type { LoadedChild } from "../../middleware/task-types.js";
import type { AsyncTaskPatch, AsyncTaskRepository, AsyncTaskRow } from "../../store/async-tasks.js";
import { livenessOf, type ProcessIdentity } from "../../util/process-identity.js";
import { runSegment } from "./child-segment.js";
import { inputsOf, taskOf } from "./records.js";

/** What the runner needs from the runtime. */
export interface AsyncTaskRunnerDeps {
  rows: AsyncTaskRepository;
  /** This process, as the rows of the tasks it runs name it. */
  runner: ProcessIdentity;
  /** How long a task stays held without a heartbeat, in ms. */
  leaseMs: number;
  /** The main agent that started a task (by id), as its owner sees it now; undefined if gone. */
  parentAgent(uid: string, agentId: string): Promise<AgentRecord | undefined>;
  /** Subagent `slug` of `parent` as a background task runs it now; undefined if not allowed. */
  loadChild(uid: string, parent: AgentRecord, slug: string): Promise<LoadedChild | undefined>;
  /** Called once a task ended or paused, by the process that ran it (notices, notify runs). */
  onSettled(task: AsyncTask, row: AsyncTaskRow): void;
  warn(message: string): void;
}

/** A fenced write of the process running a task (see `AsyncTaskRepository.fencedUpdate`). */
type TaskWrite = (
  patch: AsyncTaskPatch,
  options?: { onlyIfNoInputs?: boolean },
) => Promise<boolean>;

/** Tasks one process runs at once. */
const MAX_RUNNING = 16;
/** How often a running task's lease is renewed and its row read for a cancel, in ms. */
const HEARTBEAT_MS = 500;
/** How often an idle process looks for tasks (another process's, or a dead one's), in ms. */
const POLL_MS = 1000;

/** A task this process runs. */
interface RunningTask {
  controller: AbortController;
  /** Why it stops: asked (cancel), its time ran out, or it is no longer ours. */
  stop?: "cancel" | "timeout" | "lost" | "closing";
  done: Promise<void>;
}

/** See the file's comment. */
export class AsyncTaskRunner {
  private readonly running = new Map<string, RunningTask>();
  private timer: NodeJS.Timeout | undefined;
  private claiming = false;
  /** The claim under way (settled when none is): `close` waits for what it launches. */
  private claimed: Promise<void> = Promise.resolve();
  private again = false;
  private closed = false;

  constructor(private readonly deps: AsyncTaskRunnerDeps) {}

  /** Starts looking for tasks (at once, then every second). */
  start(): void {
    this.timer = setInterval(() => this.kick(true), POLL_MS);
    this.timer.unref();
    this.kick(true);
  }

  /** Claims what it has room for now (`sweep`: also tasks whose process died). */
  kick(sweep = false): void {
    if (this.closed) return;
    if (this.claiming) {
      this.again = true;
      return;
    }
    this.claiming = true;
    this.claimed = this.claim(sweep)
      .catch((error: unknown) => this.deps.warn(`background tasks: ${messageOf(error)}`))
      .finally(() => {
        this.claiming = false;
        if (this.again) {
          this.again = false;
          this.kick();
        }
      });
  }

  /** Stops a task this process runs at once (a cancel asked here); false when it runs elsewhere. */
  cancelLocal(taskId: string): boolean {
    const task = this.running.get(taskId);
    if (!task) return false;
    task.stop ??= "cancel";
    task.controller.abort(new Error("background task cancelled"));
    return true;
  }

  /** Stops looking, and gives the tasks it runs back to the queue for another process. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    // A claim in flight may still take a row and launch its task: that one is given back too,
    // before the caller closes the database under it.
    await this.claimed;
    for (const task of this.running.values()) {
      task.stop ??= "closing";
      task.controller.abort(new Error("runtime closed"));
    }
    await Promise.allSettled([...this.running.values()].map((task) => task.done));
  }

  private async claim(sweep: boolean): Promise<void> {
    if (sweep) await this.takeOverDead();
    while (!this.closed && this.running.size < MAX_RUNNING) {
      const row = await this.deps.rows.claimPending(this.deps.runner, this.deps.leaseMs);
      if (!row) return;
      // A task claimed before (given back at a shutdown, or run and queued again) may hold its
      // next input already: its child's thread is read first.
      this.launch(row, row.attempt > 1);
    }
  }

  /** Running tasks whose process died (its pid gone here, or its lease run out) are taken over. */
  private async takeOverDead(): Promise<void> {
    const now = new Date().toISOString();
    for (const row of await this.deps.rows.running()) {
      if (this.closed || this.running.size >= MAX_RUNNING) return;
      if (row.runner_instance === this.deps.runner.instanceId) continue;
      const expired = row.lease_until === null || row.lease_until < now;
      const dead =
        row.runner_pid !== null &&
        livenessOf(
          {
            pid: row.runner_pid,
            pidScope: row.runner_pid_scope ?? "",
            pidStart: row.runner_pid_start ?? "",
          },
          this.deps.runner,
        ) === "dead";
      if (!expired && !dead) continue;
      const taken = await this.deps.rows.takeOver(row, this.deps.runner, this.deps.leaseMs);
      if (taken) this.launch(taken, true);
    }
  }

  private launch(row: AsyncTaskRow, resumed: boolean): void {
    const controller = new AbortController();
    const entry: RunningTask = { controller, done: Promise.resolve() };
    this.running.set(row.task_id, entry);
    // Outside the caller's async context: a task started from a tool call would otherwise run
    // its child as a nested call of the parent's run (LangChain's ambient config: its callbacks,
    // its stream, its signals), and end or pause with it.
    const storage = AsyncLocalStorageProviderSingleton.getInstance();
    entry.done = storage
      .run(undefined, () => this.execute(row, entry, resumed))
      .catch((error: unknown) =>
        this.deps.warn(`background task ${row.task_id}: ${messageOf(error)}`),
      )
      .finally(() => {
        this.running.delete(row.task_id);
        if (!this.closed) this.kick();
      });
  }

  /** Runs the task's inputs one after the other until none is left, it pauses, or it stops. */
  private async execute(start: AsyncTaskRow, entry: RunningTask, resumed: boolean): Promise<void> {
    const { rows, runner } = this.deps;
    const { task_id: taskId, attempt } = start;
    const heartbeat = setInterval(() => {
      void rows
        .heartbeat(taskId, runner, attempt, this.deps.leaseMs)
        .then((answer) => {
          if (answer === "ok") return;
          entry.stop ??= answer;
          entry.controller.abort(new Error(`background task ${answer}`));
        })
        .catch(() => undefined);
    }, HEARTBEAT_MS);
    heartbeat.unref();
    const write: TaskWrite = (patch, options) =>
      rows.fencedUpdate(taskId, runner, attempt, patch, options);
    let ranMs = start.ran_ms;
    let timer: NodeJS.Timeout | undefined;
    try {
      const parent = await this.deps.parentAgent(start.owner_uid, start.agent_id);
      const child = parent
        ? await this.deps.loadChild(start.owner_uid, parent, start.subagent_type)
        : undefined;
      if (!child) {
        await this.settle(start, write, {
          status: "failed",
          error: `subagent "${start.subagent_type}" is no longer available to this agent (deleted, unshared, or no longer in its async_subagents), so the task did not run`,
        });
        return;
      }
      let row = start;
      let first = resumed;
      for (;;) {
        const [input] = inputsOf(row);
        if (!input) {
          if (await this.settle(row, write, { status: "completed" }, true)) return;
          // A follow-up came in as it ended: run it too.
          const again = await rows.get(taskId);
          if (!again || again.attempt !== attempt) return;
          row = again;
          continue;
        }
        if (row.timeout_ms !== null) {
          const left = Math.max(0, row.timeout_ms - ranMs);
          timer = setTimeout(() => {
            entry.stop ??= "timeout";
            entry.controller.abort(new Error("background task timed out"));
          }, left);
        }
        const began = Date.now();
        const approvalId = row.approval
          ? (JSON.parse(row.approval) as { id: string }).id
          : undefined;
        const outcome = await runSegment(
          child,
          {
            uid: row.owner_uid,
            parentThreadId: row.parent_thread_id,
            childThreadId: row.child_thread_id,
            description: row.description,
          },
          input,
          approvalId,
          entry.controller.signal,
          first,
        );
        clearTimeout(timer);
        ranMs += Date.now() - began;
        first = false;
        // The input is done: taken off the row with what it gave, in one fenced write.
        const current = await rows.get(taskId);
        if (!current || current.attempt !== attempt) return;
        const rest = inputsOf(current).slice(1);
        const common = { inputs: JSON.stringify(rest), ran_ms: ranMs };
        if (outcome.kind === "waiting") {
          await this.settle(current, write, {
            ...common,
            status: "waiting",
            approval: JSON.stringify(outcome.approval),
          });
          return;
        }
        if (!(await write({ ...common, result: outcome.answer, approval: null }))) return;
        row = { ...current, inputs: JSON.stringify(rest), result: outcome.answer, approval: null };
      }
    } catch (error) {
      clearTimeout(timer);
      const stop = entry.stop;
      if (stop === "lost") return;
      if (stop === "closing") {
        // Given back: another process (or this one's next start) continues it from its checkpoints.
        await write({ status: "pending", lease_until: null, runner_instance: null });
        return;
      }
      const status = stop === "cancel" ? "cancelled" : stop === "timeout" ? "timeout" : "failed";
      const reason =
        status === "cancelled"
          ? "cancelled"
          : status === "timeout"
            ? `timed out after ${start.timeout_ms} ms of running`
            : messageOf(error);
      const current = (await rows.get(taskId)) ?? start;
      await this.settle(current, write, { status, error: reason, inputs: "[]", ran_ms: ranMs });
    } finally {
      clearInterval(heartbeat);
    }
  }

  /** Writes how the task ended (or that it waits), frees it, and tells the runtime. */
  private async settle(
    row: AsyncTaskRow,
    write: TaskWrite,
    patch: AsyncTaskPatch & { status: AsyncTask["status"] },
    onlyIfNoInputs = false,
  ): Promise<boolean> {
    const finished = isFinishedAsyncTask(patch.status);
    const ok = await write(
      {
        ...patch,
        lease_until: null,
        runner_instance: null,
        ...(finished ? { finished_at: new Date().toISOString() } : {}),
      },
      { onlyIfNoInputs },
    );
    if (!ok) return false;
    const stored = await this.deps.rows.get(row.task_id);
    if (stored) this.deps.onSettled(taskOf(stored), stored);
    return true;
  }
}
