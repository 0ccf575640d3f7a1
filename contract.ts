/**
 * The names every floor and every door agrees on: the `task` tool, the stream namespace a
 * subagent's events come under, the custom events the task tool writes, and the run statuses.
 * On the leaf floor and importing nothing, so the server, the CLI, the library and the browser
 * console (which imports only this file's values from below) read one definition.
 */

/** The tool a main agent delegates with (Deep Agents and the official hooks use the same name). */
export const TASK_TOOL_NAME = "task";

/**
 * The namespace segment prefix LangGraph gives a graph run inside the `tools` node: a subagent's
 * events stream under `tools:<task id>`, the task of the `tools` node that made the `task` call,
 * which is where LangChain's hooks (`isSubagentNamespace` in `@langchain/langgraph-sdk/ui`) look
 * for them. A subagent of a subagent adds a second segment.
 */
export const SUBAGENT_NAMESPACE_PREFIX = "tools:";

/** Whether a stream namespace is a subagent's (one of its segments is a `tools:` one). */
export function isSubagentNamespace(namespace: readonly string[] | undefined): boolean {
  return (namespace ?? []).some((segment) => segment.startsWith(SUBAGENT_NAMESPACE_PREFIX));
}

/**
 * The namespace of the direct subagent an event belongs to (the path up to and including its
 * first `tools:` segment), or undefined for the parent's own events. Events of a subagent's own
 * steps carry more segments after it.
 */
export function subagentNamespaceOf(
  namespace: readonly string[] | undefined,
): string[] | undefined {
  const index = (namespace ?? []).findIndex((segment) =>
    segment.startsWith(SUBAGENT_NAMESPACE_PREFIX),
  );
  return index < 0 ? undefined : (namespace ?? []).slice(0, index + 1);
}

/** How deep a namespace sits below the main agent: its number of `tools:` segments. */
export function subagentDepth(namespace: readonly string[] | undefined): number {
  return (namespace ?? []).filter((segment) => segment.startsWith(SUBAGENT_NAMESPACE_PREFIX))
    .length;
}

/** A namespace as one key (`|`-joined, as LangGraph names events and checkpoint namespaces). */
export function namespaceKey(namespace: readonly string[]): string {
  return namespace.join("|");
}

/**
 * The custom stream events (LangGraph `custom` mode) the task tool writes about a subagent, by
 * their `type` field.
 */
export const SUBAGENT_EVENTS = {
  started: "subagent_started",
  waiting: "subagent_waiting",
  finished: "subagent_finished",
} as const;
export type SubagentEventType = (typeof SUBAGENT_EVENTS)[keyof typeof SUBAGENT_EVENTS];

/** The statuses of a run, as the LangGraph API and its SDK (`RunStatus`) name them. */
export const RUN_STATUSES = [
  "pending",
  "running",
  "success",
  "error",
  "timeout",
  "interrupted",
] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];

/**
 * The statuses our runs are recorded with: a run here never ends `timeout` (a subagent's time
 * limit fails its `task` call, not the run).
 */
export const RECORDED_RUN_STATUSES = [
  "pending",
  "running",
  "success",
  "error",
  "interrupted",
] as const satisfies readonly RunStatus[];
export type RecordedRunStatus = (typeof RECORDED_RUN_STATUSES)[number];

/** The statuses of a run that has not ended yet. */
export const ACTIVE_RUN_STATUSES = ["pending", "running"] as const satisfies readonly RunStatus[];

/** Whether a run with this status has ended (no status: a run that is gone, so over). */
export function isFinishedStatus(status: string | undefined): boolean {
  return !(ACTIVE_RUN_STATUSES as readonly (string | undefined)[]).includes(status);
}

/**
 * The tools of background subagents (README "Background subagents"), with Deep Agents' names so
 * prompts and users carry over.
 */
export const ASYNC_TASK_TOOL_NAMES = {
  start: "start_async_task",
  check: "check_async_task",
  update: "update_async_task",
  cancel: "cancel_async_task",
  list: "list_async_tasks",
} as const;
export type AsyncTaskToolName = (typeof ASYNC_TASK_TOOL_NAMES)[keyof typeof ASYNC_TASK_TOOL_NAMES];

/**
 * The statuses of a background task: queued (`pending`), its child running (`running`) or
 * paused on an approval (`waiting`), and how it ended.
 */
export const ASYNC_TASK_STATUSES = [
  "pending",
  "running",
  "waiting",
  "completed",
  "failed",
  "cancelled",
  "timeout",
] as const;
export type AsyncTaskStatus = (typeof ASYNC_TASK_STATUSES)[number];

/** The statuses of a background task that holds one of its parent's `max_async_tasks` places. */
export const ACTIVE_ASYNC_TASK_STATUSES = [
  "pending",
  "running",
  "waiting",
] as const satisfies readonly AsyncTaskStatus[];

/** Whether a background task with this status has ended. */
export function isFinishedAsyncTask(status: AsyncTaskStatus): boolean {
  return !(ACTIVE_ASYNC_TASK_STATUSES as readonly AsyncTaskStatus[]).includes(status);
}

/** What marks a background task's child thread: `<parent>_bg_<slug>_<hex>`. */
export const BACKGROUND_CHILD_MARKER = "_bg_";
