import type { CallbackManagerForLLMRun } from "@langchain/core/callbacks/manager";
import { BaseChatModel, type BindToolsInput } from "@langchain/core/language_models/chat_models";
import { AIMessage, AIMessageChunk, type BaseMessage } from "@langchain/core/messages";
import { ChatGenerationChunk, type ChatResult } from "@langchain/core/outputs";
import { TASK_TOOL_NAME } from "../contract.js";
import { messageText, systemText, toolNames } from "../util/message-text.js";
import { splitSubagentListing } from "../util/subagent-listing.js";

/** Every answer of the offline model starts with this label, so nobody mistakes it for an LLM. */
export const OFFLINE_LABEL = "[offline model]";

/** The name of the delegation tool the offline model knows how to use. */
/** The file tool it saves with, when asked to. */
const WRITE_TOOL = "write_file";
/** Where it saves its notes when asked to: the thread's outputs. */
export const OFFLINE_NOTES_PATH = "/home/gem/user-data/outputs/notes.md";
/** A request that asks for its answer to be saved. */
const ASKS_TO_SAVE = /\bsave\b/i;

/**
 * A deterministic chat model for the zero-setup default: no key, no network, same answer for the
 * same input, and still a real exercise of the system.
 *
 * - Offered the `task` tool on a fresh user request, it delegates to every subagent listed in the
 *   system message (`- slug: description` lines), all in one turn so they run in parallel.
 * - Given the results of those task calls, it writes its answer from them.
 * - Without `task` (as a subagent, or a main agent with no subagents) it answers from its own
 *   system prompt and the request.
 * - Asked to save (the request says "save") and offered `write_file`, it first writes that
 *   answer to {@link OFFLINE_NOTES_PATH}, so an agent that gates `write_file` (the demo's
 *   researcher) pauses for approval with no key (README "Approvals").
 *
 * Every answer starts with {@link OFFLINE_LABEL}. It streams word by word like a real model.
 */
export class OfflineChatModel extends BaseChatModel {
  private readonly boundTools: string[];

  constructor(boundTools: string[] = []) {
    super({});
    this.boundTools = boundTools;
  }

  _llmType(): string {
    return "offline";
  }

  override bindTools(tools: BindToolsInput[]): OfflineChatModel {
    return new OfflineChatModel(toolNames(tools));
  }

  async _generate(messages: BaseMessage[]): Promise<ChatResult> {
    const message = this.respond(messages);
    return { generations: [{ text: messageText(message), message }] };
  }

  override async *_streamResponseChunks(
    messages: BaseMessage[],
    _options: this["ParsedCallOptions"],
    runManager?: CallbackManagerForLLMRun,
  ): AsyncGenerator<ChatGenerationChunk> {
    const message = this.respond(messages);
    const text = messageText(message);
    const words = text.match(/\S+\s*|\s+/g) ?? [];
    for (const word of words) {
      const chunk = new ChatGenerationChunk({ text: word, message: new AIMessageChunk(word) });
      yield chunk;
      await runManager?.handleLLMNewToken(word);
    }
    // A chunk's `index` names its content block: the text above is block 0 (LangChain's
    // chunk-to-event bridge puts string content there), so the tool calls come after it. Indexed
    // from 0 they would merge into the text block and the first call would be lost wherever the
    // message is rebuilt from content-block events (LangGraph's `streamEvents` v3, the dev server).
    const firstToolBlock = words.length > 0 ? 1 : 0;
    yield new ChatGenerationChunk({
      text: "",
      message: new AIMessageChunk({
        content: "",
        tool_call_chunks: (message.tool_calls ?? []).map((call, index) => ({
          name: call.name,
          args: JSON.stringify(call.args),
          id: call.id,
          index: firstToolBlock + index,
          type: "tool_call_chunk" as const,
        })),
        usage_metadata: message.usage_metadata,
      }),
    });
  }

  /** The whole deterministic reply for `messages`. */
  respond(messages: BaseMessage[]): AIMessage {
    const system = systemText(messages);
    const conversation = messages.filter((message) => message.getType() !== "system");
    const request = lastHumanText(conversation);
    const trailingResults = trailingToolResults(conversation);
    const offersTask = this.boundTools.includes(TASK_TOOL_NAME);

    if (offersTask && trailingResults.length > 0) {
      return reply(conversation, synthesise(request, trailingResults));
    }
    // The task middleware's list only: the skills section after it has `- name: …` lines too.
    const subagents = offersTask ? splitSubagentListing(system).subagents : [];
    if (subagents.length > 0 && conversation.at(-1)?.getType() === "human") {
      return reply(
        conversation,
        `${OFFLINE_LABEL} Delegating to ${subagents.map((s) => s.slug).join(", ")}.`,
        subagents.map((subagent, index) => ({
          name: TASK_TOOL_NAME,
          args: {
            description: `${request}\n\nYou are asked as "${subagent.slug}" (${subagent.description}). Handle your part of this request and report your findings concisely.`,
            subagent_type: subagent.slug,
          },
          id: `offline-${conversation.length}-${index}`,
        })),
      );
    }
    const answer = answerFromPrompt(system, request);
    const asked = conversation.at(-1)?.getType() === "human";
    if (asked && this.boundTools.includes(WRITE_TOOL) && ASKS_TO_SAVE.test(request)) {
      return reply(conversation, `${OFFLINE_LABEL} Saving my notes to ${OFFLINE_NOTES_PATH}.`, [
        {
          name: WRITE_TOOL,
          args: { path: OFFLINE_NOTES_PATH, content: `${answer}\n` },
          id: `offline-${conversation.length}-save`,
        },
      ]);
    }
    return reply(conversation, answer);
  }
}

function reply(
  conversation: BaseMessage[],
  text: string,
  toolCalls: { name: string; args: Record<string, unknown>; id: string }[] = [],
): AIMessage {
  const inputWords = conversation.reduce(
    (sum, message) => sum + wordCount(messageText(message)),
    0,
  );
  const outputWords = wordCount(text);
  return new AIMessage({
    content: text,
    tool_calls: toolCalls.map((call) => ({ ...call, type: "tool_call" as const })),
    usage_metadata: {
      input_tokens: inputWords,
      output_tokens: outputWords,
      total_tokens: inputWords + outputWords,
    },
  });
}

function wordCount(text: string): number {
  return text.split(/\s+/).filter(Boolean).length;
}

function lastHumanText(conversation: BaseMessage[]): string {
  for (let i = conversation.length - 1; i >= 0; i -= 1) {
    const message = conversation[i];
    if (message?.getType() === "human") return messageText(message).trim();
  }
  return "";
}

/** Tool messages at the end of the conversation (the answers to the last AI turn's calls). */
function trailingToolResults(conversation: BaseMessage[]): { name: string; text: string }[] {
  const results: { name: string; text: string }[] = [];
  for (let i = conversation.length - 1; i >= 0; i -= 1) {
    const message = conversation[i];
    if (message?.getType() !== "tool") break;
    results.unshift({ name: message.name ?? "tool", text: messageText(message) });
  }
  return results;
}

function synthesise(request: string, results: { name: string; text: string }[]): string {
  const lines = results.map((result, index) => `${index + 1}. ${firstLines(result.text, 3)}`);
  return [
    `${OFFLINE_LABEL} Here is what my subagents found about "${shorten(request, 120)}":`,
    ...lines,
    `In short: ${results.length} report(s) gathered; each is summarised above.`,
  ].join("\n");
}

function answerFromPrompt(system: string, request: string): string {
  const persona = firstSentence(system) || "an assistant";
  const terms = keyTerms(request);
  return [
    `${OFFLINE_LABEL} Speaking as: ${shorten(persona, 160)}`,
    `Request: "${shorten(request, 200)}"`,
    terms.length > 0
      ? `Key points to address: ${terms.join(", ")}.`
      : "The request gives little to work with; please add detail.",
  ].join("\n");
}

function firstSentence(text: string): string {
  const trimmed = text.trim();
  const match = /^(.+?[.!?])(\s|$)/s.exec(trimmed);
  return (match?.[1] ?? trimmed.split("\n")[0] ?? "").trim();
}

function firstLines(text: string, count: number): string {
  return text
    .split("\n")
    .map((line) => line.trim())
    .filter(Boolean)
    .slice(0, count)
    .join(" / ");
}

const STOP_WORDS = new Set(
  "the a an and or of to in on for with is are be this that it as at by from what how why which your you me my our we i".split(
    " ",
  ),
);

/** Up to five distinct content words of the request, longest first (ties keep their order). */
function keyTerms(text: string): string[] {
  const words = (text.toLowerCase().match(/[\p{L}\p{N}][\p{L}\p{N}-]*/gu) ?? []).filter(
    (word) => word.length > 2 && !STOP_WORDS.has(word),
  );
  return [...new Set(words)].sort((a, b) => b.length - a.length).slice(0, 5);
}

function shorten(text: string, max: number): string {
  const chars = Array.from(text.replace(/\s+/g, " "));
  return chars.length <= max ? chars.join("") : `${chars.slice(0, max - 1).join("")}…`;
}
