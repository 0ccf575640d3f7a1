import type { CallbackManagerForLLMRun } from "@langchain/core/callbacks/manager";
import {
  BaseChatModel,
  type BaseChatModelCallOptions,
  type BindToolsInput,
} from "@langchain/core/language_models/chat_models";
import { AIMessage, type BaseMessage } from "@langchain/core/messages";
import type { ChatResult } from "@langchain/core/outputs";
import { convertToOpenAITool } from "@langchain/core/utils/function_calling";
import { abortableSleep } from "../../util/abortable-sleep.js";
import { messageText, systemText } from "../../util/message-text.js";

/** One model call as the bench model sees it. */
export interface BenchCall {
  /** Text of the system message(s). */
  system: string;
  /** Messages after the system message(s). */
  messages: BaseMessage[];
}

/** What a call answers: text, or tool calls (ids are made unique by the model). */
export type BenchReply =
  | { text: string }
  | { toolCalls: { name: string; args: Record<string, unknown> }[] };

/** A request as it would go over the wire: system text and the tools' JSON definitions. */
export interface CapturedRequest {
  system: string;
  /** OpenAI-style function definitions (`{ name, description, parameters }`), by tool. */
  tools: { name: string; json: string }[];
}

export interface BenchModelOptions {
  /** Fixed latency of every call, in ms (0 = answer at once, without a timer). */
  latencyMs?: number;
  /** Receives every request (for the prompt-weight scenario). */
  capture?: (request: CapturedRequest) => void;
}

let toolCallCounter = 0;

/**
 * A deterministic chat model for benchmarks: every call answers `respond(call)`, after an
 * optional fixed latency. Unlike the strict `ScriptedChatModel` it has no script position, so one
 * instance serves any number of runs, threads and systems (ours, Deep Agents, bare agents) alike,
 * concurrently. Usage metadata is constant.
 */
export class BenchModel extends BaseChatModel {
  constructor(
    readonly label: string,
    private readonly respond: (call: BenchCall) => BenchReply,
    private readonly benchOptions: BenchModelOptions = {},
    private readonly boundTools: readonly BindToolsInput[] = [],
  ) {
    super({});
  }

  _llmType(): string {
    return "bench";
  }

  override bindTools(tools: BindToolsInput[]): BenchModel {
    return new BenchModel(this.label, this.respond, this.benchOptions, tools);
  }

  /** The same answers with another latency (or capture). */
  with(options: BenchModelOptions): BenchModel {
    return new BenchModel(this.label, this.respond, { ...this.benchOptions, ...options });
  }

  async _generate(
    messages: BaseMessage[],
    options: this["ParsedCallOptions"],
    _runManager?: CallbackManagerForLLMRun,
  ): Promise<ChatResult> {
    const call: BenchCall = {
      system: systemText(messages),
      messages: messages.filter((message) => message.getType() !== "system"),
    };
    if (this.benchOptions.capture) {
      this.benchOptions.capture({ system: call.system, tools: this.boundTools.map(toolJson) });
    }
    const latency = this.benchOptions.latencyMs ?? 0;
    if (latency > 0) await abortableSleep(latency, (options as BaseChatModelCallOptions).signal);
    const reply = this.respond(call);
    const message =
      "text" in reply
        ? new AIMessage({ content: reply.text, usage_metadata: USAGE })
        : new AIMessage({
            content: "",
            tool_calls: reply.toolCalls.map((toolCall) => ({
              name: toolCall.name,
              args: toolCall.args,
              id: `${this.label}-call-${++toolCallCounter}`,
              type: "tool_call" as const,
            })),
            usage_metadata: USAGE,
          });
    return { generations: [{ text: messageText(message), message }] };
  }
}

const USAGE = { input_tokens: 10, output_tokens: 5, total_tokens: 15 };

function toolJson(tool: BindToolsInput): { name: string; json: string } {
  const definition = convertToOpenAITool(tool as Parameters<typeof convertToOpenAITool>[0]);
  return { name: definition.function.name, json: JSON.stringify(definition.function) };
}
