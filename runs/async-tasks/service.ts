/**
 * Background tasks (README "Background subagents"): what the tools of a main agent do
 * (`hostFor`), and what the library, the HTTP API and the CLI read and change
 * (`runtime.asyncTasks`). A task is a row (`store/async-tasks.ts`) that any process's runner
 * (`runner.ts`) claims; nothing here waits for a child, so the parent thread is never held.
 */

import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";
import { agentLimits } from "../../agents/limits.js";
import type { AgentRecord } from "../../agents/schema.js";
import { agentTools } from "../../backends/registry.js";
import {
  ASYNC_TASK_STATUSES,
  type AsyncTaskStatus,
  BACKGROUND_CHILD_MARKER,
  isFinishedAsyncTask,
} from "../../contract.js";
import { ErrorCode, SubagentGraphError } from "../../errors.js";
import type { CompiledGraphs } from "../../graphs/compiled-graphs.js";
import type { PendingApproval } from "../../middleware/approval-request.js";
import type { AsyncTaskCheck, AsyncTaskHost } from "../../middleware/async-task-host.js";
import type { AsyncTask } from "../../middleware/async-task-records.js";
import { noticeId, noticeText } from "../../middleware/async-task-text.js";
import type { ParentRunScope } from "../../middleware/parent-scope.js";
import { truncateAnswer } from "../../middleware/truncate.js";
import type { AsyncTaskInput, AsyncTaskRepository, AsyncTaskRow } from "../../store/async-tasks.js";
import { checkResume } from "../../threads/approvals.js";
import { childThreadIdFor, inputMessageId, inputsOf, taskIdFor, taskOf } from "./records.js";
import type { AsyncTaskRunner } from "./runner.js";

/** A task with its whole final answer (`runtime.asyncTasks.get`). */
export type AsyncTaskDetail = AsyncTask & { result: string | null };

/**
 * The background tasks of a user's threads (`runtime.asyncTasks`). Each method checks that the
 * thread is the caller's and the task the thread's.
 * @throws SubagentGraphError `NOT_FOUND` (field `thread_id` or `task_id`), `VALIDATION_FAILED`
 */
export interface AsyncTasksApi {
  /** The thread's tasks, oldest first; `status` keeps those with it. */
  list(uid: string, threadId: string, options?: { status?: AsyncTaskStatus }): Promise<AsyncTask[]>;
  get(uid: string, threadId: string, taskId: string): Promise<AsyncTaskDetail>;
  /** Stops a task that has not ended; resolves once it has (or after 3 s, still stopping). */
  cancel(uid: string, threadId: string, taskId: string): Promise<AsyncTask>;
  /** A follow-up message for the task's child, run after what it is doing now. */
  update(uid: string, threadId: string, taskId: string, message: string): Promise<AsyncTask>;
  /**
   * Answers the approval a `waiting` task asks for (langchain's `{ decisions }`, one per call it
   * waits on), checked before anything is written; the task goes on.
   */
  answer(uid: string, threadId: string, taskId: string, resume: unknown): Promise<AsyncTask>;
}

/** Starts a run on a parent thread for a task that ended (its notice as the message). */
export type ParentNotifier = (
  uid: string,
  parentThreadId: string,
  task: AsyncTask,
) => Promise<void>;

/** What the background tasks are made of. */
export interface AsyncTasksDeps {
  rows: AsyncTaskRepository;
  graphs: CompiledGraphs;
  saver: BaseCheckpointSaver;
  /** The main agent that started a task, as its owner sees it now. */
  parentAgent(uid: string, agentId: string): Promise<AgentRecord | undefined>;
  /** Throws `NOT_FOUND` unless `threadId` is `uid`'s. */
  checkThread(uid: string, threadId: string): Promise<void>;
}

/** How long a cancel waits for the process running the task to stop it, in ms. */
const CANCEL_WAIT_MS = 3000;

/** See the file's comment. */
export class AsyncTasks implements AsyncTasksApi {
  private runnerRef: AsyncTaskRunner | undefined;
  private notifier: ParentNotifier | undefined;

  constructor(private readonly deps: AsyncTasksDeps) {}

  /** The runner of this process (set once, after it is made with this service's hooks). */
  attach(runner: AsyncTaskRunner): void {
    this.runnerRef = runner;
  }

  /**
   * Who starts the run on a parent thread whose agent has `notify_parent: true` (the runtime's
   * own run by default; a server puts it through its queue).
   */
  setParentNotifier(notifier: ParentNotifier): void {
    this.notifier = notifier;
  }

  /** Called by the runner once a task ended or paused. */
  settled(task: AsyncTask, row: AsyncTaskRow): void {
    if (row.notify_parent !== 1 || task.status === "cancelled" || !this.notifier) return;
    void this.notifier(row.owner_uid, row.parent_thread_id, task).catch(() => undefined);
  }

  /** The tools' side, bound to the main agent `parent` (see `AsyncTaskHost`). */
  hostFor(parent: AgentRecord): AsyncTaskHost {
    return {
      start: async (scope, start) => {
        const current = (await this.deps.parentAgent(scope.uid, parent.id)) ?? parent;
        const limits = agentLimits(current.config_json.context, this.deps.graphs.processLimits());
        const taskId = taskIdFor(scope.threadId, start.toolCallId, start.aiMessageId);
        const outcome = await this.deps.rows.insertIfRoom(
          {
            taskId,
            parentThreadId: scope.threadId,
            uid: scope.uid,
            agentId: parent.id,
            subagentType: start.subagentType,
            childThreadId: childThreadIdFor(scope.threadId, start.subagentType, taskId),
            description: start.description,
            timeoutMs: limits.async_task_timeout_ms,
            notifyParent: current.config_json.context.notify_parent === true,
            firstInput: { kind: "message", text: start.description, id: inputMessageId(taskId, 0) },
          },
          limits.max_async_tasks,
        );
        if (outcome === "full") {
          const active = (await this.deps.rows.listForParent(scope.threadId)).filter(
            (row) => !isFinishedAsyncTask(taskOf(row).status),
          );
          throw refusal(
            "subagent_type",
            `refused: ${active.length} background tasks are active on this thread and at most ${limits.max_async_tasks} may be (max_async_tasks): wait until one ends (you are told), or cancel one of ${quoted(active.map((row) => row.task_id))}`,
          );
        }
        this.runner.kick();
        return taskOf(await this.own(scope.uid, scope.threadId, taskId));
      },
      check: async (scope, taskId) => this.check(scope, parent, taskId),
      update: (scope, taskId, message) => this.update(scope.uid, scope.threadId, taskId, message),
      cancel: (scope, taskId) => this.cancel(scope.uid, scope.threadId, taskId),
      list: (scope, status) => this.listOf(scope.uid, scope.threadId, status),
      current: async (scope, taskIds) =>
        (await this.listOf(scope.uid, scope.threadId, undefined)).filter((task) =>
          taskIds.includes(task.id),
        ),
    };
  }

  async list(
    uid: string,
    threadId: string,
    options: { status?: AsyncTaskStatus } = {},
  ): Promise<AsyncTask[]> {
    await this.deps.checkThread(uid, threadId);
    if (options.status !== undefined && !ASYNC_TASK_STATUSES.includes(options.status)) {
      throw refusal(
        "status",
        `status ${JSON.stringify(options.status)} is not a background task status: use one of ${quoted(ASYNC_TASK_STATUSES)}, or leave it out`,
      );
    }
    return this.listOf(uid, threadId, options.status);
  }

  async get(uid: string, threadId: string, taskId: string): Promise<AsyncTaskDetail> {
    await this.deps.checkThread(uid, threadId);
    const row = await this.own(uid, threadId, taskId);
    return { ...taskOf(row), result: row.result };
  }

  async cancel(uid: string, threadId: string, taskId: string): Promise<AsyncTask> {
    await this.deps.checkThread(uid, threadId);
    const row = await this.own(uid, threadId, taskId);
    const now = new Date().toISOString();
    // Not running anywhere: ended here and now. Running: asked, and stopped by its process.
    const stopped = await this.deps.rows.updateIf(taskId, ["pending", "waiting"], () => ({
      status: "cancelled",
      cancel_requested: 1,
      inputs: "[]",
      error: "cancelled",
      approval: null,
      finished_at: now,
    }));
    if (stopped) return taskOf(stopped);
    const asked = await this.deps.rows.updateIf(taskId, ["running"], () => ({
      cancel_requested: 1,
    }));
    if (!asked) {
      const ended = (await this.deps.rows.get(taskId)) ?? row;
      throw refusal(
        "task_id",
        `task_id "${taskId}" already ended (${ended.status}): there is nothing to cancel`,
      );
    }
    this.runner.cancelLocal(taskId);
    const deadline = Date.now() + CANCEL_WAIT_MS;
    while (Date.now() < deadline) {
      const current = await this.deps.rows.get(taskId);
      if (!current || isFinishedAsyncTask(taskOf(current).status)) return taskOf(current ?? asked);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    return taskOf(asked);
  }

  async update(uid: string, threadId: string, taskId: string, message: string): Promise<AsyncTask> {
    await this.deps.checkThread(uid, threadId);
    const row = await this.own(uid, threadId, taskId);
    if (message.trim().length === 0) {
      throw refusal("message", "message is empty: give the follow-up instruction for the subagent");
    }
    const updated = await this.deps.rows.updateIf(
      taskId,
      ["pending", "running", "completed", "failed", "timeout"],
      (current) => {
        const input: AsyncTaskInput = {
          kind: "message",
          text: message,
          id: inputMessageId(taskId, current.updates + 1),
        };
        const finished = isFinishedAsyncTask(taskOf(current).status);
        return {
          inputs: JSON.stringify([...inputsOf(current), input]),
          updates: current.updates + 1,
          // A finished task runs again, on the same child thread: queued like a new one.
          ...(finished ? { status: "pending", error: null, finished_at: "" } : {}),
        };
      },
    );
    if (!updated) {
      const current = (await this.deps.rows.get(taskId)) ?? row;
      const why =
        current.status === "waiting"
          ? "it waits for the user's approval; it goes on once the user answers"
          : "it was cancelled: start a new task with start_async_task";
      throw refusal("task_id", `task_id "${taskId}" takes no follow-up: ${why}`);
    }
    this.runner.kick();
    return taskOf(updated);
  }

  async answer(uid: string, threadId: string, taskId: string, resume: unknown): Promise<AsyncTask> {
    await this.deps.checkThread(uid, threadId);
    const row = await this.own(uid, threadId, taskId);
    const pending =
      row.approval === null ? undefined : (JSON.parse(row.approval) as PendingApproval);
    if (row.status !== "waiting" || !pending) {
      throw refusal(
        "task_id",
        `task_id "${taskId}" is ${row.status}, not waiting for an approval: there is nothing to answer`,
      );
    }
    const checked = await checkResume(row.child_thread_id, [pending], resume, async () => {
      const parent = await this.deps.parentAgent(uid, row.agent_id);
      const child = parent
        ? await this.deps.graphs.childGraph(uid, parent, row.subagent_type)
        : undefined;
      return child ? agentTools(child) : undefined;
    });
    const answered = await this.deps.rows.updateIf(taskId, ["waiting"], (current) => ({
      status: "pending",
      inputs: JSON.stringify([
        { kind: "resume", resume: checked[pending.id] },
        ...inputsOf(current),
      ]),
    }));
    if (!answered) {
      throw refusal("task_id", `task_id "${taskId}" was answered or cancelled meanwhile`);
    }
    this.runner.kick();
    return taskOf(answered);
  }

  /**
   * Cancels and forgets the tasks of a parent thread being deleted; their child threads (which
   * the deletion removes).
   */
  async deleteForParent(threadId: string): Promise<string[]> {
    const rows = await this.deps.rows.deleteForParent(threadId);
    for (const row of rows) this.runner.cancelLocal(row.task_id);
    return rows.map((row) => row.child_thread_id);
  }

  /** The tasks of a thread started or moved on since `since` (ISO), for its run's record. */
  async since(threadId: string, since: string): Promise<AsyncTask[]> {
    const rows = await this.deps.rows.listForParent(threadId);
    return rows.filter((row) => row.created_at >= since || row.updated_at >= since).map(taskOf);
  }

  /** The task of `uid` whose child thread `childThreadId` is, if any. */
  async ofChildThread(uid: string, childThreadId: string): Promise<AsyncTask | undefined> {
    if (!childThreadId.includes(BACKGROUND_CHILD_MARKER)) return undefined;
    const row = await this.deps.rows.findByChildThread(childThreadId);
    return row && row.owner_uid === uid ? taskOf(row) : undefined;
  }

  /** The id and text of the notice a parent thread gets for `task`. */
  static notice(task: AsyncTask): { id: string; text: string } {
    return { id: noticeId(task), text: noticeText(task) };
  }

  private async check(
    scope: ParentRunScope,
    parent: AgentRecord,
    taskId: string,
  ): Promise<AsyncTaskCheck> {
    const row = await this.own(scope.uid, scope.threadId, taskId);
    const task = taskOf(row);
    if (task.status !== "completed" || row.result === null) return { task, answer: null };
    const current = (await this.deps.parentAgent(scope.uid, parent.id)) ?? parent;
    const limits = agentLimits(current.config_json.context, this.deps.graphs.processLimits());
    const maxChars = scope.overrides.max_result_chars ?? limits.max_result_chars;
    return { task, answer: truncateAnswer(row.result, maxChars, row.child_thread_id) };
  }

  private async listOf(
    uid: string,
    threadId: string,
    status: AsyncTaskStatus | undefined,
  ): Promise<AsyncTask[]> {
    const rows = await this.deps.rows.listForParent(threadId);
    return rows
      .filter((row) => row.owner_uid === uid)
      .map(taskOf)
      .filter((task) => status === undefined || task.status === status);
  }

  /**
   * The task `taskId` of `uid`'s thread `threadId`. Another thread's or user's task is not
   * found: the message lists only this thread's ids.
   */
  private async own(uid: string, threadId: string, taskId: string): Promise<AsyncTaskRow> {
    const row = await this.deps.rows.get(taskId);
    if (row && row.owner_uid === uid && row.parent_thread_id === threadId) return row;
    const ids = (await this.listOf(uid, threadId, undefined)).map((task) => task.id);
    throw new SubagentGraphError(
      ErrorCode.NotFound,
      `unknown task_id ${JSON.stringify(taskId)}: ${ids.length > 0 ? `this thread's background tasks are ${quoted(ids)}` : "this thread has no background tasks"}`,
      { field: "task_id" },
    );
  }

  private get runner(): AsyncTaskRunner {
    if (!this.runnerRef) {
      throw new SubagentGraphError(
        ErrorCode.Internal,
        "background tasks were used before their runner was attached (runs/async-tasks/open.ts)",
      );
    }
    return this.runnerRef;
  }
}

function refusal(field: string, message: string): SubagentGraphError {
  return new SubagentGraphError(ErrorCode.Validation, message, { field });
}

function quoted(values: readonly string[]): string {
  return values.map((value) => JSON.stringify(value)).join(", ");
}
