/**
 * What the background-task tools need from the outside (README "Background subagents"),
 * injected so that `middleware/` holds no queue, store or runner: the runtime's background
 * tasks (`runs/async-tasks/`) implement it, bound to the calling agent by `graphs/`.
 */

import type { AsyncTaskStatus } from "../contract.js";
import type { AsyncTask } from "./async-task-records.js";
import type { ParentRunScope } from "./parent-scope.js";

/** A `start_async_task` call, as the host needs it. */
export interface AsyncTaskStart {
  subagentType: string;
  description: string;
  /** The tool call and the AI message that made it: the task id is derived from them, so the
   * same call run again (a crash before its step was saved) finds its task instead of a second. */
  toolCallId: string;
  aiMessageId: string;
}

/** A finished task's answer for `check_async_task`, cut at the caller's `max_result_chars`. */
export interface AsyncTaskCheck {
  task: AsyncTask;
  answer: string | null;
}

/**
 * The background tasks of the calling agent's thread. Every method refuses with a
 * `SubagentGraphError` whose message is written for the model (the value and the allowed ones);
 * the tools turn it into an error tool message.
 */
export interface AsyncTaskHost {
  start(scope: ParentRunScope, start: AsyncTaskStart): Promise<AsyncTask>;
  check(scope: ParentRunScope, taskId: string): Promise<AsyncTaskCheck>;
  update(scope: ParentRunScope, taskId: string, message: string): Promise<AsyncTask>;
  cancel(scope: ParentRunScope, taskId: string): Promise<AsyncTask>;
  list(scope: ParentRunScope, status: AsyncTaskStatus | undefined): Promise<AsyncTask[]>;
  /** The records of these tasks of the thread as they stand now (for notices). */
  current(scope: ParentRunScope, taskIds: readonly string[]): Promise<AsyncTask[]>;
}
