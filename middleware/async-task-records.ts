/**
 * The record of one background task (README "Background subagents"): what `check_async_task`
 * and `list_async_tasks` return, what the parent's `async_tasks` state holds (upserted by id),
 * what `runtime.asyncTasks`, the HTTP API and the console read. The browser console imports the
 * types (erased by its bundler).
 */

import { z } from "zod";
import { ASYNC_TASK_STATUSES } from "../contract.js";
import { upsertById } from "../util/upsert-by-id.js";
import type { ApprovalRequest } from "./approval-request.js";

/** An approval request, loosely checked (see `subagent-runs.ts` for why not `z.custom`). */
const approvalRequestSchema = z.looseObject({
  actionRequests: z.array(z.unknown()),
  reviewConfigs: z.array(z.unknown()),
}) as unknown as z.ZodType<ApprovalRequest>;

/** One background task as every door shows it. */
export const asyncTaskSchema = z.object({
  /** The task id the tools take (`task_id`). */
  id: z.string(),
  /** The subagent's slug. */
  subagent_type: z.string(),
  /** Its own checkpoint thread, `<parent>_bg_<slug>_<hex>`, readable as a child of the parent. */
  child_thread_id: z.string(),
  /** The task it was started with. */
  description: z.string(),
  status: z.enum(ASYNC_TASK_STATUSES),
  /** ISO-8601 UTC. */
  created_at: z.string(),
  updated_at: z.string(),
  /** When it ended; "" while it has not. */
  finished_at: z.string(),
  /** The start of its final answer (200 characters); "" until it has one. */
  result_preview: z.string(),
  /** Why it failed, was cancelled or timed out; null otherwise. */
  error: z.string().nullable(),
  /** Follow-up messages sent with `update_async_task`. */
  updates: z.number().int().nonnegative(),
  /**
   * With status `waiting`: the child's pending request and the id that answers it (on the
   * parent thread: `runtime.asyncTasks.answer`, `POST /threads/:id/async_tasks/:task_id/answer`).
   */
  approval: z.object({ id: z.string(), value: approvalRequestSchema }).nullable(),
});
export type AsyncTask = z.infer<typeof asyncTaskSchema>;

/** Replaces records with the same id in place and appends new ones, keeping start order. */
export function upsertAsyncTasks(
  current: readonly AsyncTask[],
  updates: readonly AsyncTask[] | undefined,
): AsyncTask[] {
  return upsertById(current, updates);
}
