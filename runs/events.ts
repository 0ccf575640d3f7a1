import type { AIMessage, BaseMessage } from "@langchain/core/messages";
import { namespaceKey, SUBAGENT_EVENTS, subagentNamespaceOf } from "../contract.js";
import { type PendingApproval, pendingApprovalsOf } from "../middleware/approval-request.js";
import type { SubagentRun, SubagentUsage } from "../middleware/subagent-runs.js";
import type { TaskStreamEvent } from "../middleware/task.js";
import { messageText } from "../util/message-text.js";
import { messagesOf } from "../util/state-messages.js";

/** The final outcome of a run. */
export interface RunResult {
  threadId: string;
  runId: string;
  /** The main agent's final assistant text. */
  output: string;
  /** The thread's whole message list after the run. */
  messages: BaseMessage[];
  /** Every `task` call recorded on the thread. */
  subagentRuns: SubagentRun[];
  /** Token usage of the subagents this run dispatched, summed. */
  subagentUsage: SubagentUsage;
  /**
   * The requests for approval the thread now waits on (README "Approvals"): empty when the run
   * finished its turn; else the run paused, and `Runtime.run` with `command: { resume }` goes on.
   */
  interrupts: PendingApproval[];
}

/** A tool call as it appears in an event. */
export interface EventToolCall {
  id: string | undefined;
  name: string;
  args: Record<string, unknown>;
}

/**
 * Events yielded by `runtime.stream()`. Events about a subagent carry `childThreadId` (the
 * child's checkpoint thread); events of the main agent leave it undefined.
 */
export type RunEvent =
  | { type: "run_started"; runId: string; threadId: string; agent: string }
  /** A piece of assistant text as the model produces it. */
  | { type: "token"; threadId: string; childThreadId: string | undefined; text: string }
  /** A complete assistant message (text and tool calls). */
  | {
      type: "assistant_message";
      threadId: string;
      childThreadId: string | undefined;
      text: string;
      toolCalls: EventToolCall[];
    }
  /** A tool's result. */
  | {
      type: "tool_result";
      threadId: string;
      childThreadId: string | undefined;
      toolCallId: string;
      name: string | undefined;
      text: string;
      isError: boolean;
    }
  | (Extract<TaskStreamEvent, { type: "subagent_started" }> & { threadId: string })
  | { type: "subagent_finished"; threadId: string; run: SubagentRun }
  /** A subagent paused on a gated call; `approval` is the parent's interrupt that answers it. */
  | (Extract<TaskStreamEvent, { type: "subagent_waiting" }> & { threadId: string })
  /** The run pauses for a person's decision (the main agent's gated call, or a subagent's). */
  | { type: "approval_requested"; threadId: string; approval: PendingApproval }
  | { type: "run_finished"; result: RunResult };

/** LangGraph stream chunk with `subgraphs: true` and several modes: `[namespace, mode, data]`. */
export type GraphStreamChunk = [string[], string, unknown];

/** LangGraph's key of a paused step's interrupts in an update. */
const INTERRUPT_KEY = "__interrupt__";

/**
 * Turns the LangGraph stream chunks of one parent run into {@link RunEvent}s; keep one per run,
 * since it learns which child thread each subagent namespace is as the run goes.
 *
 * - `messages` mode: token chunks; the chunk metadata's `thread_id` says whose (the parent's or a
 *   child's: a child's model calls stream through the parent's handlers).
 * - `updates` mode: complete messages per node; a child's come under its namespace
 *   (`tools:<task id>`, `contract.ts`), which the task tool's `subagent_started` event names.
 * - `custom` mode: the task tool's `subagent_started` / `subagent_waiting` / `subagent_finished`.
 */
export class ChunkTranslator {
  /** Child thread ids by the namespace key of their subagent. */
  private readonly children = new Map<string, string>();

  constructor(private readonly threadId: string) {}

  translate(chunk: GraphStreamChunk): RunEvent[] {
    const [namespace, mode, data] = chunk;
    const subagent = subagentNamespaceOf(namespace);
    const childThreadId = subagent ? this.children.get(namespaceKey(subagent)) : undefined;
    // A subagent's own steps this run did not announce (nothing of ours) are not named.
    if (subagent && childThreadId === undefined) return [];
    switch (mode) {
      case "messages":
        return tokenEvents(this.threadId, data);
      case "updates":
        return updateEvents(this.threadId, childThreadId, data);
      case "custom":
        return subagent ? [] : this.customEvents(data);
      default:
        return [];
    }
  }

  private customEvents(data: unknown): RunEvent[] {
    const events = customEvents(this.threadId, data);
    for (const event of events) {
      if (event.type === SUBAGENT_EVENTS.started || event.type === SUBAGENT_EVENTS.waiting) {
        if (event.child_thread_id && Array.isArray(event.namespace)) {
          this.children.set(namespaceKey(event.namespace), event.child_thread_id);
        }
      }
    }
    return events;
  }
}

function tokenEvents(threadId: string, data: unknown): RunEvent[] {
  if (!Array.isArray(data)) return [];
  const [message, metadata] = data as [BaseMessage | undefined, Record<string, unknown>?];
  if (!message || !["ai", "AIMessageChunk"].includes(message.getType())) return [];
  const text = messageText(message);
  if (!text) return [];
  const source = typeof metadata?.thread_id === "string" ? metadata.thread_id : threadId;
  return [
    { type: "token", threadId, childThreadId: source === threadId ? undefined : source, text },
  ];
}

function updateEvents(
  threadId: string,
  childThreadId: string | undefined,
  data: unknown,
): RunEvent[] {
  if (typeof data !== "object" || data === null) return [];
  const events: RunEvent[] = [];
  for (const [node, update] of Object.entries(data as Record<string, unknown>)) {
    if (node === INTERRUPT_KEY) {
      // LangGraph reports a paused step as an update of its own; a child's is its parent's.
      if (childThreadId !== undefined || !Array.isArray(update)) continue;
      for (const approval of pendingApprovalsOf(update)) {
        events.push({ type: "approval_requested", threadId, approval });
      }
      continue;
    }
    for (const message of messagesOf(update)) {
      const event = messageEvent(threadId, childThreadId, message);
      if (event) events.push(event);
    }
  }
  return events;
}

function messageEvent(
  threadId: string,
  childThreadId: string | undefined,
  message: BaseMessage,
): RunEvent | undefined {
  if (typeof message?.getType !== "function") return undefined;
  const type = message.getType();
  if (type === "ai") {
    return {
      type: "assistant_message",
      threadId,
      childThreadId,
      text: messageText(message),
      toolCalls: ((message as AIMessage).tool_calls ?? []).map((call) => ({
        id: call.id,
        name: call.name,
        args: call.args,
      })),
    };
  }
  if (type === "tool") {
    const tool = message as BaseMessage & { tool_call_id: string; status?: string };
    return {
      type: "tool_result",
      threadId,
      childThreadId,
      toolCallId: tool.tool_call_id,
      name: tool.name,
      text: messageText(message),
      isError: tool.status === "error",
    };
  }
  return undefined;
}

function customEvents(threadId: string, data: unknown): RunEvent[] {
  const event = data as Partial<TaskStreamEvent> | null;
  if (event?.type === SUBAGENT_EVENTS.started) {
    return [{ ...(event as Extract<TaskStreamEvent, { type: "subagent_started" }>), threadId }];
  }
  if (event?.type === SUBAGENT_EVENTS.finished) {
    const { run } = event as Extract<TaskStreamEvent, { type: "subagent_finished" }>;
    return [{ type: "subagent_finished", threadId, run }];
  }
  if (event?.type === SUBAGENT_EVENTS.waiting) {
    return [{ ...(event as Extract<TaskStreamEvent, { type: "subagent_waiting" }>), threadId }];
  }
  return [];
}
