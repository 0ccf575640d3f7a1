import { type AIMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { AsyncLocalStorageProviderSingleton } from "@langchain/core/singletons";
import { type ToolRuntime, tool } from "@langchain/core/tools";
import { Command, ReducedValue, StateSchema } from "@langchain/langgraph";
import { createMiddleware } from "langchain";
import { z } from "zod";
import {
  ASYNC_TASK_STATUSES,
  ASYNC_TASK_TOOL_NAMES,
  type AsyncTaskStatus,
  isFinishedAsyncTask,
} from "../contract.js";
import { ErrorCode, messageOf, SubagentGraphError } from "../errors.js";
import { messagesOf } from "../util/state-messages.js";
import { formatSubagentListing } from "../util/subagent-listing.js";
import type { AsyncTaskHost } from "./async-task-host.js";
import { type AsyncTask, asyncTaskSchema, upsertAsyncTasks } from "./async-task-records.js";
import {
  ASYNC_NOTICE_NAME,
  ASYNC_SUBAGENT_LIST_HEADING,
  noticeId,
  noticeText,
  statusLine,
} from "./async-task-text.js";
import { type ParentRunScope, parentScope } from "./parent-scope.js";
import type { AllowedSubagent } from "./task-types.js";

/** What the background-task middleware is built with. */
export interface AsyncTaskMiddlewareOptions {
  /** The resolved `async_subagents` (non-empty; the graph mounts no middleware otherwise). */
  subagents: readonly AllowedSubagent[];
  /** The runtime's background tasks, bound to the calling agent. */
  host: AsyncTaskHost;
}

/** The parent's `async_tasks` channel: records upserted by id (several calls write in one step). */
export const asyncTasksState = new StateSchema({
  async_tasks: new ReducedValue(
    z.array(asyncTaskSchema).default(() => []),
    {
      inputSchema: z.array(asyncTaskSchema).optional(),
      reducer: upsertAsyncTasks,
    },
  ),
});

const taskIdField = z.string().describe('The task_id that start_async_task returned ("…").');

/**
 * The background-task middleware (README "Background subagents"): Deep Agents' five tools,
 * the allowed subagents in the system message, `async_tasks` in the state, and before each
 * model call a notice of every task that ended (or waits for a person) since the state last
 * saw it, so the model learns of results without polling. No tool ever throws: a refusal is an
 * error tool message naming the value and the fix, so sibling calls go on.
 */
export function createAsyncTaskMiddleware(options: AsyncTaskMiddlewareOptions) {
  const { host } = options;
  const allowed = options.subagents.map((subagent) => subagent.slug);
  const listing = formatSubagentListing(options.subagents).replace(
    /^[^\n]*/,
    ASYNC_SUBAGENT_LIST_HEADING,
  );

  const start = tool(
    (args: { description: string; subagent_type: string }, runtime: ToolRuntime) =>
      answer(runtime, ASYNC_TASK_TOOL_NAMES.start, async (scope) => {
        if (!allowed.includes(args.subagent_type)) {
          throw refusal(
            `unknown subagent_type ${JSON.stringify(args.subagent_type)}: start_async_task takes one of ${quoted(allowed)}`,
          );
        }
        const id = toolCallIdOf(runtime);
        const task = await host.start(scope, {
          subagentType: args.subagent_type,
          description: args.description,
          toolCallId: id,
          aiMessageId: callingMessageId(runtime.state, id) ?? id,
        });
        return {
          content: `Started background task_id "${task.id}" (${task.subagent_type}). It runs while the conversation goes on; you are told when it ends (or call check_async_task).`,
          tasks: [task],
        };
      }),
    {
      name: ASYNC_TASK_TOOL_NAMES.start,
      description:
        "Start a subagent on a self-contained task in the background and get its task_id at once. Use it for long work; the conversation goes on meanwhile and you are told when the task ends.",
      schema: z.object({
        description: z
          .string()
          .min(1)
          .describe(
            "The complete, self-contained task: the subagent sees nothing else of this conversation.",
          ),
        subagent_type: z
          .string()
          .describe("The slug of one of the background subagents listed in your instructions."),
      }),
    },
  );

  const check = tool(
    (args: { task_id: string }, runtime: ToolRuntime) =>
      answer(runtime, ASYNC_TASK_TOOL_NAMES.check, async (scope) => {
        const { task, answer: text } = await host.check(scope, args.task_id);
        const content =
          task.status === "completed"
            ? `${statusLine({ ...task, result_preview: "" }).replace(/: $/, "")}\nAnswer:\n${text ?? ""}`
            : statusLine(task);
        return { content, tasks: [task] };
      }),
    {
      name: ASYNC_TASK_TOOL_NAMES.check,
      description:
        "The status of a background task, with its final answer once it completed, or the approval it waits for.",
      schema: z.object({ task_id: taskIdField }),
    },
  );

  const update = tool(
    (args: { task_id: string; message: string }, runtime: ToolRuntime) =>
      answer(runtime, ASYNC_TASK_TOOL_NAMES.update, async (scope) => {
        const task = await host.update(scope, args.task_id, args.message);
        return {
          content: `Sent the follow-up to task_id "${task.id}" (${task.subagent_type}); it runs after what the subagent is doing now. You are told when it ends.`,
          tasks: [task],
        };
      }),
    {
      name: ASYNC_TASK_TOOL_NAMES.update,
      description:
        "Send a follow-up instruction to a background task (running or finished): its subagent continues on its own thread with it.",
      schema: z.object({
        task_id: taskIdField,
        message: z.string().min(1).describe("The follow-up instruction for the subagent."),
      }),
    },
  );

  const cancel = tool(
    (args: { task_id: string }, runtime: ToolRuntime) =>
      answer(runtime, ASYNC_TASK_TOOL_NAMES.cancel, async (scope) => {
        const task = await host.cancel(scope, args.task_id);
        return { content: `Cancelled ${statusLine(task)}`, tasks: [task] };
      }),
    {
      name: ASYNC_TASK_TOOL_NAMES.cancel,
      description: "Stop a background task that has not ended.",
      schema: z.object({ task_id: taskIdField }),
    },
  );

  const list = tool(
    (args: { status?: AsyncTaskStatus | undefined }, runtime: ToolRuntime) =>
      answer(runtime, ASYNC_TASK_TOOL_NAMES.list, async (scope) => {
        const tasks = await host.list(scope, args.status);
        const content =
          tasks.length === 0
            ? `No background tasks${args.status ? ` with status ${args.status}` : ""} on this thread.`
            : tasks.map(statusLine).join("\n");
        return { content, tasks };
      }),
    {
      name: ASYNC_TASK_TOOL_NAMES.list,
      description: "The background tasks of this conversation with their statuses.",
      schema: z.object({
        status: z
          .enum(ASYNC_TASK_STATUSES)
          .optional()
          .describe("Only tasks with this status; omit for all."),
      }),
    },
  );

  return createMiddleware({
    name: "AsyncTaskMiddleware",
    stateSchema: asyncTasksState,
    tools: [start, check, update, cancel, list],
    beforeModel: async (state, runtime) => {
      const known = (state as { async_tasks?: AsyncTask[] }).async_tasks ?? [];
      // Only tasks the state still sees active can have moved on: a thread with none costs no read.
      const watched = known.filter((task) => !isFinishedAsyncTask(task.status));
      if (watched.length === 0) return undefined;
      let scope: ParentRunScope;
      try {
        // A hook is given only the context keys its middleware declares (langchain filters by
        // `contextSchema`), and declaring the run's would fold them into the agent's own schema:
        // the node's config, which LangChain keeps for the call, holds the run's whole context.
        const config = AsyncLocalStorageProviderSingleton.getRunnableConfig() as
          | { context?: unknown; configurable?: unknown }
          | undefined;
        scope = parentScope(config?.context, config?.configurable ?? runtime.configurable);
      } catch {
        // A graph run without our context (by hand): it has no tasks to tell of.
        return undefined;
      }
      const current = await host.current(
        scope,
        watched.map((task) => task.id),
      );
      const moved = current.filter((task) => {
        const before = watched.find((seen) => seen.id === task.id);
        return before?.status !== task.status || before.updates !== task.updates;
      });
      if (moved.length === 0) return undefined;
      const seenIds = new Set(messagesOf(state).map((message) => message.id));
      const notices = moved
        .filter((task) => task.status === "waiting" || isFinishedAsyncTask(task.status))
        .filter((task) => !seenIds.has(noticeId(task)))
        .map(noticeMessage);
      return { async_tasks: moved, ...(notices.length > 0 ? { messages: notices } : {}) };
    },
    wrapModelCall: async (request, handler) =>
      handler({ ...request, systemMessage: request.systemMessage.concat(`\n\n${listing}`) }),
  });
}

/** The notice of a task, as a message of the conversation (the notify run's input has its id). */
export function noticeMessage(task: AsyncTask): HumanMessage {
  return new HumanMessage({
    content: noticeText(task),
    id: noticeId(task),
    name: ASYNC_NOTICE_NAME,
  });
}

/**
 * Runs one tool call: its tool message and records, or an error tool message when the host
 * refuses (its message is for the model) or fails.
 */
async function answer(
  runtime: ToolRuntime,
  name: string,
  body: (scope: ParentRunScope) => Promise<{ content: string; tasks: AsyncTask[] }>,
): Promise<Command | ToolMessage> {
  const toolCallId = toolCallIdOf(runtime);
  try {
    const scope = parentScope(runtime.context, runtime.configurable);
    const { content, tasks } = await body(scope);
    return new Command({
      update: {
        messages: [new ToolMessage({ content, tool_call_id: toolCallId, name, artifact: tasks })],
        async_tasks: tasks,
      },
    });
  } catch (error) {
    const reason = SubagentGraphError.isInstance(error)
      ? error.message
      : `${name} failed: ${messageOf(error)}; try again`;
    return new ToolMessage({ content: reason, tool_call_id: toolCallId, name, status: "error" });
  }
}

function refusal(message: string): SubagentGraphError {
  return new SubagentGraphError(ErrorCode.Validation, message, { field: "subagent_type" });
}

function toolCallIdOf(runtime: ToolRuntime): string {
  return runtime.toolCall?.id ?? runtime.toolCallId;
}

/** The id of the AI message in the parent's state that made `toolCallId`. */
function callingMessageId(state: unknown, toolCallId: string): string | undefined {
  for (const message of messagesOf(state)) {
    if (message.getType() !== "ai") continue;
    const calls = (message as AIMessage).tool_calls ?? [];
    if (calls.some((call) => call.id === toolCallId)) return message.id;
  }
  return undefined;
}

function quoted(names: readonly string[]): string {
  return names.map((name) => JSON.stringify(name)).join(", ");
}
