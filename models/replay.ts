import type { BaseChatModelCallOptions } from "@langchain/core/language_models/chat_models";
import { BaseChatModel, type BindToolsInput } from "@langchain/core/language_models/chat_models";
import {
  AIMessage,
  type BaseMessage,
  mapStoredMessagesToChatMessages,
} from "@langchain/core/messages";
import type { ChatResult } from "@langchain/core/outputs";
import { getConfig } from "@langchain/langgraph";
import type { HITLRequest } from "langchain";
import { ErrorCode, SubagentGraphError } from "../errors.js";
import { messageText, systemText } from "../util/message-text.js";
import { approvalDifferences, gatedTools } from "./approval-diff.js";
import { type RecordedRequest, recordRequest } from "./model-request.js";
import {
  type AnyThreadRecording,
  type ReadRecording,
  RECORDING_VERSION,
  type RecordedApproval,
  readRecording,
} from "./recording-format.js";
import { type RequestDifference, type RequestMatch, requestDifferences } from "./request-diff.js";

export type {
  AnyThreadRecording,
  RecordedApproval,
  RecordedApprovalRequest,
  RecordedCall,
  RecordedChild,
  ThreadRecording,
  ThreadRecordingV1,
  ThreadRecordingV2,
} from "./recording-format.js";
export { RECORDING_VERSION } from "./recording-format.js";

/** What a replay compares: the fields of each model call, and the pauses for approval. */
export interface ReplayMatch extends RequestMatch {
  /**
   * The pauses for approval: where the recording paused after a call, the replay must pause
   * there with the same gated tools (names, order, allowed decisions), and nowhere else. Off: a
   * pause the recording holds for the same tools is answered as recorded, any other pause is
   * approved, and a recorded pause that no longer comes is skipped.
   */
  approvals?: boolean;
}

/** Options of {@link ReplayModel}. */
export interface ReplayOptions {
  /**
   * What each model call must send, and where the run must pause, as the recording holds it.
   * Everything is compared unless switched off here: switch one off for an intentional change,
   * e.g. `{ match: { systemPrompt: false } }` after editing a prompt, until the fixture is
   * re-recorded (`rerecordThread`). `false` compares nothing and serves the responses by
   * position: what `rerecordThread` does, and the only way a version 1 recording (responses
   * only) is read.
   */
  match?: ReplayMatch | false;
}

/**
 * A request a paused run waits on, as `RunResult.interrupts` lists it: the interrupt's id and its
 * value, langchain's `HITLRequest` plus `subagent` when a subagent's call is gated.
 */
export interface PendingRequest {
  id: string;
  value: HITLRequest & {
    subagent?: { subagent_type: string; child_thread_id: string; description: string };
  };
}

/** How to fix a failed replay, appended to its message. */
const RERECORD_HINT =
  "re-record the fixture with rerecordThread(recording, { uid, setup }) from subagent-graph/testing";

interface ReplayCall {
  request: RecordedRequest | undefined;
  response: BaseMessage;
  approval: RecordedApproval | undefined;
}

interface Stream {
  label: string;
  calls: ReplayCall[];
  next: number;
  /** Indexes of the calls whose recorded pause the replay reached and answered (or skipped). */
  answered: Set<number>;
}

interface ChildStream extends Stream {
  subagentType: string;
  description: string;
  taken: boolean;
}

interface ReplayState {
  /** The recording as given (a bound copy is constructed from it). */
  source: AnyThreadRecording;
  recording: ReadRecording;
  /** The fields compared; undefined = none. */
  match: Required<RequestMatch> | undefined;
  /** Whether pauses for approval are compared ({@link ReplayMatch.approvals}). */
  approvals: boolean;
  parent: Stream;
  children: ChildStream[];
  /** Which stream each thread id calling the model replays. */
  byThread: Map<string, Stream>;
  /** Every call that did not go as recorded, in the order they happened. */
  violations: SubagentGraphError[];
}

/**
 * A chat model that serves a {@link ThreadRecording} back and checks that the graph still sends
 * what was recorded. Each calling thread is matched to its recording (the main agent by its
 * slug, a subagent by its slug and task description) and gets that recording's next response.
 *
 * Strict by default: each call's system prompt, subagents listed, tools offered (names and a
 * hash of their definitions) and input messages are compared with the recording, and the first
 * difference fails the call with `SCRIPT_VIOLATION`, naming the agent (and the task, for a
 * subagent), the call, the field and a short diff. So are a call the recording does not hold
 * (an extra turn, an unknown subagent or description). A subagent's failure is contained by
 * the graph (a failed record, the parent goes on), so every violation is also kept:
 * {@link assertComplete} throws the first one, and then fails on responses left unused.
 *
 * A thread that paused for approval is replayed the same way: where the recording paused after
 * a call, the run pauses, and {@link resume} checks the request (the same gated tools, in the
 * same order, with the same decisions allowed) and gives the recorded answer to resume with. A
 * gate dropped (the replay goes on past a recorded pause) or added (a pause the recording does
 * not hold, or for another tool) fails with `SCRIPT_VIOLATION` naming the tool.
 * `replayThread` (from `subagent-graph/testing`) runs every turn and answers every pause.
 *
 * Give it to every agent with `createRuntime({ modelFor: () => replay })`. Responses get new
 * message ids (so a replay makes new child threads), keeping their tool calls as recorded.
 *
 * @example
 * const replay = new ReplayModel(recording); // or { match: { systemPrompt: false } } while a prompt change is in progress
 * const runtime = await createRuntime({ checkpointer: "memory", database: ":memory:", modelFor: () => replay });
 * // … create the same agents, then:
 * let result = await runtime.run({ uid: "alice", agent: recording.agent, threadId: "t", input: recording.inputs[0] });
 * while (result.interrupts.length > 0)
 *   result = await runtime.run({ uid: "alice", threadId: "t", command: { resume: replay.resume(result.interrupts) } });
 * replay.assertComplete();
 */
export class ReplayModel extends BaseChatModel {
  private readonly state: ReplayState;
  private readonly boundTools: readonly BindToolsInput[];

  /**
   * @param recording a recording as `recordThread` wrote it (the parsed JSON of a fixture).
   * @param options what to compare (all by default).
   * @param bound internal: the state shared with the copy `bindTools` makes, and its tools.
   * @throws SubagentGraphError `VALIDATION_FAILED` for a malformed recording, or one of
   *   version 1 unless `match` is `false`.
   */
  constructor(
    recording: AnyThreadRecording,
    options: ReplayOptions = {},
    bound?: { state: ReplayState; tools: readonly BindToolsInput[] },
  ) {
    super({});
    this.boundTools = bound?.tools ?? [];
    this.state = bound?.state ?? initialState(recording, options);
  }

  _llmType(): string {
    return "replay";
  }

  /** The main agent's slug and the user's messages the recording holds, one per turn. */
  get recorded(): { agent: string; inputs: readonly string[] } {
    return { agent: this.state.recording.agent, inputs: this.state.recording.inputs };
  }

  /**
   * The recorded answers to the requests a paused run waits on (`RunResult.interrupts`), as
   * `command.resume` takes them (a map from interrupt id to `{ decisions }`). Each request is
   * matched to the agent or subagent run that made it and checked against the pause the
   * recording holds after that run's latest model call.
   *
   * @throws SubagentGraphError `SCRIPT_VIOLATION` naming the agent, the call and the tools, when
   *   the recording holds no pause there (a gate added) or one for other tools or decisions.
   */
  resume(pending: readonly PendingRequest[]): Record<string, RecordedApproval["resume"]> {
    const answers: Record<string, RecordedApproval["resume"]> = {};
    for (const request of pending) {
      const stream = this.streamOfRequest(request);
      const index = stream.next - 1;
      const recorded = stream.calls[index]?.approval;
      const at = `replay of ${stream.label} call #${index + 1}`;
      if (!recorded || stream.answered.has(index)) {
        if (this.state.approvals) {
          throw this.violation(
            `${at}: the agent now gates ${gatedTools(request.value)} (the run paused for approval of it), where the recording went on without a pause\n(${APPROVALS_HINT})`,
          );
        }
        answers[request.id] = approveAll(request.value);
        continue;
      }
      const differences = approvalDifferences(recorded.request, request.value);
      if (differences.length > 0) {
        if (this.state.approvals) {
          throw this.violation(
            `${at}: the request for approval differs from the recording (which paused for ${gatedTools(recorded.request)}): ${differences.join("; ")}\n(${APPROVALS_HINT})`,
          );
        }
        answers[request.id] = approveAll(request.value);
      } else {
        answers[request.id] = recorded.resume;
      }
      stream.answered.add(index);
    }
    return answers;
  }

  override bindTools(tools: BindToolsInput[]): ReplayModel {
    // createAgent binds the tools on every call; the bound copy shares the replay's state.
    return new ReplayModel(this.state.source, {}, { state: this.state, tools });
  }

  /**
   * Throws the first call that did not go as recorded, even when the graph contained it (a
   * subagent's call fails its record, not the run). Later ones are counted: they often follow
   * from the first (a failed subagent changes what its parent is sent next).
   */
  assertNoViolations(): void {
    const [first, ...later] = this.state.violations;
    if (!first) return;
    throw new SubagentGraphError(
      ErrorCode.ScriptViolation,
      later.length > 0
        ? `${first.message}\n(${later.length} later call(s) differed too, possibly as a consequence)`
        : first.message,
      { cause: first },
    );
  }

  /**
   * Throws when a call did not go as recorded ({@link assertNoViolations}), then when recorded
   * responses were left unused (the replay did less than the recording).
   */
  assertComplete(): void {
    this.assertNoViolations();
    const streams = [this.state.parent, ...this.state.children];
    if (this.state.approvals) {
      const unreached = streams.flatMap((stream) =>
        stream.calls.flatMap((call, index) =>
          call.approval && index < stream.next && !stream.answered.has(index)
            ? [`${stream.label} call #${index + 1} (${gatedTools(call.approval.request)})`]
            : [],
        ),
      );
      if (unreached.length > 0) {
        throw new SubagentGraphError(
          ErrorCode.ScriptViolation,
          `replay ended without the pauses for approval the recording holds after ${unreached.join("; ")}: answer each pause with replay.resume(result.interrupts) (replayThread does), or, if the agent no longer gates these tools on purpose, ${RERECORD_HINT}`,
        );
      }
    }
    const left = streams.filter((stream) => stream.next < stream.calls.length);
    if (left.length > 0) {
      throw new SubagentGraphError(
        ErrorCode.ScriptViolation,
        `replay ended with recorded responses unused: ${left
          .map((stream) => `${stream.label} used ${stream.next} of ${stream.calls.length}`)
          .join("; ")}`,
      );
    }
  }

  async _generate(
    messages: BaseMessage[],
    _options: this["ParsedCallOptions"] & BaseChatModelCallOptions,
  ): Promise<ChatResult> {
    const stream = this.streamFor(messages);
    // A pause the recording holds after the previous call explains whatever differs next.
    this.checkPauseBefore(stream);
    const recorded = stream.calls[stream.next];
    if (!recorded) {
      throw this.violation(
        `replay: ${stream.label} asked for model call #${stream.next + 1}, but the recording holds ${stream.calls.length}; the graph now does more than when it was recorded`,
      );
    }
    const match = this.state.match;
    if (match && recorded.request) {
      const sent = recordRequest({
        system: systemText(messages),
        tools: this.boundTools,
        messages,
      });
      const differences = requestDifferences(recorded.request, sent, match);
      if (differences.length > 0) {
        throw this.violation(differenceMessage(stream, stream.next, differences));
      }
    }
    stream.next += 1;
    const original = recorded.response as AIMessage;
    // A fresh id, as a model would give: the recorded one belongs to the recorded thread.
    const message = new AIMessage({
      content: original.content,
      tool_calls: original.tool_calls ?? [],
      ...(original.usage_metadata ? { usage_metadata: original.usage_metadata } : {}),
    });
    return { generations: [{ text: messageText(message), message }] };
  }

  /**
   * Fails a model call that comes after a call the recording paused after, when the replay did
   * not pause there: the agent no longer gates that tool (the call ran without asking).
   */
  private checkPauseBefore(stream: Stream): void {
    const index = stream.next - 1;
    const approval = stream.calls[index]?.approval;
    if (!approval || stream.answered.has(index)) return;
    if (!this.state.approvals) {
      stream.answered.add(index);
      return;
    }
    throw this.violation(
      `replay of ${stream.label} call #${index + 1}: the agent no longer gates ${gatedTools(approval.request)}: the recording paused after this call for approval of it, the replay went on to call #${index + 2} without a pause\n(${APPROVALS_HINT})`,
    );
  }

  /** The recording a request for approval comes from: the main agent's, or its subagent's. */
  private streamOfRequest(request: PendingRequest): Stream {
    const subagent = request.value.subagent;
    if (!subagent) return this.state.parent;
    const stream = this.state.byThread.get(subagent.child_thread_id);
    if (stream) return stream;
    throw this.violation(
      `replay: subagent "${subagent.subagent_type}" (task ${JSON.stringify(shorten(subagent.description, 60))}) asks for approval of ${gatedTools(request.value)} on child thread "${subagent.child_thread_id}", which made no model call this replay served`,
    );
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
      throw this.violation(
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

  /** A `SCRIPT_VIOLATION` for `message`, kept for {@link assertNoViolations}. */
  private violation(message: string): SubagentGraphError {
    const [first] = this.state.violations;
    const error = new SubagentGraphError(ErrorCode.ScriptViolation, message);
    this.state.violations.push(error);
    if (!first) return error;
    // What fails the run should name the cause: the first difference (often a subagent's, which
    // the graph contained), and then this one, which may only follow from it.
    return new SubagentGraphError(
      ErrorCode.ScriptViolation,
      `${first.message}\n(then: ${message.split("\n")[0]?.replace(/:$/, "")})`,
      { cause: error },
    );
  }
}

/** How to accept a change of the gates, appended to an approval's failure. */
const APPROVALS_HINT = `if the change is intended: ${RERECORD_HINT}, or relax with { match: { approvals: false } } meanwhile`;

/** Approves every call of `request`: what an ungated call amounts to. */
function approveAll(request: HITLRequest): RecordedApproval["resume"] {
  return { decisions: request.actionRequests.map(() => ({ type: "approve" as const })) };
}

function initialState(recording: AnyThreadRecording, options: ReplayOptions): ReplayState {
  const read = readRecording(recording);
  const match =
    options.match === false
      ? undefined
      : {
          systemPrompt: options.match?.systemPrompt ?? true,
          subagents: options.match?.subagents ?? true,
          tools: options.match?.tools ?? true,
          messages: options.match?.messages ?? true,
        };
  if (read.version === 1 && match) {
    throw new SubagentGraphError(
      ErrorCode.Validation,
      `recording version 1 holds the model's responses but not what each call was sent (system prompt, subagents, tools, messages), so a replay of it could not tell a changed agent from an unchanged one: ${RERECORD_HINT} (it replays the responses and records what your agents send now, as version ${RECORDING_VERSION}), or pass { match: false } to replay it unchecked`,
      { field: "version" },
    );
  }
  const restore = (calls: ReadRecording["calls"]): ReplayCall[] => {
    const responses = mapStoredMessagesToChatMessages(calls.map((call) => call.response));
    return calls.map((call, index) => ({
      request: call.request,
      response: responses[index] ?? new AIMessage(""),
      approval: call.approval,
    }));
  };
  return {
    source: recording,
    recording: read,
    match,
    approvals: options.match !== false && (options.match?.approvals ?? true),
    parent: {
      label: `agent "${read.agent}"`,
      calls: restore(read.calls),
      next: 0,
      answered: new Set(),
    },
    children: read.children.map((child) => ({
      label: `subagent "${child.subagent_type}" (task ${JSON.stringify(shorten(child.description, 60))})`,
      calls: restore(child.calls),
      next: 0,
      answered: new Set<number>(),
      subagentType: child.subagent_type,
      description: child.description,
      taken: false,
    })),
    byThread: new Map(),
    violations: [],
  };
}

/** A failed comparison: where, what differs, and how to accept the change. */
function differenceMessage(
  stream: Stream,
  index: number,
  differences: readonly RequestDifference[],
): string {
  const relax = differences.map((difference) => `${difference.field}: false`).join(", ");
  return [
    `replay of ${stream.label} call #${index + 1}: ${differences.map((d) => d.text).join("\n")}`,
    `(if the change is intended: relax with { match: { ${relax} } }, or ${RERECORD_HINT})`,
  ].join("\n");
}

/** `text` up to `max` characters, an ellipsis marking a cut. */
function shorten(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1).trimEnd()}…`;
}

function safeConfig() {
  try {
    return getConfig();
  } catch {
    return undefined;
  }
}
