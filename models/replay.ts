import type { BaseChatModelCallOptions } from "@langchain/core/language_models/chat_models";
import { BaseChatModel, type BindToolsInput } from "@langchain/core/language_models/chat_models";
import {
  AIMessage,
  type BaseMessage,
  mapStoredMessagesToChatMessages,
  type StoredMessage,
} from "@langchain/core/messages";
import type { ChatResult } from "@langchain/core/outputs";
import { getConfig } from "@langchain/langgraph";
import { ErrorCode, SubagentGraphError } from "../errors.js";
import { messageText } from "../util/message-text.js";

/** The version of {@link ThreadRecording}'s format. */
export const RECORDING_VERSION = 1;

/**
 * A thread's model responses, read from its checkpoints: the main agent's, in order, and each
 * subagent call's (keyed by subagent and task description, since several children of one turn
 * run concurrently). JSON, so it can be kept as a test fixture.
 */
export interface ThreadRecording {
  version: typeof RECORDING_VERSION;
  /** The main agent's slug. */
  agent: string;
  /** The user's messages, one per turn, in order: what a replay test sends again. */
  inputs: string[];
  /** The main agent's model responses (one per model call), in order. */
  responses: StoredMessage[];
  /** One entry per subagent run, in the order the parent recorded them. */
  children: RecordedChild[];
}

/** The model responses of one subagent run. */
export interface RecordedChild {
  subagent_type: string;
  /** The task description the child started from (its first human message). */
  description: string;
  responses: StoredMessage[];
}

interface Stream {
  label: string;
  responses: BaseMessage[];
  next: number;
}

interface ReplayState {
  recording: ThreadRecording;
  parent: Stream;
  children: (Stream & { subagentType: string; description: string; taken: boolean })[];
  /** Which stream each thread id calling the model replays. */
  byThread: Map<string, Stream>;
}

/**
 * A chat model that serves a {@link ThreadRecording} back: each calling thread is matched to
 * its recording (the main agent by its slug, a subagent by its slug and task description) and
 * gets that recording's next response. Strict: a call the recording does not hold (an extra
 * turn, an unknown subagent or description) fails with `SCRIPT_VIOLATION` naming what was
 * asked, and {@link assertComplete} fails on responses left unused.
 *
 * Give it to every agent with `createRuntime({ modelFor: () => replay })`. Responses get new
 * message ids (so a replay makes new child threads), keeping their tool calls as recorded.
 *
 * @example
 * const replay = new ReplayModel(recording);
 * const runtime = await createRuntime({ checkpointer: "memory", database: ":memory:", modelFor: () => replay });
 * // … create the same agents, then:
 * const result = await runtime.run({ uid: "alice", agent: recording.agent, input: recording.inputs[0] });
 * replay.assertComplete();
 */
export class ReplayModel extends BaseChatModel {
  private readonly state: ReplayState;

  constructor(recording: ThreadRecording, shared?: ReplayState) {
    super({});
    if (recording.version !== RECORDING_VERSION) {
      throw new SubagentGraphError(
        ErrorCode.Validation,
        `recording version ${String(recording.version)} is not supported: record the thread again (version ${RECORDING_VERSION})`,
        { field: "version" },
      );
    }
    this.state = shared ?? {
      recording,
      parent: {
        label: `agent "${recording.agent}"`,
        responses: restore(recording.responses),
        next: 0,
      },
      children: recording.children.map((child) => ({
        label: `subagent "${child.subagent_type}" (task ${JSON.stringify(child.description.slice(0, 60))})`,
        responses: restore(child.responses),
        next: 0,
        subagentType: child.subagent_type,
        description: child.description,
        taken: false,
      })),
      byThread: new Map(),
    };
  }

  _llmType(): string {
    return "replay";
  }

  override bindTools(_tools: BindToolsInput[]): ReplayModel {
    return new ReplayModel(this.state.recording, this.state);
  }

  /** Throws when recorded responses were left unused (the replay did less than the recording). */
  assertComplete(): void {
    const left = [this.state.parent, ...this.state.children].filter(
      (stream) => stream.next < stream.responses.length,
    );
    if (left.length > 0) {
      throw new SubagentGraphError(
        ErrorCode.ScriptViolation,
        `replay ended with recorded responses unused: ${left
          .map((stream) => `${stream.label} used ${stream.next} of ${stream.responses.length}`)
          .join("; ")}`,
      );
    }
  }

  async _generate(
    messages: BaseMessage[],
    _options: this["ParsedCallOptions"] & BaseChatModelCallOptions,
  ): Promise<ChatResult> {
    const stream = this.streamFor(messages);
    const recorded = stream.responses[stream.next];
    if (!recorded) {
      throw new SubagentGraphError(
        ErrorCode.ScriptViolation,
        `replay: ${stream.label} asked for model call #${stream.next + 1}, but the recording holds ${stream.responses.length}; the graph now does more than when it was recorded`,
      );
    }
    stream.next += 1;
    const original = recorded as AIMessage;
    // A fresh id, as a model would give: the recorded one belongs to the recorded thread.
    const message = new AIMessage({
      content: original.content,
      tool_calls: original.tool_calls ?? [],
      ...(original.usage_metadata ? { usage_metadata: original.usage_metadata } : {}),
    });
    return { generations: [{ text: messageText(message), message }] };
  }

  /** The recording the calling thread replays, bound on its first call. */
  private streamFor(messages: BaseMessage[]): Stream {
    const config = safeConfig();
    const threadId = String(config?.configurable?.thread_id ?? "");
    const agent = String(config?.metadata?.lc_agent_name ?? "");
    const bound = this.state.byThread.get(threadId);
    if (bound) return bound;
    const description = messageText(
      messages.find((m) => m.getType() === "human") ?? new AIMessage(""),
    );
    const child = this.state.children.find(
      (candidate) =>
        !candidate.taken &&
        candidate.subagentType === agent &&
        candidate.description === description,
    );
    const stream = child ?? (agent === this.state.recording.agent ? this.state.parent : undefined);
    if (!stream) {
      throw new SubagentGraphError(
        ErrorCode.ScriptViolation,
        `replay: the recording holds no run of "${agent}" with task ${JSON.stringify(description.slice(0, 80))}; it recorded ${[
          `"${this.state.recording.agent}"`,
          ...this.state.children.map((c) => `"${c.subagentType}"`),
        ].join(", ")}`,
      );
    }
    if (child) child.taken = true;
    this.state.byThread.set(threadId, stream);
    return stream;
  }
}

function restore(stored: readonly StoredMessage[]): BaseMessage[] {
  return mapStoredMessagesToChatMessages([...stored]);
}

function safeConfig() {
  try {
    return getConfig();
  } catch {
    return undefined;
  }
}
