import { createHash } from "node:crypto";
import type { BindToolsInput } from "@langchain/core/language_models/chat_models";
import type { AIMessage, BaseMessage, ToolMessage } from "@langchain/core/messages";
import { convertToOpenAITool } from "@langchain/core/utils/function_calling";
import { canonicalJson } from "../util/canonical-json.js";
import { messageText, toolNames } from "../util/message-text.js";
import { type ListedSubagent, splitSubagentListing } from "../util/subagent-listing.js";

/**
 * What one model call was sent, in a form that is the same on every run of an unchanged graph:
 * ids, timestamps and provider metadata are left out, tool schemas are hashed. A recording keeps
 * one per call, and a replay compares the call it gets with it.
 */
export interface RecordedRequest {
  /**
   * The system prompt as the model got it (the agent's prompt plus what middleware appended,
   * e.g. the files and skills sections), without the subagent list, which is `subagents`.
   */
  system_prompt: string;
  /** The subagents the system prompt listed for the `task` tool, in order. */
  subagents: ListedSubagent[];
  /** The tools offered, in order. */
  tools: RecordedTool[];
  /** The messages after the system prompt: the conversation up to this call. */
  messages: RecordedMessage[];
}

/** A tool as offered to the model. */
export interface RecordedTool {
  name: string;
  /**
   * `sha256:` and 12 hex digits of the tool's definition as a model gets it (name, description
   * and JSON schema of the arguments), serialised with sorted keys: any change to what the
   * model reads about the tool changes it.
   */
  schema: string;
}

/** One input message, without ids and metadata. */
export interface RecordedMessage {
  /** `human`, `ai`, `tool`, … (LangChain's message type). */
  role: string;
  /** Its text (non-text content parts are left out). */
  text: string;
  /** An `ai` message's tool calls: name and arguments. */
  tool_calls?: { name: string; args: unknown }[];
  /** A `tool` message's tool name. */
  name?: string;
  /** A `tool` message that reports an error. */
  error?: true;
}

/** What a chat model is handed for one call. */
export interface SentRequest {
  /** The system message's text ("" when there is none). */
  system: string;
  tools: readonly BindToolsInput[];
  /** The input messages; system messages among them are ignored (that is `system`). */
  messages: readonly BaseMessage[];
}

/** The {@link RecordedRequest} of a model call. */
export function recordRequest(sent: SentRequest): RecordedRequest {
  const { prompt, subagents } = splitSubagentListing(sent.system);
  return {
    system_prompt: prompt,
    subagents,
    tools: sent.tools.map(recordTool),
    messages: sent.messages.filter((message) => message.getType() !== "system").map(recordMessage),
  };
}

/** A tool's name and the hash of its definition. */
export function recordTool(tool: BindToolsInput): RecordedTool {
  const [name = "(unnamed)"] = toolNames([tool]);
  return { name, schema: `sha256:${shortHash(canonicalJson(toolDefinition(tool)))}` };
}

/** A message without its id, name and metadata. */
export function recordMessage(message: BaseMessage): RecordedMessage {
  const role = message.getType();
  const text = messageText(message);
  if (role === "ai") {
    const calls = (message as AIMessage).tool_calls ?? [];
    if (calls.length === 0) return { role, text };
    return { role, text, tool_calls: calls.map((call) => ({ name: call.name, args: call.args })) };
  }
  if (role === "tool") {
    const tool = message as ToolMessage;
    return {
      role,
      name: tool.name ?? "",
      text,
      ...(tool.status === "error" ? { error: true as const } : {}),
    };
  }
  return { role, text };
}

/** The definition the model gets: OpenAI's function format, which every provider maps from. */
function toolDefinition(tool: BindToolsInput): unknown {
  try {
    return convertToOpenAITool(tool as Parameters<typeof convertToOpenAITool>[0]);
  } catch {
    // A provider-specific definition (e.g. a built-in server tool) is sent as it is.
    return tool;
  }
}

function shortHash(text: string): string {
  return createHash("sha256").update(text).digest("hex").slice(0, 12);
}
