import { type BaseMessage, mapChatMessagesToStoredMessages } from "@langchain/core/messages";
import { ErrorCode, SubagentGraphError } from "../errors.js";
import type { RecordedRequest } from "../models/model-request.js";
import {
  RECORDING_VERSION,
  type RecordedCall,
  type ThreadRecording,
} from "../models/recording-format.js";
import { messageText } from "../util/message-text.js";
import type { ChildThreadView } from "./thread-history.js";
import type { ThreadCheckpoint } from "./thread-state.js";

/** What {@link recordThread} reads through (the runtime has it). */
export interface RecordingSource {
  history(uid: string, threadId: string): Promise<ThreadCheckpoint[]>;
  childThread(uid: string, childThreadId: string): Promise<ChildThreadView>;
  agents: { get(uid: string, idOrSlug: string): Promise<{ slug: string }> };
  threads: { get(uid: string, threadId: string): Promise<{ agentId: string | undefined }> };
  /** What the call that produced AI message `messageId` was sent (see `recordModelRequests`). */
  modelRequest(messageId: string): RecordedRequest | undefined;
}

/**
 * Records a thread's model calls for {@link ReplayModel}: the responses from its checkpoints
 * (its latest state and each of its children's), each with what its call was sent, which the
 * runtime noted when the call was made. So the thread must have been run by this runtime,
 * created with `recordModelRequests: true`. Refused and child-less task calls record nothing.
 *
 * @throws SubagentGraphError `VALIDATION_FAILED` (field `recordModelRequests`) when a response
 *   has no noted request: the runtime did not record, or the thread ran in another process.
 */
export async function recordThread(
  source: RecordingSource,
  uid: string,
  threadId: string,
): Promise<ThreadRecording> {
  const [latest] = await source.history(uid, threadId);
  const thread = await source.threads.get(uid, threadId);
  const agent = thread.agentId ? (await source.agents.get(uid, thread.agentId)).slug : "";
  const messages = latest?.messages ?? [];
  const calls = modelCalls(source, messages, `agent "${agent}"`, threadId);
  const children = [];
  for (const run of latest?.subagentRuns ?? []) {
    if (!run.child_thread_id) continue;
    const child = await source.childThread(uid, run.child_thread_id);
    children.push({
      subagent_type: run.subagent_type,
      description: run.description,
      calls: modelCalls(source, child.messages, `subagent "${run.subagent_type}"`, threadId),
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

function modelCalls(
  source: RecordingSource,
  messages: readonly BaseMessage[],
  label: string,
  threadId: string,
): RecordedCall[] {
  const responses = messages.filter((m) => m.getType() === "ai");
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
    return { request, response: recorded };
  });
}
