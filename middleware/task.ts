import {
  type AIMessage,
  type BaseMessage,
  HumanMessage,
  ToolMessage,
} from "@langchain/core/messages";
import { type ToolRuntime, tool } from "@langchain/core/tools";
import { Command } from "@langchain/langgraph";
import { createMiddleware } from "langchain";
import { z } from "zod";
import { makeChildThreadId } from "../checkpoints/child-thread-id.js";
import { type ChildGraph, childRunConfig } from "./child-run.js";
import { type SubagentRun, type SubagentUsage, subagentRunsState } from "./subagent-runs.js";
import { truncateAnswer } from "./truncate.js";
import { messageText } from "../util/message-text.js";

/** The name of the delegation tool. */
export const TASK_TOOL_NAME = "task";

/** A subagent the calling agent may use: the resolved allow-list entry. */
export interface AllowedSubagent {
  slug: string;
  description: string;
}

/** Dispatch limits of the calling agent, re-read on every `task` call. */
export interface DispatchLimits {
  /** The tool result is cut to this many characters (code points). */
  maxResultChars: number;
  /** Per-child time limit; undefined = none. */
  subagentTimeoutMs: number | undefined;
  /** Most task calls one model turn may make; a turn with more has every task call refused. */
  maxParallelSubagents: number;
}

/** The caller's identity and scopes, read from the parent run's context. */
export interface ParentRunScope {
  uid: string;
  threadId: string;
  fileThreadId: string;
}

/**
 * Everything the middleware needs from the outside, injected so that `middleware/` never imports
 * `backends/` (the child's graph comes from a factory it is handed).
 */
export interface TaskMiddlewareOptions {
  /** The resolved allow-list (non-empty; the graph mounts no middleware otherwise). */
  subagents: readonly AllowedSubagent[];
  /**
   * Loads the subagent's current graph for `uid`, re-checking visibility at dispatch time;
   * undefined when the subagent is no longer visible (deleted, unshared).
   */
  loadChild(slug: string, scope: ParentRunScope): Promise<ChildGraph | undefined>;
  /** Current dispatch limits (config re-read on each dispatch: no restart needed). */
  limits(): DispatchLimits;
}

const taskArgs = z.object({
  description: z
    .string()
    .min(1)
    .describe(
      "The complete, self-contained task for the subagent: it sees nothing else of this conversation.",
    ),
  subagent_type: z
    .string()
    .describe("The slug of one of the subagents listed in your instructions."),
});

/** Custom stream events the task tool emits (stream mode `custom`). */
export type TaskStreamEvent =
  | {
      type: "subagent_started";
      id: string;
      subagent_type: string;
      child_thread_id: string;
      description: string;
      started_at: string;
    }
  | { type: "subagent_finished"; run: SubagentRun };

/**
 * The task middleware: adds the `task` tool, appends the allowed subagents to the system message
 * and keeps `subagent_runs` in the parent's state.
 *
 * A call runs the subagent's own graph on its own child thread (same saver), starting from one
 * human message holding `description`, and hands back only the child's final assistant text.
 * It never throws: an unknown subagent, a failing, cancelled or timed-out child all come back as
 * an error ToolMessage the model can read, so sibling calls and the parent run carry on.
 */
export function createTaskMiddleware(options: TaskMiddlewareOptions) {
  const allowed = new Map(options.subagents.map((subagent) => [subagent.slug, subagent]));
  const listing = [
    "Subagents you can call with the `task` tool:",
    ...options.subagents.map((subagent) => `- ${subagent.slug}: ${oneLine(subagent.description)}`),
  ].join("\n");

  const taskTool = tool(
    async (args: z.infer<typeof taskArgs>, runtime: ToolRuntime) => {
      const toolCallId = runtime.toolCall?.id ?? runtime.toolCallId;
      const started = new Date();
      const refuse = (message: string) => errorResult(toolCallId, message);
      const scope = parentScope(runtime.context, runtime.configurable);
      if (!scope) {
        // Not the model's fault and not fatal for the run: the graph was invoked without the
        // context the runtime always sets (e.g. by hand). Say what is missing.
        return refuse(
          "task tool: this run's context has no uid or thread_id; run the graph through createRuntime() or pass context { uid, thread_id }",
        );
      }

      const limits = options.limits();
      // createAgent sends each tool call to the tools node separately, so the batch is seen only
      // through the calling AI message: every call of an over-cap turn reaches the same verdict,
      // before any subagent model call (also when the turn is resumed).
      const caller = callingMessage(runtime.state, toolCallId);
      const turnTaskCalls =
        caller?.tool_calls?.filter((c) => c.name === TASK_TOOL_NAME).length ?? 1;
      if (turnTaskCalls > limits.maxParallelSubagents) {
        return refuse(
          `refused: this turn made ${turnTaskCalls} task calls but at most ${limits.maxParallelSubagents} may run at once (max_parallel_subagents); make at most ${limits.maxParallelSubagents} task calls per turn`,
        );
      }
      if (!allowed.has(args.subagent_type)) {
        return refuse(unknownSubagentMessage(args.subagent_type, [...allowed.keys()]));
      }
      const child = await options.loadChild(args.subagent_type, scope);
      if (!child) return refuse(unknownSubagentMessage(args.subagent_type, [...allowed.keys()]));

      const childThreadId = makeChildThreadId({
        parentThreadId: scope.threadId,
        slug: args.subagent_type,
        toolCallId,
        aiMessageId: caller?.id ?? toolCallId,
      });
      const timeout =
        limits.subagentTimeoutMs === undefined
          ? undefined
          : AbortSignal.timeout(limits.subagentTimeoutMs);
      const runSignal = runtime.signal ?? new AbortController().signal;
      const signal = timeout ? AbortSignal.any([runSignal, timeout]) : runSignal;
      const write = (event: TaskStreamEvent) => runtime.writer?.(event);
      write({
        type: "subagent_started",
        id: toolCallId,
        subagent_type: args.subagent_type,
        child_thread_id: childThreadId,
        description: args.description,
        started_at: started.toISOString(),
      });

      const base = {
        id: toolCallId,
        subagent_type: args.subagent_type,
        child_thread_id: childThreadId,
        description: args.description,
        started_at: started.toISOString(),
        artifacts: [],
      };
      let run: SubagentRun;
      let content: string;
      try {
        const config = childRunConfig({
          childThreadId,
          signal,
          parentConfigurable: runtime.configurable,
          context: {
            uid: scope.uid,
            thread_id: childThreadId,
            parent_thread_id: scope.threadId,
            file_thread_id: scope.fileThreadId,
            skills_thread_id: childThreadId,
            is_subagent_runtime: true,
          },
        });
        const messages = await runChild(child, args.description, config);
        const answer = finalAnswer(messages);
        content = truncateAnswer(answer, limits.maxResultChars, childThreadId);
        run = {
          ...base,
          status: "completed",
          rounds: countRounds(messages),
          max_rounds_reached: false,
          finished_at: new Date().toISOString(),
          result_preview: truncateAnswer(answer, 200),
          error: null,
          usage: sumUsage(messages),
        };
      } catch (error) {
        // Classify by which signal fired, never by the error's shape: an abort may surface as
        // AbortError, TimeoutError or a plain Error("Abort").
        const status = timeout?.aborted ? "timeout" : runSignal.aborted ? "cancelled" : "failed";
        const reason =
          status === "timeout"
            ? `timed out after ${limits.subagentTimeoutMs} ms`
            : status === "cancelled"
              ? "cancelled with the parent run"
              : errorMessage(error);
        content = `subagent "${args.subagent_type}" ${status === "failed" ? `failed: ${reason}` : reason}`;
        run = {
          ...base,
          status,
          rounds: 0,
          max_rounds_reached: false,
          finished_at: new Date().toISOString(),
          result_preview: "",
          error: reason,
          usage: { input_tokens: 0, output_tokens: 0, total_tokens: 0 },
        };
      }
      write({ type: "subagent_finished", run });
      return new Command({
        update: {
          messages: [
            new ToolMessage({
              content,
              tool_call_id: toolCallId,
              name: TASK_TOOL_NAME,
              status: run.status === "completed" ? "success" : "error",
              artifact: run,
            }),
          ],
          subagent_runs: [run],
        },
      });
    },
    {
      name: TASK_TOOL_NAME,
      description:
        "Delegate a self-contained piece of work to a subagent and get back only its final answer. " +
        "Several task calls in one turn run in parallel.",
      schema: taskArgs,
    },
  );

  return createMiddleware({
    name: "TaskMiddleware",
    stateSchema: subagentRunsState,
    tools: [taskTool],
    wrapModelCall: async (request, handler) =>
      handler({ ...request, systemMessage: request.systemMessage.concat(`\n\n${listing}`) }),
  });
}

/**
 * Runs the child, or picks up where it stopped: a child thread that already has checkpoints is
 * the same call resumed after a crash (its id is stable for the same checkpoint), so an
 * unfinished child continues from its last checkpoint and a finished one is not run again.
 */
async function runChild(
  child: ChildGraph,
  description: string,
  config: ReturnType<typeof childRunConfig>,
): Promise<BaseMessage[]> {
  const existing = await child.getState(config);
  const existingMessages = messagesOf(existing.values);
  if (existingMessages.length === 0) {
    const result = await child.invoke({ messages: [new HumanMessage(description)] }, config);
    return result.messages;
  }
  if (existing.next.length === 0) return existingMessages;
  const result = await child.invoke(null, config);
  return result.messages;
}

function messagesOf(values: unknown): BaseMessage[] {
  const messages = (values as { messages?: unknown } | undefined)?.messages;
  return Array.isArray(messages) ? (messages as BaseMessage[]) : [];
}

function parentScope(context: unknown, configurable: unknown): ParentRunScope | undefined {
  const ctx = (context ?? {}) as Partial<Record<string, unknown>>;
  const threadId =
    stringField(ctx, "thread_id") ??
    stringField((configurable ?? {}) as Record<string, unknown>, "thread_id");
  const uid = stringField(ctx, "uid");
  if (!threadId || !uid) return undefined;
  return { uid, threadId, fileThreadId: stringField(ctx, "file_thread_id") ?? threadId };
}

function stringField(record: Partial<Record<string, unknown>>, key: string): string | undefined {
  const value = record[key];
  return typeof value === "string" && value.length > 0 ? value : undefined;
}

/** The AI message in the parent's state that holds `toolCallId`. */
function callingMessage(state: unknown, toolCallId: string): AIMessage | undefined {
  for (const message of messagesOf(state)) {
    if (message.getType() !== "ai") continue;
    const calls = (message as AIMessage).tool_calls ?? [];
    if (calls.some((call) => call.id === toolCallId)) return message as AIMessage;
  }
  return undefined;
}

function finalAnswer(messages: BaseMessage[]): string {
  for (let i = messages.length - 1; i >= 0; i -= 1) {
    const message = messages[i];
    if (message?.getType() === "ai") return messageText(message);
  }
  return "";
}

function countRounds(messages: BaseMessage[]): number {
  return messages.filter((message) => message.getType() === "ai").length;
}

function sumUsage(messages: BaseMessage[]): SubagentUsage {
  const usage = { input_tokens: 0, output_tokens: 0, total_tokens: 0 };
  for (const message of messages) {
    const metadata = (message as AIMessage).usage_metadata;
    if (message.getType() !== "ai" || !metadata) continue;
    usage.input_tokens += metadata.input_tokens ?? 0;
    usage.output_tokens += metadata.output_tokens ?? 0;
    usage.total_tokens += metadata.total_tokens ?? 0;
  }
  return usage;
}

function errorResult(toolCallId: string, message: string): ToolMessage {
  return new ToolMessage({
    content: message,
    tool_call_id: toolCallId,
    name: TASK_TOOL_NAME,
    status: "error",
  });
}

function unknownSubagentMessage(requested: string, allowed: string[]): string {
  // Lists only the caller's allowed slugs: nothing about agents it may not use.
  return `unknown subagent_type ${JSON.stringify(requested)}: use one of ${allowed.map((slug) => JSON.stringify(slug)).join(", ")}`;
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, " ").trim() || "(no description)";
}
