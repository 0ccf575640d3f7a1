/**
 * What the background-task tools and notices say to the model, written in one place.
 */

import { isFinishedAsyncTask } from "../contract.js";
import { describeApproval } from "./approval-request.js";
import type { AsyncTask } from "./async-task-records.js";

/** The heading above the background subagents in the system message. */
export const ASYNC_SUBAGENT_LIST_HEADING =
  "Subagents you can start in the background with `start_async_task` (it returns at once; you are told when a task ends, so do not poll):";

/** The name notice messages carry, so frontends can tell them from the user's own. */
export const ASYNC_NOTICE_NAME = "background_tasks";

/** The id of the notice of `task` reaching its status (one per task and status). */
export function noticeId(task: Pick<AsyncTask, "id" | "status" | "updates">): string {
  return `bg-notice-${task.id}-${task.updates}-${task.status}`;
}

/** A short notice of a task that ended or waits for a person, for the parent's next model call. */
export function noticeText(task: AsyncTask): string {
  const head = `[Background task ${task.id} (${task.subagent_type}) ${task.status}]`;
  if (task.status === "waiting" && task.approval) {
    return `${head} It waits for the user's approval of ${describeApproval(task.approval.value)}; the user answers it.`;
  }
  if (task.status === "completed") {
    return `${head} ${task.result_preview}${task.result_preview.length >= 200 ? "…" : ""}\nCall check_async_task with task_id "${task.id}" for the whole answer.`;
  }
  return `${head} ${task.error ?? ""}`.trim();
}

/** One line per task, for `list_async_tasks` and the start/update answers. */
export function statusLine(task: AsyncTask): string {
  const what = `task_id "${task.id}" (${task.subagent_type}): ${task.status}`;
  if (task.status === "waiting" && task.approval) {
    return `${what}, waiting for the user's approval of ${describeApproval(task.approval.value)}`;
  }
  if (task.status === "completed") return `${what}: ${task.result_preview}`;
  if (isFinishedAsyncTask(task.status)) return `${what}: ${task.error ?? ""}`;
  return `${what}; task: ${oneLine(task.description, 120)}`;
}

function oneLine(text: string, max: number): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max)}…` : flat;
}
