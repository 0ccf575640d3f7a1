import type { BaseMessage } from "@langchain/core/messages";
import { INTERRUPT } from "@langchain/langgraph";
import type { BaseCheckpointSaver, CheckpointPendingWrite } from "@langchain/langgraph-checkpoint";
import { type ApprovalRequest, isApprovalRequest } from "../middleware/approval-request.js";
import type { RecordedApproval } from "../models/recording-format.js";
import type { ThreadCheckpoint } from "./thread-state.js";

/** LangGraph's channel for the values an interrupted task was resumed with. */
const RESUME = "__resume__";
/** LangGraph's task id of writes that belong to no task (a lone resume value). */
const NULL_TASK_ID = "00000000-0000-0000-0000-000000000000";

/** A pending write as a saver lists it: task id, channel, value. */
type CheckpointWrite = CheckpointPendingWrite<string>;

/** A call whose tool calls waited for approval: the pause, and the model's response as given. */
export interface GatedCall {
  approval: RecordedApproval;
  /** The AI message as the checkpoint the pause was raised from holds it, before any decision. */
  response: BaseMessage;
}

/** What {@link recordedPauses} found on one thread. */
export interface ThreadPauses {
  /** Answered pauses by the id of the AI message whose calls waited. */
  answered: Map<string, GatedCall>;
  /** The request the thread's newest checkpoint still waits on, if it does. */
  waiting: ApprovalRequest | undefined;
}

/**
 * The pauses for approval of one thread, read from its checkpoints' pending writes: LangGraph
 * keeps, beside the checkpoint a paused step started from, the interrupt the step raised (the
 * request) and, once resumed, the value it was resumed with. The AI message the request gates is
 * the last one of that checkpoint (langchain's `humanInTheLoopMiddleware` runs right after the
 * model). A parent's interrupt that carries a child's request (`subagent`) only counts as
 * waiting: the child's own thread holds that pause, and `subagent` is given for the requests
 * found there.
 *
 * Checkpoints of other branches (a replay from before the pause) are read too; their AI
 * messages are not in the thread's latest messages, so a recording never uses them.
 */
export async function recordedPauses(
  saver: BaseCheckpointSaver,
  threadId: string,
  history: readonly ThreadCheckpoint[],
  subagent?: RecordedApproval["request"]["subagent"],
): Promise<ThreadPauses> {
  const byCheckpoint = new Map(history.map((checkpoint) => [checkpoint.checkpointId, checkpoint]));
  const answered = new Map<string, GatedCall>();
  let waiting: ApprovalRequest | undefined;
  let newest = true;
  for await (const tuple of saver.list({
    configurable: { thread_id: threadId, checkpoint_ns: "" },
  })) {
    const writes = tuple.pendingWrites ?? [];
    for (const { taskId, id, index, request } of approvalInterrupts(writes)) {
      const resume = resumeValue(writes, taskId, id, index);
      if (resume === undefined) {
        // Only the newest checkpoint can still wait; an older unanswered one was left behind.
        if (newest) waiting = request;
        continue;
      }
      if (request.subagent) continue;
      const gated = byCheckpoint
        .get(tuple.checkpoint.id)
        ?.messages.findLast((message) => message.getType() === "ai");
      if (!gated?.id) continue;
      answered.set(gated.id, {
        response: gated,
        approval: {
          request: {
            actionRequests: request.actionRequests,
            reviewConfigs: request.reviewConfigs,
            ...(subagent ? { subagent } : {}),
          },
          resume: resume as RecordedApproval["resume"],
        },
      });
    }
    newest = false;
  }
  return { answered, waiting };
}

/** The approval requests a checkpoint's tasks raised, with the task and position of each. */
function approvalInterrupts(writes: readonly CheckpointWrite[]) {
  return writes.flatMap(([taskId, channel, value]) => {
    if (channel !== INTERRUPT) return [];
    const items = Array.isArray(value) ? value : [value];
    return items.flatMap((item, index) => {
      const { id, value: request } = (item ?? {}) as { id?: unknown; value?: unknown };
      if (!isApprovalRequest(request)) return [];
      return [{ taskId, id: typeof id === "string" ? id : undefined, index, request }];
    });
  });
}

/**
 * The value an interrupt was resumed with: written under the interrupt's id when the resume
 * named it (a map, as the runtime always sends), else the task's list of resume values (one per
 * `interrupt()` it called, in order), else a lone resume value of the step.
 */
function resumeValue(
  writes: readonly CheckpointWrite[],
  taskId: string,
  interruptId: string | undefined,
  index: number,
): unknown {
  const resumes = writes.filter(([, channel]) => channel === RESUME);
  const byId = resumes.find(([task]) => task === interruptId)?.[2];
  // LangGraph writes [earlier value?, this value]: the answer is the last one.
  if (Array.isArray(byId) && byId.length > 0) return byId.at(-1);
  const byTask = resumes.find(([task]) => task === taskId)?.[2];
  if (Array.isArray(byTask) && byTask[index] !== undefined) return byTask[index];
  return resumes.find(([task]) => task === NULL_TASK_ID)?.[2];
}
