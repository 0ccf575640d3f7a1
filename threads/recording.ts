import { type BaseMessage, mapChatMessagesToStoredMessages } from "@langchain/core/messages";
import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";
import { ErrorCode, SubagentGraphError } from "../errors.js";
import { describeApproval } from "../middleware/approval-request.js";
import type { RecordedRequest } from "../models/model-request.js";
import {
  RECORDING_VERSION,
  type RecordedCall,
  type ThreadRecording,
} from "../models/recording-format.js";
import { messageText } from "../util/message-text.js";
import { type GatedCall, recordedPauses } from "./recorded-pauses.js";
import type { ThreadCheckpoint } from "./thread-state.js";

/** What {@link recordThread} reads through (the runtime has it). */
export interface RecordingSource {
  history(uid: string, threadId: string): Promise<ThreadCheckpoint[]>;
  childHistory(uid: string, childThreadId: string): Promise<ThreadCheckpoint[]>;
  /** The saver, whose pending writes hold each pause's request and the value it was resumed with. */
  readonly checkpointer: BaseCheckpointSaver;
  agents: { get(uid: string, idOrSlug: string): Promise<{ slug: string }> };
  threads: { get(uid: string, threadId: string): Promise<{ agentId: string | undefined }> };
  /** What the call that produced AI message `messageId` was sent (see `recordModelRequests`). */
  modelRequest(messageId: string): RecordedRequest | undefined;
}

/**
 * Records a thread's model calls for {@link ReplayModel}: the responses from its checkpoints
 * (its latest state and each of its children's), each with what its call was sent, which the
 * runtime noted when the call was made, and, for a call whose tool calls waited for approval,
 * the request and the value the thread was resumed with (from the checkpoints' pending writes).
 * So the thread must have been run by this runtime, created with `recordModelRequests: true`.
 * Refused and child-less task calls record nothing.
 *
 * @throws SubagentGraphError `VALIDATION_FAILED` (field `recordModelRequests`) when a response
 *   has no noted request: the runtime did not record, or the thread ran in another process;
 *   (field `threadId`) when the thread waits for approval: a recording holds answered pauses.
 */
export async function recordThread(
  source: RecordingSource,
  uid: string,
  threadId: string,
): Promise<ThreadRecording> {
  const history = await source.history(uid, threadId);
  const [latest] = history;
  const thread = await source.threads.get(uid, threadId);
  const agent = thread.agentId ? (await source.agents.get(uid, thread.agentId)).slug : "";
  const messages = latest?.messages ?? [];
  const label = `agent "${agent}"`;
  const pauses = await answeredPauses(source, threadId, history, label, threadId);
  const calls = modelCalls(source, messages, label, threadId, pauses);
  const children = [];
  for (const run of latest?.subagentRuns ?? []) {
    if (!run.child_thread_id) continue;
    const childHistory = await source.childHistory(uid, run.child_thread_id);
    const childLabel = `subagent "${run.subagent_type}"`;
    const childPauses = await answeredPauses(
      source,
      run.child_thread_id,
      childHistory,
      childLabel,
      threadId,
      { subagent_type: run.subagent_type, description: run.description },
    );
    children.push({
      subagent_type: run.subagent_type,
      description: run.description,
      calls: modelCalls(source, childHistory[0]?.messages ?? [], childLabel, threadId, childPauses),
    });
  }
  return {
    version: RECORDING_VERSION,
    agent,
    inputs: messages.filter((m) => m.getType() === "human").map((m) => messageText(m)),
    calls,
    children,
  };
}

/**
 * The pauses of one thread (the main one or a child) by the id of the AI message whose calls
 * waited, each answered; refuses a thread that still waits (nothing to record as its answer).
 */
async function answeredPauses(
  source: RecordingSource,
  pausedThreadId: string,
  history: readonly ThreadCheckpoint[],
  label: string,
  threadId: string,
  subagent?: { subagent_type: string; description: string },
): Promise<Map<string, GatedCall>> {
  const { answered, waiting } = await recordedPauses(
    source.checkpointer,
    pausedThreadId,
    history,
    subagent,
  );
  if (waiting) {
    throw new SubagentGraphError(
      ErrorCode.Validation,
      `cannot record thread "${threadId}": ${label} waits for approval of ${describeApproval(waiting)}, and a recording holds each pause with the answer it got: resume the thread (command.resume) until the turn has finished, then record it`,
      { field: "threadId" },
    );
  }
  return answered;
}

function modelCalls(
  source: RecordingSource,
  messages: readonly BaseMessage[],
  label: string,
  threadId: string,
  pauses: ReadonlyMap<string, GatedCall>,
): RecordedCall[] {
  // A gated call's response as the model gave it: a person's edit or reject rewrites the AI
  // message in the state (langchain's humanInTheLoopMiddleware keeps its id), and a replay must
  // serve what the model said and let the recorded decision rewrite it again.
  const responses = messages
    .filter((m) => m.getType() === "ai")
    .map((m) => (m.id ? (pauses.get(m.id)?.response ?? m) : m));
  const stored = mapChatMessagesToStoredMessages(responses);
  return responses.map((response, index) => {
    const request = response.id ? source.modelRequest(response.id) : undefined;
    const recorded = stored[index];
    if (!request || !recorded) {
      throw new SubagentGraphError(
        ErrorCode.Validation,
        `cannot record thread "${threadId}": what model call #${index + 1} of ${label} was sent is unknown (checkpoints hold the messages, not the system prompt and tools of each call): run the conversation on a runtime created with { recordModelRequests: true } and record it there, or update an existing fixture with rerecordThread`,
        { field: "recordModelRequests" },
      );
    }
    const approval = response.id ? pauses.get(response.id)?.approval : undefined;
    return { request, response: recorded, ...(approval ? { approval } : {}) };
  });
}
