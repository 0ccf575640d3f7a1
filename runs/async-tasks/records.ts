/**
 * A background task's row as every door shows it (`AsyncTask`), and the ids a task is known by.
 */

import { createHash } from "node:crypto";
import {
  ASYNC_TASK_STATUSES,
  type AsyncTaskStatus,
  BACKGROUND_CHILD_MARKER,
} from "../../contract.js";
import type { PendingApproval } from "../../middleware/approval-request.js";
import type { AsyncTask } from "../../middleware/async-task-records.js";
import { truncateAnswer } from "../../middleware/truncate.js";
import type { AsyncTaskInput, AsyncTaskRow } from "../../store/async-tasks.js";

/** Characters of a task's answer its record shows (`result_preview`). */
const PREVIEW_CHARS = 200;

/** The record of a task's row. */
export function taskOf(row: AsyncTaskRow): AsyncTask {
  return {
    id: row.task_id,
    subagent_type: row.subagent_type,
    child_thread_id: row.child_thread_id,
    description: row.description,
    status: statusOf(row.status),
    created_at: row.created_at,
    updated_at: row.updated_at,
    finished_at: row.finished_at,
    result_preview: row.result === null ? "" : truncateAnswer(row.result, PREVIEW_CHARS),
    error: row.error,
    updates: row.updates,
    approval: row.approval === null ? null : (JSON.parse(row.approval) as PendingApproval),
  };
}

/** The inputs a task has yet to run, oldest first. */
export function inputsOf(row: AsyncTaskRow): AsyncTaskInput[] {
  const parsed: unknown = JSON.parse(row.inputs);
  return Array.isArray(parsed) ? (parsed as AsyncTaskInput[]) : [];
}

function statusOf(status: string): AsyncTaskStatus {
  return (ASYNC_TASK_STATUSES as readonly string[]).includes(status)
    ? (status as AsyncTaskStatus)
    : "failed";
}

/**
 * The id of the task a `start_async_task` call starts: a hash of the parent thread, the tool
 * call and the AI message that made it, so the same call run again (its step not saved before a
 * crash) finds its task instead of starting a second one.
 */
export function taskIdFor(parentThreadId: string, toolCallId: string, aiMessageId: string): string {
  const hex = createHash("sha256")
    .update([parentThreadId, toolCallId, aiMessageId].join("\0"))
    .digest("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}

/** A task's child thread: `<parent>_bg_<slug>_<8 hex of the task id>`. */
export function childThreadIdFor(parentThreadId: string, slug: string, taskId: string): string {
  return `${parentThreadId}${BACKGROUND_CHILD_MARKER}${slug}_${taskId.slice(0, 8)}`;
}

/** The id of the message that gives a task its `n`th input (0: its description). */
export function inputMessageId(taskId: string, n: number): string {
  return `bg-input-${taskId}-${n}`;
}
