import type { CallbackManagerForLLMRun } from "@langchain/core/callbacks/manager";
import {
  BaseChatModel,
  type BaseChatModelCallOptions,
  type BindToolsInput,
} from "@langchain/core/language_models/chat_models";
import { AIMessage, type BaseMessage } from "@langchain/core/messages";
import type { ChatResult } from "@langchain/core/outputs";
import { ErrorCode, SubagentGraphError } from "../errors.js";
import { abortableSleep } from "../util/abortable-sleep.js";
import { messageText, systemText, toolNames } from "../util/message-text.js";

/** One model call as the scripted model saw it. */
export interface ScriptedCall {
  /** Position of the call in the script (0-based). */
  index: number;
  /** Text of the system message(s), joined. */
  system: string;
  /** Messages after the system message(s). */
  messages: BaseMessage[];
  /** Names of the tools the agent offered the model on this call. */
  tools: string[];
  /** `Date.now()` when the call started and when it returned (undefined while running). */
  startedAt: number;
  finishedAt: number | undefined;
}

/** A tool call the script makes the model emit. `id` defaults to `<model name>-call-<n>`. */
export interface ScriptedToolCall {
  name: string;
  args: Record<string, unknown>;
  id?: string;
}

/** What one scripted call answers: text, tool calls, or an error to throw. */
export type ScriptedReply = { text?: string; toolCalls?: ScriptedToolCall[] } | Error;

/** One expected model call. */
export interface ScriptStep {
  /** Checks the request; throw (e.g. an `expect` failure) to fail the run. */
  expect?: (call: ScriptedCall) => void;
  /** The reply, or a function of the request that returns it. */
  reply: ScriptedReply | ((call: ScriptedCall) => ScriptedReply);
  /** Wait this long before replying (honours the run's abort signal). */
  delayMs?: number;
  /**
   * Awaited before replying (after `delayMs`), with the run's abort signal: lets a test hold a
   * call until it has seen what it wants (e.g. a subagent shown running), then release it.
   */
  hold?: (call: ScriptedCall, signal: AbortSignal | undefined) => Promise<void>;
}

interface SharedScriptState {
  steps: ScriptStep[];
  calls: ScriptedCall[];
  toolCallCounter: number;
}

/**
 * A strict scripted chat model for tests: each call consumes the next {@link ScriptStep}; a call
 * beyond the script throws a `SCRIPT_VIOLATION` error (so the run fails loudly instead of being
 * padded with a made-up answer) and {@link ScriptedChatModel.assertComplete} fails when steps
 * were left unused. Every call is recorded with the system prompt and the tools offered.
 *
 * @example
 * const model = new ScriptedChatModel("parent", [
 *   { reply: { toolCalls: [{ name: "task", args: { description: "d", subagent_type: "researcher" } }] } },
 *   { reply: { text: "done" } },
 * ]);
 */
export class ScriptedChatModel extends BaseChatModel {
  readonly modelName: string;
  private readonly script: SharedScriptState;
  private readonly boundTools: string[];

  constructor(
    modelName: string,
    steps: ScriptStep[],
    shared?: SharedScriptState,
    boundTools: string[] = [],
  ) {
    super({});
    this.modelName = modelName;
    this.script = shared ?? { steps: [...steps], calls: [], toolCallCounter: 0 };
    this.boundTools = boundTools;
  }

  _llmType(): string {
    return "scripted";
  }

  /** Every call made so far, in order. */
  get calls(): readonly ScriptedCall[] {
    return this.script.calls;
  }

  /** Throws when script steps were left unused. */
  assertComplete(): void {
    const used = this.script.calls.length;
    const total = this.script.steps.length;
    if (used < total) {
      throw new SubagentGraphError(
        ErrorCode.ScriptViolation,
        `scripted model "${this.modelName}" was called ${used} time(s) but its script has ${total} step(s); ` +
          "the run ended before the script did: remove the unused steps or fix the run",
      );
    }
  }

  override bindTools(tools: BindToolsInput[]): ScriptedChatModel {
    // createAgent binds the tools once per model call; the bound copy shares the script.
    return new ScriptedChatModel(this.modelName, [], this.script, toolNames(tools));
  }

  async _generate(
    messages: BaseMessage[],
    options: this["ParsedCallOptions"],
    _runManager?: CallbackManagerForLLMRun,
  ): Promise<ChatResult> {
    const index = this.script.calls.length;
    const call: ScriptedCall = {
      index,
      system: systemText(messages),
      messages: messages.filter((message) => message.getType() !== "system"),
      tools: [...this.boundTools],
      startedAt: Date.now(),
      finishedAt: undefined,
    };
    this.script.calls.push(call);
    const step = this.script.steps[index];
    if (step === undefined) {
      const last = call.messages.at(-1);
      throw new SubagentGraphError(
        ErrorCode.ScriptViolation,
        `scripted model "${this.modelName}" got call #${index + 1} but its script has only ` +
          `${this.script.steps.length} step(s); last message: ${JSON.stringify(last ? messageText(last) : "").slice(0, 200)}`,
      );
    }
    step.expect?.(call);
    const signal = (options as BaseChatModelCallOptions).signal;
    if (step.delayMs) await abortableSleep(step.delayMs, signal);
    await step.hold?.(call, signal);
    const reply = typeof step.reply === "function" ? step.reply(call) : step.reply;
    call.finishedAt = Date.now();
    if (reply instanceof Error) throw reply;
    const message = new AIMessage({
      content: reply.text ?? "",
      tool_calls: (reply.toolCalls ?? []).map((toolCall) => ({
        name: toolCall.name,
        args: toolCall.args,
        id: toolCall.id ?? `${this.modelName}-call-${++this.script.toolCallCounter}`,
        type: "tool_call" as const,
      })),
      usage_metadata: { input_tokens: 10, output_tokens: 5, total_tokens: 15 },
    });
    return { generations: [{ text: messageText(message), message }] };
  }
}
