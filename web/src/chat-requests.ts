/**
 * The runs the chat page asks for, and the words it sends: pure, unit-tested in Node
 * (`test/web/chat-store.test.ts`).
 */

import type { StreamMode } from "@langchain/langgraph-sdk";
import type { RunRequest } from "./api-types.js";
import { type Decision, resumeCommand } from "./approvals.js";
import type { ChatMessage } from "./chat-state.js";

/** What a run streams: the state, node updates, tokens, and the task tool's events. */
export const STREAM_MODES: StreamMode[] = ["values", "updates", "messages-tuple", "custom"];

/** Longest conversation title kept in a thread's metadata when a message names it. */
export const TITLE_CHARS = 60;

/** Longest title a rename keeps. */
export const RENAMED_TITLE_CHARS = 120;

/**
 * A run that sends the human message `content` to agent `assistantId`; with `checkpointId`, from
 * that checkpoint (an edited or regenerated turn forks the thread there).
 */
export function messageRun(
  assistantId: string,
  content: string,
  checkpointId?: string,
): RunRequest {
  return {
    assistantId,
    input: { messages: [{ type: "human", content }] },
    ...(checkpointId ? { checkpointId } : {}),
    streamMode: STREAM_MODES,
    streamSubgraphs: true,
  };
}

/** A run that resumes the thread answering request `id` (only it: others stay pending). */
export function answerRun(
  assistantId: string,
  id: string,
  decisions: readonly Decision[],
): RunRequest {
  return {
    assistantId,
    command: resumeCommand(id, decisions),
    streamMode: STREAM_MODES,
    streamSubgraphs: true,
  };
}

/**
 * The message sent for `text` with `files` attached: the agent reads uploads from its folder, so
 * the message says which files came with it.
 */
export function withAttachments(text: string, files: readonly string[]): string {
  return files.length
    ? `${text}\n\n(Attached: ${files.map((path) => `\`${path}\``).join(", ")})`
    : text;
}

/**
 * The human message the answer at `index` replies to, when that answer may be regenerated: the
 * last message, from the assistant, with no tool calls.
 */
export function regenerable(
  messages: readonly ChatMessage[],
  index: number,
): ChatMessage | undefined {
  const message = messages[index];
  if (index !== messages.length - 1 || message?.role !== "assistant") return undefined;
  if (message.toolCalls.length > 0) return undefined;
  return messages
    .slice(0, index)
    .reverse()
    .find((candidate) => candidate.role === "human");
}
