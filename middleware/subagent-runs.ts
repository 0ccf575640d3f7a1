import { StateSchema } from "@langchain/langgraph";
import { z } from "zod";
import { type ChannelStorage, listValue } from "../checkpoints/channel-storage.js";
import { upsertById } from "../util/upsert-by-id.js";
import {
  type ApprovalRequest,
  isApprovalRequest,
  type PendingApproval,
} from "./approval-request.js";

/**
 * How a `task` call ended, or `waiting`: its child is paused on a request for approval (such a
 * record is never written to the state: it is read from the pending interrupt, see
 * {@link waitingRuns}).
 */
export const subagentRunStatus = z.enum(["completed", "failed", "cancelled", "timeout", "waiting"]);
export type SubagentRunStatus = z.infer<typeof subagentRunStatus>;

/**
 * An approval request, checked as {@link isApprovalRequest} does. A plain object schema, not
 * `z.custom`: LangGraph servers describe the state with zod's JSON Schema conversion, which
 * cannot represent a custom type and would drop `subagent_runs` from the schema Studio shows
 * (`test/studio/studio-no-config.int.test.ts`).
 */
const approvalRequestSchema = z.looseObject({
  actionRequests: z.array(z.unknown()),
  reviewConfigs: z.array(z.unknown()),
}) as unknown as z.ZodType<ApprovalRequest>;

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
  /** With status `waiting`: the parent's pending interrupt that answers the child's request. */
  approval: z.object({ id: z.string(), value: approvalRequestSchema }).optional(),
});
export type SubagentRun = z.infer<typeof subagentRunSchema>;

/**
 * The records of the `task` calls paused by `pending` (the parent's pending interrupts that
 * carry a child's request): status `waiting`, not finished (`finished_at` ""), with the request.
 */
export function waitingRuns(pending: readonly PendingApproval[]): SubagentRun[] {
  return pending.flatMap(({ id, value }) => {
    const subagent = value.subagent;
    if (!subagent) return [];
    return [
      {
        id: subagent.tool_call_id,
        subagent_type: subagent.subagent_type,
        child_thread_id: subagent.child_thread_id,
        description: subagent.description,
        status: "waiting" as const,
        rounds: 0,
        max_rounds_reached: false,
        started_at: subagent.started_at,
        finished_at: "",
        result_preview: "",
        error: null,
        artifacts: [],
        usage: { input_tokens: 0, output_tokens: 0, total_tokens: 0 },
        approval: { id, value },
      },
    ];
  });
}

/**
 * The records a run that began at `since` (ISO) made or moved on: the calls it started, those it
 * finished (a child paused in an earlier run and resumed in this one), and those waiting.
 */
export function runRecordsSince(records: readonly SubagentRun[], since: string): SubagentRun[] {
  return records.filter(
    (run) => run.status === "waiting" || run.started_at >= since || run.finished_at >= since,
  );
}

/** Replaces records with the same id in place and appends new ones, keeping call order. */
export function upsertSubagentRuns(
  current: readonly SubagentRun[],
  updates: readonly SubagentRun[] | undefined,
): SubagentRun[] {
  return upsertById(current, updates);
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
 * instead (`graphs/build-agent-graph.ts`): langchain 1.5 reads a middleware's state fields as reducer
 * values or zod schemas only, and fails on a delta one.
 */
export function subagentRunsState(storage: ChannelStorage) {
  return storage.kind === "full"
    ? new StateSchema({ subagent_runs: subagentRunsField(storage) })
    : undefined;
}
