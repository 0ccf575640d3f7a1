import type { BaseMessage } from "@langchain/core/messages";
import { messagesDeltaReducer } from "@langchain/langgraph";
import type { BaseCheckpointSaver, CheckpointTuple } from "@langchain/langgraph-checkpoint";
import { foldWrites } from "../checkpoints/channel-storage.js";
import { type ChannelReducers, readChannelValues } from "../checkpoints/delta-read.js";
import {
  runRecordsSince,
  type SubagentRun,
  subagentRunSchema,
  upsertSubagentRuns,
} from "../middleware/subagent-runs.js";

/** One checkpoint of a thread, newest first in {@link readHistory}. */
export interface ThreadCheckpoint {
  checkpointId: string;
  parentCheckpointId: string | undefined;
  /** ISO time the checkpoint was written. */
  createdAt: string;
  /** LangGraph's step counter (-1 for the input checkpoint). */
  step: number | undefined;
  /** "input", "loop", "update" or "fork", as LangGraph records it. */
  source: string | undefined;
  messages: BaseMessage[];
  subagentRuns: SubagentRun[];
}

/** The latest state of a thread, read straight from the saver (no graph needed). */
export interface ThreadState {
  checkpointId: string | undefined;
  messages: BaseMessage[];
  subagentRuns: SubagentRun[];
}

function rootConfig(threadId: string) {
  return { configurable: { thread_id: threadId, checkpoint_ns: "" } };
}

/** The latest checkpoint's messages and subagent runs; empty when the thread has none. */
export async function readThreadState(
  saver: BaseCheckpointSaver,
  threadId: string,
): Promise<ThreadState> {
  const tuple = await saver.getTuple(rootConfig(threadId));
  if (!tuple) return { checkpointId: undefined, messages: [], subagentRuns: [] };
  return { checkpointId: tuple.checkpoint.id, ...(await stateOf(saver, tuple)) };
}

/**
 * The subagent records a run made, read from the thread's newest checkpoint: the state's records
 * upserted with those still in the pending writes of a step that never finished (children that
 * completed before their run crashed or failed in the same step), keeping those started at or
 * after `since` (the run's start: older records belong to earlier runs).
 */
export async function readRunSubagentRuns(
  saver: BaseCheckpointSaver,
  threadId: string,
  since: string,
): Promise<SubagentRun[]> {
  const tuple = await saver.getTuple(rootConfig(threadId));
  if (!tuple) return [];
  // The records only: rebuilding the messages too would cost a read of the whole conversation.
  const { subagent_runs: stored } = await readChannelValues(saver, tuple, {
    subagent_runs: AGENT_STATE_REDUCERS.subagent_runs as ChannelReducers[string],
  });
  let records = Array.isArray(stored) ? wellFormed(stored) : [];
  for (const [, channel, value] of tuple.pendingWrites ?? []) {
    if (channel === "subagent_runs" && Array.isArray(value)) {
      records = upsertSubagentRuns(records, wellFormed(value));
    }
  }
  return runRecordsSince(records, since);
}

/** When the thread's first checkpoint was written (its start), or undefined without one. */
export async function firstCheckpointTime(
  saver: BaseCheckpointSaver,
  threadId: string,
): Promise<string | undefined> {
  let oldest: string | undefined;
  // Newest first: the last one listed is the first written. No state is rebuilt for this.
  for await (const tuple of saver.list(rootConfig(threadId))) oldest = tuple.checkpoint.ts;
  return oldest;
}

/** Every checkpoint of the thread's root namespace, newest first. */
export async function readHistory(
  saver: BaseCheckpointSaver,
  threadId: string,
  limit?: number,
): Promise<ThreadCheckpoint[]> {
  const checkpoints: ThreadCheckpoint[] = [];
  for await (const tuple of saver.list(rootConfig(threadId), limit ? { limit } : undefined)) {
    checkpoints.push({
      checkpointId: tuple.checkpoint.id,
      parentCheckpointId: tuple.parentConfig?.configurable?.checkpoint_id as string | undefined,
      createdAt: tuple.checkpoint.ts,
      step: tuple.metadata?.step,
      source: tuple.metadata?.source,
      ...(await stateOf(saver, tuple)),
    });
  }
  return checkpoints;
}

/**
 * The channels of an agent's state the runtime reads, with the batch reducers that rebuild them
 * from delta writes (the same folds the graphs use, see `checkpoints/channel-storage.ts`).
 */
export const AGENT_STATE_REDUCERS: ChannelReducers = {
  messages: messagesDeltaReducer as ChannelReducers[string],
  // Checkpoints are data from disk: the fold sees well-formed records only.
  subagent_runs: (state, writes) =>
    foldWrites(upsertSubagentRuns)(
      Array.isArray(state) ? wellFormed(state) : [],
      writes.map((update) => (Array.isArray(update) ? wellFormed(update) : [])),
    ),
};

/** A checkpoint's messages and subagent records, whichever storage wrote them. */
async function stateOf(
  saver: BaseCheckpointSaver,
  tuple: CheckpointTuple,
): Promise<{ messages: BaseMessage[]; subagentRuns: SubagentRun[] }> {
  const { messages, subagent_runs: runs } = await readChannelValues(
    saver,
    tuple,
    AGENT_STATE_REDUCERS,
  );
  return {
    messages: Array.isArray(messages) ? (messages as BaseMessage[]) : [],
    subagentRuns: Array.isArray(runs) ? wellFormed(runs) : [],
  };
}

/**
 * The messages and subagent records of a run's final values (what `invoke` returns, or the last
 * `values` chunk of the root graph), shaped as {@link readThreadState} reads them from the
 * thread; undefined when the values lack either channel (then read the thread).
 */
export function stateOfValues(
  values: unknown,
): { messages: BaseMessage[]; subagentRuns: SubagentRun[] } | undefined {
  if (typeof values !== "object" || values === null) return undefined;
  const { messages, subagent_runs: runs } = values as Record<string, unknown>;
  if (!Array.isArray(messages) || !Array.isArray(runs)) return undefined;
  // The graph's own `messages` channel, live: message objects its reducer made (unlike a
  // checkpoint, not data from disk, so only the records are filtered).
  return { messages: messages as BaseMessage[], subagentRuns: wellFormed(runs) };
}

/** Checkpoints are data from disk: keep only well-formed records. */
export function wellFormed(runs: unknown[]): SubagentRun[] {
  return runs.flatMap((run) => {
    const parsed = subagentRunSchema.safeParse(run);
    return parsed.success ? [parsed.data] : [];
  });
}
