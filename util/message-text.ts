import type { BindToolsInput } from "@langchain/core/language_models/chat_models";
import type { BaseMessage } from "@langchain/core/messages";

/**
 * The plain text of a message. Content may be a string or an array of parts (middleware-built
 * system messages arrive as arrays of text parts); non-text parts are skipped.
 */
export function messageText(message: BaseMessage): string {
  return contentText(message.content);
}

/** The plain text of message content (string or array of parts). */
export function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  const parts: string[] = [];
  for (const part of content) {
    if (typeof part === "string") parts.push(part);
    else if (isTextPart(part)) parts.push(part.text);
  }
  return parts.join("");
}

function isTextPart(part: unknown): part is { type: "text"; text: string } {
  return (
    typeof part === "object" &&
    part !== null &&
    (part as { type?: unknown }).type === "text" &&
    typeof (part as { text?: unknown }).text === "string"
  );
}

/** Text of every system message in `messages`, joined by blank lines. */
export function systemText(messages: readonly BaseMessage[]): string {
  return messages
    .filter((message) => message.getType() === "system")
    .map(messageText)
    .join("\n\n");
}

/** The names of tools as handed to `bindTools` (LangChain tools or OpenAI-style definitions). */
export function toolNames(tools: readonly BindToolsInput[]): string[] {
  return tools.map(toolName).filter((name): name is string => name !== undefined);
}

function toolName(tool: BindToolsInput): string | undefined {
  if (typeof tool !== "object" || tool === null) return undefined;
  const record = tool as { name?: unknown; function?: { name?: unknown } };
  if (typeof record.name === "string") return record.name;
  if (typeof record.function?.name === "string") return record.function.name;
  return undefined;
}
