import { type BaseMessage, mapChatMessagesToStoredMessages } from "@langchain/core/messages";
import { RECORDING_VERSION, type ThreadRecording } from "../models/replay.js";
import type { ChildThreadView } from "../runtime.js";
import { messageText } from "../util/message-text.js";
import type { ThreadCheckpoint } from "./thread-state.js";

/** What {@link recordThread} reads through (the runtime has it). */
export interface RecordingSource {
  history(uid: string, threadId: string): Promise<ThreadCheckpoint[]>;
  childThread(uid: string, childThreadId: string): Promise<ChildThreadView>;
  agents: { get(uid: string, idOrSlug: string): Promise<{ slug: string }> };
  threads: { get(uid: string, threadId: string): Promise<{ agentId: string | undefined }> };
}

/**
 * Records a thread's model responses from its checkpoints (its latest state and each of its
 * children's), for {@link ReplayModel}. Refused and child-less task calls record nothing.
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
  const children = [];
  for (const run of latest?.subagentRuns ?? []) {
    if (!run.child_thread_id) continue;
    const child = await source.childThread(uid, run.child_thread_id);
    children.push({
      subagent_type: run.subagent_type,
      description: run.description,
      responses: aiResponses(child.messages),
    });
  }
  return {
    version: RECORDING_VERSION,
    agent,
    inputs: messages.filter((m) => m.getType() === "human").map((m) => messageText(m)),
    responses: aiResponses(messages),
    children,
  };
}

function aiResponses(messages: readonly BaseMessage[]) {
  return mapChatMessagesToStoredMessages(messages.filter((m) => m.getType() === "ai"));
}
