/**
 * One input of a background task, run on its child thread: a message (its description, a
 * follow-up) or a person's decision on the request it waits on. The child is a subagent run
 * exactly as a `task` call runs it (its graph, tools, rounds, knowledge bases, file scopes), as a
 * root run of its own thread with `durability: "sync"`, so a process that dies mid-way leaves
 * the child to be continued from its last finished step.
 */

import { type AIMessage, HumanMessage } from "@langchain/core/messages";
import { Command, INTERRUPT } from "@langchain/langgraph";
import { type PendingApproval, pendingApprovalsOf } from "../../middleware/approval-request.js";
import type { LoadedChild } from "../../middleware/task-types.js";
import type { SubagentRunContext } from "../../run-context.js";
import type { AsyncTaskInput } from "../../store/async-tasks.js";
import { messageText } from "../../util/message-text.js";
import { messagesOf } from "../../util/state-messages.js";

/** How one input ended: the child answered, or paused on a gated call. */
export type SegmentOutcome =
  | { kind: "answered"; answer: string }
  | { kind: "waiting"; approval: PendingApproval };

/** Who the child runs for, and where. */
export interface SegmentScope {
  uid: string;
  parentThreadId: string;
  childThreadId: string;
  description: string;
}

/**
 * Runs `input` on the child. `resumed`: an earlier attempt may have started this input (its
 * process died, or gave the task back as it closed), so the child's thread is read first: a
 * message it already holds, or a decision it already took, is not given again; the child goes
 * on from its last checkpoint (or, had it answered, is not run again).
 */
export async function runSegment(
  child: LoadedChild,
  scope: SegmentScope,
  input: AsyncTaskInput,
  approvalId: string | undefined,
  signal: AbortSignal,
  resumed: boolean,
): Promise<SegmentOutcome> {
  const context: SubagentRunContext = {
    uid: scope.uid,
    thread_id: scope.childThreadId,
    parent_thread_id: scope.parentThreadId,
    // Main runs share files under their own thread: the child reads its uploads, writes its outputs.
    file_thread_id: scope.parentThreadId,
    skills_thread_id: scope.childThreadId,
    is_subagent_runtime: true,
    allowed_tools: [...child.toolNames],
    max_rounds: child.maxRounds,
    intent: scope.description,
    knowledge_base_ids: [...(child.knowledgeBaseIds ?? [])],
  };
  const config = {
    configurable: { thread_id: scope.childThreadId, checkpoint_ns: "" },
    context,
    signal,
    runName: scope.childThreadId,
    recursionLimit: 100,
    // Each step saved before the next: a takeover re-runs no finished step.
    durability: "sync" as const,
  };
  let graphInput: unknown =
    input.kind === "message"
      ? { messages: [new HumanMessage({ content: input.text, id: input.id })] }
      : new Command({ resume: approvalId ? { [approvalId]: input.resume } : input.resume });
  if (resumed) {
    const state = await child.graph.getState(config);
    // A message is in the child's thread once it started; a decision, once the child no longer
    // waits on the request it answers.
    const started =
      input.kind === "message"
        ? messagesOf(state.values).some((message) => message.id === input.id)
        : !(state.tasks ?? []).some((task) =>
            (task.interrupts ?? []).some(
              (pending) => (pending as { id?: unknown } | undefined)?.id === approvalId,
            ),
          );
    if (started) {
      if (state.next.length === 0) return outcomeOf(state.values);
      graphInput = null;
    }
  }
  const values = await child.graph.invoke(graphInput, config);
  return outcomeOf(values);
}

function outcomeOf(values: unknown): SegmentOutcome {
  const interrupts = (values as Record<string, unknown> | undefined)?.[INTERRUPT];
  const [pending] = pendingApprovalsOf(Array.isArray(interrupts) ? interrupts : []);
  if (pending) return { kind: "waiting", approval: pending };
  return { kind: "answered", answer: finalAnswer(messagesOf(values)) };
}

/** The text of the child's last assistant message ("" when it ended on tool calls only). */
function finalAnswer(messages: readonly unknown[]): string {
  for (let index = messages.length - 1; index >= 0; index -= 1) {
    const message = messages[index] as AIMessage | undefined;
    if (message?.getType() === "ai") return messageText(message);
  }
  return "";
}
