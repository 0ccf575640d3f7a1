/**
 * The response types `@langchain/langgraph-sdk` declares (its `dist/schema.d.ts`), written as zod
 * schemas so a test can check an answer of ours against them at run time.
 *
 * Each schema is at least as strict as its SDK type, and the compile-time checks at the bottom
 * make `npm run typecheck` fail when one is looser (a required field missing, a type too wide):
 * whatever parses here is a value of the SDK's type. Objects are loose (extra fields pass), as
 * TypeScript's structural types allow; our own additions (`subagent_runs`, …) ride along.
 */

import type {
  Assistant,
  Checkpoint,
  Config,
  Interrupt,
  Metadata,
  Run,
  Thread,
  ThreadState,
  ThreadTask,
} from "@langchain/langgraph-sdk";
import { z } from "zod";

const record = z.record(z.string(), z.unknown());

/**
 * `Metadata`: an object with a few typed well-known keys, or null. (The SDK's `Optional<T>` fields
 * are required keys that may hold null or undefined; these schemas want them present.)
 */
export const metadataShape = z
  .looseObject({
    source: z.string().optional(),
    step: z.number().optional(),
    writes: record.nullable().optional(),
    parents: z.record(z.string(), z.string()).optional(),
  })
  .nullable();

/** `Config`. */
export const configShape = z.looseObject({
  tags: z.array(z.string()).optional(),
  recursion_limit: z.number().optional(),
  configurable: z
    .looseObject({
      thread_id: z.string().nullable().optional(),
      checkpoint_id: z.string().nullable().optional(),
    })
    .optional(),
});

/** `DefaultValues`: an object, or a list of objects. */
export const valuesShape = z.union([record, z.array(record)]);

/** `Checkpoint`: never null where the SDK expects one (`ThreadState.checkpoint`). */
export const checkpointShape = z.looseObject({
  thread_id: z.string(),
  checkpoint_ns: z.string(),
  checkpoint_id: z.string().nullable(),
  checkpoint_map: record.nullable(),
});

/** `Interrupt`. */
export const interruptShape = z.looseObject({
  id: z.string().optional(),
  value: z.unknown().optional(),
});

/** `ThreadTask` (ours never nest a state: subagents run on threads of their own). */
export const threadTaskShape = z.looseObject({
  id: z.string(),
  name: z.string(),
  result: z.unknown().optional(),
  error: z.string().nullable(),
  interrupts: z.array(interruptShape),
  checkpoint: checkpointShape.nullable(),
  state: z.null(),
});

/** `ThreadState`. */
export const threadStateShape = z.looseObject({
  values: valuesShape,
  next: z.array(z.string()),
  checkpoint: checkpointShape,
  metadata: metadataShape,
  created_at: z.string().nullable(),
  parent_checkpoint: checkpointShape.nullable(),
  tasks: z.array(threadTaskShape),
});

/** `Thread`. */
export const threadShape = z.looseObject({
  thread_id: z.string(),
  created_at: z.string(),
  updated_at: z.string(),
  state_updated_at: z.string(),
  metadata: metadataShape,
  status: z.enum(["idle", "busy", "interrupted", "error"]),
  values: valuesShape,
  interrupts: z.record(z.string(), z.array(interruptShape)),
  config: configShape.optional(),
  error: z.union([z.string(), record]).nullable().optional(),
  extracted: record.optional(),
});

/** `Run`. */
export const runShape = z.looseObject({
  run_id: z.string(),
  thread_id: z.string(),
  assistant_id: z.string(),
  created_at: z.string(),
  updated_at: z.string(),
  status: z.enum(["pending", "running", "error", "success", "timeout", "interrupted"]),
  metadata: metadataShape,
  multitask_strategy: z.enum(["reject", "interrupt", "rollback", "enqueue"]).nullable(),
  cancel_reason: z.string().nullable().optional(),
});

/** `Assistant`. */
export const assistantShape = z.looseObject({
  assistant_id: z.string(),
  graph_id: z.string(),
  config: configShape,
  context: z.unknown(),
  created_at: z.string(),
  updated_at: z.string(),
  metadata: metadataShape,
  version: z.number(),
  name: z.string(),
  description: z.string().optional(),
});

/** What `threads.updateState` declares: `Pick<Config, "configurable">`. */
export const updateStateShape = z.looseObject({ configurable: configShape.shape.configurable });

/** One event of `runs.stream` / `runs.joinStream`. */
export const streamEventShape = z.looseObject({ event: z.string(), data: z.unknown() });

// Compile-time: every schema's output is a value of the SDK's type.
type Fits<Schema extends z.ZodType, Sdk> = z.output<Schema> extends Sdk ? true : never;
const fits = <T extends true>(value: T) => value;
fits<Fits<typeof metadataShape, Metadata>>(true);
fits<Fits<typeof configShape, Config>>(true);
fits<Fits<typeof checkpointShape, Checkpoint>>(true);
fits<Fits<typeof interruptShape, Interrupt>>(true);
fits<Fits<typeof threadTaskShape, ThreadTask>>(true);
fits<Fits<typeof threadStateShape, ThreadState>>(true);
fits<Fits<typeof threadShape, Thread>>(true);
fits<Fits<typeof runShape, Run>>(true);
fits<Fits<typeof assistantShape, Assistant>>(true);
fits<Fits<typeof updateStateShape, Pick<Config, "configurable">>>(true);
