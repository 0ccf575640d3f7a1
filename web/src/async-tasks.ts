/**
 * A thread's background tasks (README "Background subagents") as the console's panel shows and
 * answers them. Pure functions over plain data (no DOM), unit-tested without a browser.
 *
 * The panel lists `GET /threads/:id/async_tasks` and reads the list again every second while a
 * task is active ({@link shouldPoll}). It reads it once more whenever the conversation shows a
 * new call of a tool that starts, updates or cancels one ({@link taskToolCallsKey}): the parent's
 * run streams those calls, so a task started mid-run shows without polling every run of every
 * thread.
 */

import {
  ASYNC_TASK_TOOL_NAMES,
  type AsyncTaskStatus,
  isFinishedAsyncTask,
} from "../../contract.js";
import type { AsyncTask } from "../../middleware/async-task-records.js";
import { type Decision, isApprovalRequest, type PendingApproval } from "./approvals.js";
import type { ChatMessage, SubagentCard } from "./chat-state.js";

export type { AsyncTask, AsyncTaskStatus };

/** A task as `GET /threads/:id/async_tasks/:task_id` answers it: with its full final answer. */
export type AsyncTaskWithResult = AsyncTask & { result: string | null };

/** The body of `POST .../async_tasks/:task_id/answer`. */
export interface AsyncTaskAnswer {
  resume: { decisions: Decision[] };
}

/** How each status reads in the panel. */
export const ASYNC_TASK_STATUS_TEXT: Record<AsyncTaskStatus, string> = {
  pending: "queued",
  running: "running",
  waiting: "waiting for approval",
  completed: "completed",
  failed: "failed",
  cancelled: "cancelled",
  timeout: "timed out",
};

/** Whether the task still holds a place (queued, running or waiting): it can be cancelled. */
export function isActiveTask(task: Pick<AsyncTask, "status">): boolean {
  return !isFinishedAsyncTask(task.status);
}

/**
 * Whether the panel should read the list again in a second: while a task is active (its status
 * will change without anything on the page saying so), unless the thread is gone (404).
 */
export function shouldPoll(tasks: readonly AsyncTask[] | undefined, gone: boolean): boolean {
  return !gone && tasks !== undefined && tasks.some(isActiveTask);
}

/** Where each status goes in the panel: what needs the person first, then what runs. */
const STATUS_RANK: Record<AsyncTaskStatus, number> = {
  waiting: 0,
  running: 1,
  pending: 2,
  completed: 3,
  failed: 3,
  cancelled: 3,
  timeout: 3,
};

/**
 * The tasks in the panel's order: those waiting for approval, then running, then queued (each
 * oldest first, the order they were started in), then the ended ones, the latest to end first.
 * The server lists oldest first; ties keep its order.
 */
export function orderTasks(tasks: readonly AsyncTask[]): AsyncTask[] {
  return tasks
    .map((task, index) => ({ task, index }))
    .sort((a, b) => {
      const rank = STATUS_RANK[a.task.status] - STATUS_RANK[b.task.status];
      if (rank !== 0) return rank;
      if (!isActiveTask(a.task)) {
        const ended = b.task.finished_at.localeCompare(a.task.finished_at);
        if (ended !== 0) return ended;
      }
      return a.index - b.index;
    })
    .map(({ task }) => task);
}

/** "2 running, 1 waiting for approval, 3 ended": the panel's summary line. */
export function tasksSummary(tasks: readonly AsyncTask[]): string {
  const parts: string[] = [];
  for (const status of ["waiting", "running", "pending"] as const) {
    const count = tasks.filter((task) => task.status === status).length;
    if (count > 0) parts.push(`${count} ${ASYNC_TASK_STATUS_TEXT[status]}`);
  }
  const ended = tasks.filter((task) => !isActiveTask(task)).length;
  if (ended > 0) parts.push(`${ended} ended`);
  return parts.join(", ");
}

/**
 * `tasks` with `updated` in place of the record of the same id (a cancel's or an answer's
 * answer, shown before the next listing), or appended when it is new.
 */
export function withTask(tasks: readonly AsyncTask[], updated: AsyncTask): AsyncTask[] {
  const index = tasks.findIndex((task) => task.id === updated.id);
  if (index === -1) return [...tasks, updated];
  return tasks.map((task, at) => (at === index ? updated : task));
}

/**
 * The request a `waiting` task's child is paused on, as the console's approval card takes it;
 * undefined for any other status or a record whose request is not one (nothing to answer).
 */
export function taskApproval(task: AsyncTask): PendingApproval | undefined {
  if (task.status !== "waiting" || !task.approval) return undefined;
  const { id, value } = task.approval;
  return isApprovalRequest(value) ? { id, value } : undefined;
}

/**
 * The answer to a waiting task's request: the decisions in order, one per gated call (the
 * approval card's `decisionsOf` checked them against the request).
 */
export function answerBody(decisions: readonly Decision[]): AsyncTaskAnswer {
  return { resume: { decisions: [...decisions] } };
}

/** The tools whose calls change the thread's tasks (`check` and `list` only read them). */
const CHANGING_TOOLS: ReadonlySet<string> = new Set([
  ASYNC_TASK_TOOL_NAMES.start,
  ASYNC_TASK_TOOL_NAMES.update,
  ASYNC_TASK_TOOL_NAMES.cancel,
]);

/**
 * A key that changes when the conversation shows a new answered call of a tool that starts,
 * updates or cancels a task: the panel lists the tasks again then. Answered (a tool message),
 * because the task exists once the tool has answered, not when the model asked for it. A tool
 * message is matched by its tool's name, or, when it carries none, by the call it answers.
 */
export function taskToolCallsKey(messages: readonly ChatMessage[]): string {
  const calls = new Set(
    messages.flatMap((message) =>
      message.toolCalls.filter((call) => CHANGING_TOOLS.has(call.name)).map((call) => call.id),
    ),
  );
  return messages
    .filter(
      (message) =>
        message.role === "tool" &&
        (message.toolName
          ? CHANGING_TOOLS.has(message.toolName)
          : calls.has(message.toolCallId ?? "")),
    )
    .map((message) => message.toolCallId ?? message.id)
    .join(",");
}

/**
 * The task as the subagent dialog (`ChildThreadDialog`) takes a `task` call's card: its child
 * thread, read through the parent like any child's. A queued task shows as running: the dialog
 * only asks whether to keep reading.
 */
export function taskCard(task: AsyncTask): SubagentCard {
  const status =
    task.status === "pending" ? "running" : (task.status satisfies SubagentCard["status"]);
  return {
    id: task.id,
    subagentType: task.subagent_type,
    description: task.description,
    status,
    childThreadId: task.child_thread_id,
    startedAt: task.created_at,
    finishedAt: task.finished_at || undefined,
    rounds: 0,
    maxRoundsReached: false,
    error: task.error ?? undefined,
    preview: task.result_preview,
    artifacts: [],
    messages: [],
  };
}
