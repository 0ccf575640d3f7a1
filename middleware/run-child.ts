import { type BaseMessage, HumanMessage } from "@langchain/core/messages";
import { Command, INTERRUPT, interrupt, isGraphInterrupt } from "@langchain/langgraph";
import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";
import { freshThreadsOf } from "../checkpoints/fresh-threads.js";
import { getTupleForWrites, listForWrites } from "../checkpoints/writes-reads.js";
import { messagesOf } from "../util/state-messages.js";
import {
  type ApprovalRequest,
  type ApprovalSubagent,
  type PendingApproval,
  pendingApprovalsOf,
  pendingApprovalsOfWrites,
} from "./approval-request.js";
import { withoutAmbientCallbacks } from "./child-namespace.js";
import { type ChildGraph, type childRunConfig, PREGEL_CHECKPOINTER_KEY } from "./child-run.js";

type ChildConfig = ReturnType<typeof childRunConfig>;

/** How a child run ended (its own pauses for approval are answered inside {@link runChild}). */
export interface ChildOutcome {
  messages: BaseMessage[];
  maxRoundsReached: boolean;
}

/** What {@link runChild} needs to pass a child's approval request up to the parent's thread. */
export interface ChildApprovals {
  /** Who is asking: the `task` call's subagent, as the parent's request names it. */
  subagent: ApprovalSubagent;
  /** Called with the parent's interrupt id when the request pauses the parent's task call. */
  onWaiting(pending: PendingApproval): void;
  /**
   * Starts the child's time limit before it runs, with the time it ran before (its earlier
   * segments, between its start or resume and its pause: never the wait for a person).
   */
  startClock(usedMs: number): void;
}

/**
 * Runs the child, or picks up where it stopped: a child thread that already has checkpoints is
 * the same call resumed (after a crash, or after a person answered its request: its id is stable
 * for the same parent checkpoint), so an unfinished child continues from its last checkpoint and
 * a finished one is not run again. When the call cannot have started before (`maybeStarted`
 * false: see `NEW_INPUT_KEY` in `child-run.ts`), the thread is not read first.
 *
 * A child that pauses on a gated tool call (its own `interrupt_on`) pauses this `task` call
 * with LangGraph's `interrupt()`, whose value is the child's request plus `subagent`. When the
 * parent is resumed, LangGraph runs this call again and `interrupt()` returns the person's
 * decisions, which resume the child on its own thread. `interrupt()` answers by position within
 * a call, so a call that runs again first passes over the decisions its child has already
 * consumed (counted on the child's thread), then asks for the one its child waits on.
 */
export async function runChild(
  child: ChildGraph,
  description: string,
  config: ChildConfig,
  { maybeStarted }: { maybeStarted: boolean },
  approvals: ChildApprovals,
): Promise<ChildOutcome> {
  const input = () => ({ messages: [new HumanMessage(description)] });
  const saver = (config.configurable?.[PREGEL_CHECKPOINTER_KEY] ?? child.checkpointer) as
    | BaseCheckpointSaver
    | undefined;
  let values: unknown;
  if (!maybeStarted) {
    approvals.startClock(0);
    // Nor by the two reads that invoking it makes before its first step (see FreshThreads).
    const end = freshThreadsOf(saver)?.expect(String(config.configurable?.thread_id));
    try {
      values = await invokeChild(child, input(), config);
    } finally {
      end?.();
    }
  } else {
    values = await continueChild(child, config, saver, input, approvals);
  }
  for (;;) {
    const pending = pendingApprovalsOf(interruptsOfValues(values))[0];
    if (!pending) return outcomeOf(values);
    const decision = askParent(pending.value, approvals);
    values = await invokeChild(child, new Command({ resume: { [pending.id]: decision } }), config);
  }
}

/**
 * The child's thread read first: started, paused, finished or cut short. Its newest checkpoint
 * alone (its pending writes, no state rebuilt) tells the common case, a child paused on a
 * request not answered yet, which is what the call finds each time its parent is resumed;
 * the child's whole state is read only for the others (a process that stopped mid-way).
 */
async function continueChild(
  child: ChildGraph,
  config: ChildConfig,
  saver: BaseCheckpointSaver | undefined,
  input: () => { messages: HumanMessage[] },
  approvals: ChildApprovals,
): Promise<unknown> {
  const newest = saver
    ? await getTupleForWrites(saver, {
        configurable: { thread_id: config.configurable?.thread_id, checkpoint_ns: "" },
      })
    : undefined;
  const writes = newest?.pendingWrites ?? [];
  const waiting = pendingApprovalsOfWrites(writes);
  if (
    saver &&
    newest?.metadata?.source === "loop" &&
    waiting.length > 0 &&
    !writes.some(([, channel]) => channel === RESUME_CHANNEL)
  ) {
    // Paused, and not answered yet: the loop asks, after passing over the decisions this call
    // was given before, which the child has consumed (in order).
    const answered = await childHistory(saver, config);
    approvals.startClock(answered.runningMs);
    for (let index = 0; index < answered.count; index += 1) interrupt(undefined);
    return { [INTERRUPT]: waiting };
  }
  const existing = await child.getState(config);
  const messages = messagesOf(existing.values);
  // A thread whose newest checkpoint is still the input one made no progress that was saved
  // (the process died before its first step was written): start it again from the task.
  if (existing.metadata?.source === "input" || messages.length === 0) {
    approvals.startClock(0);
    return invokeChild(child, input(), config);
  }
  // Decisions this call was given before, which the child has consumed: passed over in order.
  const answered = saver
    ? await childHistory(saver, config)
    : { count: 0, newest: false, runningMs: 0 };
  approvals.startClock(answered.runningMs);
  for (let index = 0; index < answered.count; index += 1) interrupt(undefined);
  const pending = pendingApprovalsOf(
    (existing.tasks ?? []).flatMap((task) => task.interrupts ?? []),
  );
  // Paused, and not answered yet: the loop asks. Answered but not yet consumed (a process
  // stopped between the two): LangGraph resumes it with the decision it stored.
  if (pending.length > 0 && !answered.newest) return { [INTERRUPT]: pending };
  if (existing.next.length > 0) return invokeChild(child, null, config);
  if (isFinished(existing.values)) return existing.values;
  // Nothing scheduled, yet no answer: a process killed while checkpoints were written
  // asynchronously can leave a step whose successor was not recorded. An empty update enters
  // the loop again from the start, on the messages the child already has.
  return invokeChild(child, { messages: [] }, config);
}

/**
 * Invokes the child; a pause is its result (`__interrupt__`), as a root run's would be. Invoked
 * inside the parent's tool, LangGraph throws the child's interrupt instead of returning it, and
 * let through it would become the parent's own interrupt, with no `subagent` and an id that
 * answers nothing on the parent's thread.
 */
async function invokeChild(
  child: ChildGraph,
  input: unknown,
  config: ChildConfig,
): Promise<unknown> {
  try {
    return await withoutAmbientCallbacks(() => child.invoke(input, config));
  } catch (error) {
    if (isGraphInterrupt(error)) return { [INTERRUPT]: error.interrupts };
    throw error;
  }
}

/**
 * The parent's `interrupt()` for the child's request: the person's decisions once the parent
 * is resumed with them, else it pauses the `task` call (LangGraph's `GraphInterrupt`, which the
 * task tool lets through), after telling `onWaiting`.
 */
function askParent(request: ApprovalRequest, approvals: ChildApprovals): unknown {
  const value: ApprovalRequest = {
    actionRequests: request.actionRequests,
    reviewConfigs: request.reviewConfigs,
    subagent: approvals.subagent,
  };
  try {
    return interrupt(value);
  } catch (error) {
    if (isGraphInterrupt(error)) {
      const id = error.interrupts[0]?.id;
      if (id) approvals.onWaiting({ id, value });
    }
    throw error;
  }
}

/**
 * What the child's checkpoints say of its pauses: how many requests it has had answered
 * (checkpoints holding a resume write), whether its newest checkpoint is one (answered, the
 * child not yet past it), and how long it ran, summed over its segments (from its first
 * checkpoint, or the first after a pause, to the next pause or its newest checkpoint).
 */
async function childHistory(
  saver: BaseCheckpointSaver,
  config: ChildConfig,
): Promise<{ count: number; newest: boolean; runningMs: number }> {
  const threadId = config.configurable?.thread_id;
  const checkpoints: { at: number; paused: boolean; resumed: boolean }[] = [];
  for await (const tuple of listForWrites(saver, {
    configurable: { thread_id: threadId, checkpoint_ns: "" },
  })) {
    const channels = new Set((tuple.pendingWrites ?? []).map(([, channel]) => channel));
    checkpoints.push({
      at: Date.parse(tuple.checkpoint.ts),
      paused: channels.has(INTERRUPT),
      resumed: channels.has(RESUME_CHANNEL),
    });
  }
  checkpoints.reverse();
  let runningMs = 0;
  let segmentStart: number | undefined;
  for (const checkpoint of checkpoints) {
    segmentStart ??= checkpoint.at;
    if (checkpoint.paused) {
      runningMs += checkpoint.at - segmentStart;
      segmentStart = undefined;
    }
  }
  const last = checkpoints.at(-1);
  if (segmentStart !== undefined && last) runningMs += last.at - segmentStart;
  return {
    count: checkpoints.filter((checkpoint) => checkpoint.resumed).length,
    newest: last?.resumed ?? false,
    runningMs: Number.isFinite(runningMs) ? Math.max(0, runningMs) : 0,
  };
}

/** LangGraph's channel for the values an interrupted task was resumed with. */
const RESUME_CHANNEL = "__resume__";

function interruptsOfValues(values: unknown): unknown[] {
  const interrupts = (values as Record<string, unknown> | undefined)?.[INTERRUPT];
  return Array.isArray(interrupts) ? interrupts : [];
}

/** A child has answered: its last message is the model's (or its rounds ran out). */
function isFinished(values: unknown): boolean {
  if ((values as { max_rounds_reached?: unknown } | undefined)?.max_rounds_reached === true) {
    return true;
  }
  return messagesOf(values).at(-1)?.getType() === "ai";
}

function outcomeOf(values: unknown): ChildOutcome {
  const maxRoundsReached = (values as { max_rounds_reached?: unknown } | undefined)
    ?.max_rounds_reached;
  return { messages: messagesOf(values), maxRoundsReached: maxRoundsReached === true };
}
