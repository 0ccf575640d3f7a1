import { type ToolRuntime, tool } from "@langchain/core/tools";
import { createMiddleware } from "langchain";
import { formatSubagentListing } from "../util/subagent-listing.js";
import { dispatchTask } from "./dispatch.js";
import { subagentRunsState } from "./subagent-runs.js";
import {
  TASK_TOOL_NAME,
  type TaskArgs,
  type TaskMiddlewareOptions,
  taskArgsSchema,
} from "./task-types.js";

export type {
  AllowedSubagent,
  DispatchLimits,
  LoadedChild,
  TaskArgs,
  TaskMiddlewareOptions,
  TaskStreamEvent,
} from "./task-types.js";
export { TASK_TOOL_NAME } from "./task-types.js";

/**
 * The task middleware: adds the `task` tool, appends the allowed subagents to the system message
 * (`- slug: description` lines) and keeps `subagent_runs` in the parent's state.
 *
 * A call runs the subagent's own graph on its own child thread (same saver), starting from one
 * human message holding `description`, and hands back only the child's final assistant text
 * (see {@link dispatchTask}). Several calls of one model turn run concurrently.
 */
export function createTaskMiddleware(options: TaskMiddlewareOptions) {
  const listing = formatSubagentListing(options.subagents);
  const stateSchema = subagentRunsState(options.storage);

  const taskTool = tool(
    (args: TaskArgs, runtime: ToolRuntime) => dispatchTask(args, runtime, options),
    {
      name: TASK_TOOL_NAME,
      description:
        "Delegate a self-contained piece of work to a subagent and get back only its final answer. " +
        "Several task calls in one turn run in parallel.",
      schema: taskArgsSchema,
    },
  );

  return createMiddleware({
    name: "TaskMiddleware",
    ...(stateSchema ? { stateSchema } : {}),
    tools: [taskTool],
    wrapModelCall: async (request, handler) =>
      // concat() joins without a separator: start the section on its own paragraph.
      handler({ ...request, systemMessage: request.systemMessage.concat(`\n\n${listing}`) }),
  });
}
