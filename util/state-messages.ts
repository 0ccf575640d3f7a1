import type { BaseMessage } from "@langchain/core/messages";

/**
 * The `messages` of a graph state's values (or of one node's update), or none when the values
 * hold no message list: values read from a checkpoint are untyped, and a thread that never ran
 * has none.
 */
export function messagesOf(values: unknown): BaseMessage[] {
  const messages = (values as { messages?: unknown } | null | undefined)?.messages;
  return Array.isArray(messages) ? (messages as BaseMessage[]) : [];
}
