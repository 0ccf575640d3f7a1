import { StateSchema } from "@langchain/langgraph";
import { z } from "zod";
import { type ChannelStorage, listValue } from "../checkpoints/channel-storage.js";

/** How a `task` call ended. */
export const subagentRunStatus = z.enum(["completed", "failed", "cancelled", "timeout"]);
export type SubagentRunStatus = z.infer<typeof subagentRunStatus>;

/** Token usage summed over a child's model calls (zero when the model reports none). */
export const subagentUsageSchema = z.object({
  input_tokens: z.number().int().nonnegative(),
  output_tokens: z.number().int().nonnegative(),
  total_tokens: z.number().int().nonnegative(),
});
export type SubagentUsage = z.infer<typeof subagentUsageSchema>;

/**
 * The structured record of one `task` call, kept in the parent's `subagent_runs` state (upserted
 * by `id` = the tool call id) and attached to the task ToolMessage as its artifact.
 */
export const subagentRunSchema = z.object({
  id: z.string(),
  subagent_type: z.string(),
  /** The child's checkpoint thread; "" when the call ended before its child ran. */
  child_thread_id: z.string(),
  description: z.string(),
  status: subagentRunStatus,
  rounds: z.number().int().nonnegative(),
  max_rounds_reached: z.boolean(),
  started_at: z.string(),
  finished_at: z.string(),
  result_preview: z.string(),
  error: z.string().nullable(),
  artifacts: z.array(z.string()),
  usage: subagentUsageSchema,
});
export type SubagentRun = z.infer<typeof subagentRunSchema>;

/** Replaces records with the same id in place and appends new ones, keeping call order. */
export function upsertSubagentRuns(
  current: readonly SubagentRun[],
  updates: readonly SubagentRun[] | undefined,
): SubagentRun[] {
  const merged = [...current];
  for (const record of updates ?? []) {
    const index = merged.findIndex((existing) => existing.id === record.id);
    if (index >= 0) merged[index] = record;
    else merged.push(record);
  }
  return merged;
}

/**
 * The `subagent_runs` channel under `storage` (see `checkpoints/channel-storage.ts`). The
 * reducer matters: several task calls of one model turn each write a record in the same step,
 * and a plain channel would reject the second write.
 */
export function subagentRunsField(storage: ChannelStorage) {
  return listValue(
    storage,
    z.array(subagentRunSchema).default(() => []),
    z.array(subagentRunSchema).optional(),
    upsertSubagentRuns,
  );
}

/**
 * The task middleware's own state with full storage. A delta channel is declared on the agent
 * instead (`graphs/agent-graph.ts`): langchain 1.5 reads a middleware's state fields as reducer
 * values or zod schemas only, and fails on a delta one.
 */
export function subagentRunsState(storage: ChannelStorage) {
  return storage.kind === "full"
    ? new StateSchema({ subagent_runs: subagentRunsField(storage) })
    : undefined;
}
