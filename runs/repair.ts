import { type AIMessage, type BaseMessage, ToolMessage } from "@langchain/core/messages";
import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";
import type { AgentGraph } from "../backends/registry.js";
import { makeChildThreadId } from "../checkpoints/child-thread-id.js";
import { finishedRun } from "../middleware/run-records.js";
import type { SubagentRun } from "../middleware/subagent-runs.js";
import { TASK_TOOL_NAME } from "../middleware/task.js";
import { firstCheckpointTime, readThreadState } from "../threads/thread-state.js";
import { messagesOf } from "../util/state-messages.js";

const CANCELLED = "cancelled with the parent run";

/** A saver that can wait for its writes in flight on a thread (our SQLite and PostgreSQL ones). */
interface SettlingSaver {
  threadSettled(threadId: string): Promise<void>;
}

/**
 * Makes a thread usable again after its run was cancelled mid-turn.
 *
 * An aborted run rejects at once and drops whatever its tools return afterwards, so the last
 * checkpoint can hold an assistant turn whose tool calls were never answered; OpenAI-compatible
 * APIs reject the next request on such a thread. This answers each unanswered call (calls that
 * did finish keep their answers) and records every unanswered `task` call as `cancelled`, with
 * the rounds and usage its child thread shows. The update is written without `asNode`, so the
 * thread ends there (`next: []`) instead of calling the model again on resume.
 *
 * @returns how many calls were answered (0 when the thread needed nothing).
 */
export async function repairCancelledTurn(
  graph: AgentGraph,
  saver: BaseCheckpointSaver,
  threadId: string,
  /** When the cancelled run started: the start of a cancelled call whose child never ran. */
  runStartedAt: string,
): Promise<number> {
  const config = { configurable: { thread_id: threadId } };
  // The aborted run may still be storing the answers of calls that finished just before it
  // stopped (checkpoints/send-refs.ts): read after them, or they would be answered twice.
  await (saver as Partial<SettlingSaver>).threadSettled?.(threadId);
  const state = await graph.getState(config);
  const messages = messagesOf(state.values);
  const turn = lastToolCallingTurn(messages);
  if (!turn) return 0;
  const answered = answeredCalls(messages, turn.index);
  const unanswered = (turn.message.tool_calls ?? []).filter(
    (call) => call.id !== undefined && !answered.has(call.id),
  );
  if (unanswered.length === 0) return 0;

  const toolMessages: ToolMessage[] = [];
  const runs: SubagentRun[] = [];
  for (const call of unanswered) {
    const id = call.id ?? "";
    if (call.name !== TASK_TOOL_NAME) {
      toolMessages.push(
        new ToolMessage({
          content: `tool call ${CANCELLED}`,
          tool_call_id: id,
          name: call.name,
          status: "error",
        }),
      );
      continue;
    }
    const slug = typeof call.args.subagent_type === "string" ? call.args.subagent_type : "";
    const childThreadId = safeChildThreadId(threadId, slug, id, turn.message.id ?? id);
    const child = childThreadId ? await readThreadState(saver, childThreadId) : undefined;
    const run = finishedRun(
      {
        id,
        subagent_type: slug,
        // Only name a child thread that exists: a call refused or not started has none.
        child_thread_id: child?.checkpointId ? (childThreadId ?? "") : "",
        description: typeof call.args.description === "string" ? call.args.description : "",
        // The child's own start (its first checkpoint): the run's start would make a card's
        // elapsed time jump back by everything the run did before this call.
        started_at:
          (child?.checkpointId && childThreadId
            ? await firstCheckpointTime(saver, childThreadId)
            : undefined) ?? runStartedAt,
      },
      {
        status: "cancelled",
        messages: child?.messages ?? [],
        maxRoundsReached: false,
        preview: "",
        error: CANCELLED,
      },
    );
    runs.push(run);
    toolMessages.push(
      new ToolMessage({
        content: `subagent "${slug}" ${CANCELLED}`,
        tool_call_id: id,
        name: TASK_TOOL_NAME,
        status: "error",
        artifact: run,
      }),
    );
  }
  // Reading the children above takes time, in which a call that finished just before the cancel
  // can still get its answer stored: answer only the calls still unanswered now.
  await (saver as Partial<SettlingSaver>).threadSettled?.(threadId);
  const now = answeredCalls(messagesOf((await graph.getState(config)).values), turn.index);
  const stillOpen = toolMessages.filter((message) => !now.has(message.tool_call_id));
  if (stillOpen.length === 0) return 0;
  const openRuns = runs.filter((run) => !now.has(run.id));
  await graph.updateState(
    config,
    openRuns.length > 0
      ? { messages: stillOpen, subagent_runs: openRuns }
      : { messages: stillOpen },
  );
  return stillOpen.length;
}

/** The ids of the tool calls answered after the message at `turnIndex`. */
function answeredCalls(messages: BaseMessage[], turnIndex: number): Set<string> {
  return new Set(
    messages
      .slice(turnIndex + 1)
      .filter((message) => message.getType() === "tool")
      .map((message) => (message as ToolMessage).tool_call_id),
  );
}

/** The last AI message with tool calls, if no later AI message followed it. */
function lastToolCallingTurn(
  messages: BaseMessage[],
): { message: AIMessage; index: number } | undefined {
  for (let index = messages.length - 1; index >= 0; index -= 1) {
    const message = messages[index];
    if (message?.getType() !== "ai") continue;
    const ai = message as AIMessage;
    return (ai.tool_calls?.length ?? 0) > 0 ? { message: ai, index } : undefined;
  }
  return undefined;
}

function safeChildThreadId(
  parentThreadId: string,
  slug: string,
  toolCallId: string,
  aiMessageId: string,
): string | undefined {
  try {
    return makeChildThreadId({ parentThreadId, slug, toolCallId, aiMessageId });
  } catch {
    return undefined; // not a valid slug: no child was ever made for it
  }
}
