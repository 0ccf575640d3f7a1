import { z } from "zod";
import { BACKEND_IDS, runtimeContextSchema, SHARE_MODES } from "../agents/schema.js";
import { RECORDED_RUN_STATUSES } from "../contract.js";
import { ERROR_CATEGORIES } from "../errors.js";

/**
 * Response shapes, validated on the way out (the zod serializer compiler) and published in the
 * OpenAPI document. Request shapes live beside their routes.
 */

/** Every error: `{ error: { code, category, message, field?, details? } }` (`ErrorBody`). */
export const errorSchema = z.object({
  error: z.object({
    code: z.string().describe("stable code, e.g. NOT_FOUND, VALIDATION_FAILED, THREAD_BUSY"),
    category: z
      .enum(ERROR_CATEGORIES)
      .describe(
        "whose fault: input (the request is wrong), conflict (the state now refuses it), upstream (a service we depend on failed; try later), ours (see the server log)",
      ),
    message: z.string().describe("names the thing, the bad value and the fix"),
    field: z.string().optional(),
    details: z
      .object({
        thread_id: z.string().optional(),
        run_id: z.string().optional(),
        checkpoint_id: z.string().optional(),
        agent: z.string().optional(),
        task_id: z.string().optional(),
        interrupt_ids: z.array(z.string()).optional(),
        current_version: z.number().optional(),
      })
      .optional()
      .describe("the ids the error is about, when it names some"),
  }),
});

/** The error responses every authenticated route may give. */
export const errorResponses = {
  400: errorSchema,
  401: errorSchema,
  403: errorSchema,
  404: errorSchema,
  409: errorSchema,
  413: errorSchema,
  422: errorSchema,
  500: errorSchema,
} as const;

export const agentSchema = z.object({
  id: z.string(),
  slug: z.string(),
  name: z.string(),
  description: z.string(),
  backend_id: z.enum(BACKEND_IDS),
  is_subagent: z.boolean(),
  is_default: z.boolean(),
  owner_uid: z.string(),
  share_config: z.object({
    mode: z.enum(SHARE_MODES),
    uids: z.array(z.string()),
    editors: z.array(z.string()),
  }),
  config_json: z.object({ context: runtimeContextSchema }),
  version: z.number().int(),
  created_at: z.string(),
  updated_at: z.string(),
});

export const assistantSchema = z.object({
  assistant_id: z.string(),
  graph_id: z.string(),
  name: z.string(),
  description: z.string().optional().describe("absent when the agent has none"),
  config: z.record(z.string(), z.unknown()),
  context: z.record(z.string(), z.unknown()),
  metadata: z.record(z.string(), z.unknown()),
  version: z.number().int(),
  created_at: z.string(),
  updated_at: z.string(),
});

const valuesSchema = z.record(z.string(), z.unknown());

export const threadSchema = z.object({
  thread_id: z.string(),
  created_at: z.string(),
  updated_at: z.string(),
  state_updated_at: z
    .string()
    .describe("when its state last changed: its latest checkpoint's time (created_at before any)"),
  metadata: z.record(z.string(), z.unknown()),
  status: z.enum(["idle", "busy", "interrupted", "error"]),
  config: z.record(z.string(), z.unknown()),
  values: valuesSchema,
  interrupts: z.record(z.string(), z.unknown()),
});

const checkpointSchema = z.object({
  thread_id: z.string(),
  checkpoint_ns: z.string(),
  checkpoint_id: z.string().nullable().describe("null for a thread with no checkpoint yet"),
  checkpoint_map: z.null(),
});

export const threadStateSchema = z.object({
  values: valuesSchema,
  next: z.array(z.string()),
  tasks: z.array(z.record(z.string(), z.unknown())),
  metadata: z.record(z.string(), z.unknown()),
  created_at: z.string().nullable(),
  checkpoint: checkpointSchema,
  parent_checkpoint: checkpointSchema.nullable(),
  interrupts: z
    .array(z.unknown())
    .optional()
    .describe("the interrupts of its tasks; only when select names it"),
});

export const runSchema = z.object({
  run_id: z.string(),
  thread_id: z.string(),
  assistant_id: z.string(),
  status: z.enum(RECORDED_RUN_STATUSES),
  metadata: z.record(z.string(), z.unknown()),
  multitask_strategy: z.enum(["reject", "enqueue", "interrupt", "rollback"]),
  created_at: z.string(),
  updated_at: z.string(),
  status_reason: z
    .string()
    .nullable()
    .describe(
      "why the run ended so when it did not end by itself (its process stopped), or why it was queued again; null otherwise",
    ),
  attempt: z
    .number()
    .int()
    .describe(
      "how many times a worker has started it: 2 or more after its worker died and another resumed it (fleet on PostgreSQL)",
    ),
  subagent_runs: z
    .array(z.record(z.string(), z.unknown()))
    .describe(
      "the records of the task calls this run made, whatever its end (filled when it ends)",
    ),
});

export const fileEntrySchema = z.object({
  path: z.string().describe("virtual path, e.g. /home/gem/user-data/outputs/report.md"),
  size: z.number().int(),
  modifiedAt: z.string(),
});

export const childThreadSchema = z.object({
  thread_id: z.string(),
  parent_thread_id: z.string(),
  subagent_type: z.string(),
  run: z
    .record(z.string(), z.unknown())
    .nullable()
    .describe("the parent's record of the task call; null while the child still runs"),
  values: valuesSchema,
});
