/**
 * How the command line shows background tasks (README "Background subagents"): the section of
 * `threads show`, and the line a chat prints when one ends. Pure: no I/O, no clock, so the
 * tests drive it with plain records.
 */

import { type AsyncTaskStatus, isFinishedAsyncTask } from "../contract.js";
import { describeApproval } from "../middleware/approval-request.js";
import type { AsyncTask } from "../middleware/async-task-records.js";
import { columns, oneLine, plural } from "./text.js";

/** How many characters of a task id are shown: enough to tell a thread's tasks apart. */
export const SHORT_ID_CHARS = 8;
/** How much of a task's description a row of `threads show` keeps. */
const DESCRIPTION_CHARS = 40;
/** How much of a result preview or error a line keeps. */
const OUTCOME_CHARS = 100;

/** What marks a chat's line about a background task, apart from the answer it may interrupt. */
export const BACKGROUND_MARK = "[background]";

/** Statuses as people read them. */
const STATUS_WORDS: Readonly<Record<AsyncTaskStatus, string>> = {
  pending: "pending",
  running: "running",
  waiting: "waiting",
  completed: "completed",
  failed: "failed",
  cancelled: "cancelled",
  timeout: "timed out",
};

/** The start of a task id, with `…` when it was cut (the full id is in the HTTP API and state). */
export function shortTaskId(id: string): string {
  const chars = Array.from(id);
  return chars.length <= SHORT_ID_CHARS ? id : `${chars.slice(0, SHORT_ID_CHARS).join("")}…`;
}

/**
 * What a task came to, on one line: the start of its answer when it completed, why when it
 * failed, was cancelled or timed out, what it waits for when it is paused; "" while it runs.
 */
export function taskOutcome(task: AsyncTask): string {
  if (task.status === "waiting") {
    return task.approval ? `waits for approval of ${describeApproval(task.approval.value)}` : "";
  }
  if (!isFinishedAsyncTask(task.status)) return "";
  const text = task.status === "completed" ? task.result_preview : (task.error ?? "");
  return oneLine(text, OUTCOME_CHARS);
}

/** How many of `tasks` have not ended (pending, running or waiting). */
export function activeCount(tasks: readonly AsyncTask[]): number {
  return tasks.filter((task) => !isFinishedAsyncTask(task.status)).length;
}

/**
 * The "background tasks" section of `threads show`: a count line, then one row per task
 * (short id, subagent, status, description, outcome), oldest first as given. No lines when the
 * thread has no background tasks.
 *
 * @example
 * backgroundTasksSection(tasks).join("\n")
 * // background tasks: 2 (1 active)
 * // ID         SUBAGENT    STATUS     TASK                 RESULT
 * // 3f2a1b2c…  researcher  completed  find the sources     Three sources: …
 * // 9c01d2e3…  writer      running   draft the summary
 */
export function backgroundTasksSection(tasks: readonly AsyncTask[]): string[] {
  if (tasks.length === 0) return [];
  return [
    `background tasks: ${tasks.length} (${activeCount(tasks)} active)`,
    columns([
      ["ID", "SUBAGENT", "STATUS", "TASK", "RESULT"],
      ...tasks.map((task) => [
        shortTaskId(task.id),
        task.subagent_type,
        STATUS_WORDS[task.status],
        oneLine(task.description, DESCRIPTION_CHARS),
        taskOutcome(task),
      ]),
    ]),
  ];
}

/**
 * The line a chat prints when a background task of its thread ends.
 *
 * @example
 * finishedTaskLine(task) // "[background] researcher task 3f2a1b2c… completed: Three sources: …"
 */
export function finishedTaskLine(task: AsyncTask): string {
  const outcome = taskOutcome(task);
  return `${BACKGROUND_MARK} ${task.subagent_type} task ${shortTaskId(task.id)} ${STATUS_WORDS[task.status]}${outcome ? `: ${outcome}` : ""}`;
}

/**
 * The line a chat leaves when tasks of its thread have not ended as it exits. Closing the
 * runtime hands them back to the queue (`runs/async-tasks/runner.ts`): the next process on the
 * same data (a chat, `serve`, a fleet's worker) takes them up.
 */
export function stillActiveLine(active: number, showCommand: string): string {
  const them = active === 1 ? "it" : "them";
  return `${BACKGROUND_MARK} ${plural(active, "task")} not ended yet: the next subagent-graph process on this data (a chat, serve) goes on with ${them}; ${showCommand} shows ${them}`;
}

/**
 * Which tasks of one thread have ended since the chat began, each told once. Tasks that had
 * already ended when the chat opened the thread are passed to the constructor: they are old
 * news and never told.
 */
export class FinishedTasks {
  readonly #told: Set<string>;

  /** @param alreadyFinished the thread's tasks as listed when the chat opened it. */
  constructor(alreadyFinished: readonly AsyncTask[] = []) {
    this.#told = new Set(
      alreadyFinished.filter((task) => isFinishedAsyncTask(task.status)).map((task) => task.id),
    );
  }

  /** The tasks of `tasks` (a fresh listing) that ended and were not told yet; now they are. */
  take(tasks: readonly AsyncTask[]): AsyncTask[] {
    const fresh = tasks.filter(
      (task) => isFinishedAsyncTask(task.status) && !this.#told.has(task.id),
    );
    for (const task of fresh) this.#told.add(task.id);
    return fresh;
  }
}
