/**
 * The run context: the LangGraph `context` a run is invoked with (not persisted), written in two
 * places and read in several, so its one contract lives here.
 *
 * Writers: the runtime starts a main agent's run with a {@link MainRunContext}
 * (`runs/run-lifecycle.ts`; a LangGraph server with its own context handling gives the hosted
 * one of `backends/context.ts`, which has no `thread_id`), and the task tool starts a child with
 * a {@link SubagentRunContext} (`middleware/dispatch.ts`). Both schemas are also the graphs'
 * `contextSchema`, so LangGraph checks a run's context against them before the first step.
 *
 * Readers (the task tool, the file tools, the skills prompt, a subagent's bounds) all go through
 * {@link readRunContext}. The policy for a context that is missing or malformed is one: it is an
 * error, {@link SubagentGraphError} `VALIDATION_FAILED` naming the field and the fix, and no
 * reader falls back to anything else. The only defaults are the contract's own: `thread_id` is
 * the config's `configurable.thread_id` when the context has none (hosts such as the LangGraph
 * dev server set only that), `file_thread_id` and `skills_thread_id` are the thread. A reader
 * that must not fail its run (a tool answers every call) turns the error into its answer.
 *
 * A leaf: imports `zod` and `./errors.js`, nothing else of ours.
 */

import { z } from "zod";
import { ErrorCode, SubagentGraphError } from "./errors.js";

const LIMIT_FIX = "use a positive whole number, or leave it out for the agent's own setting";

/** A limit a run's context may set over the agents' own. */
function limitField(description: string) {
  return z
    .number({ error: LIMIT_FIX })
    .int({ error: LIMIT_FIX })
    .positive({ error: LIMIT_FIX })
    .optional()
    .describe(description);
}

/**
 * The limits a main run's context may set over the agents' own (and the process's): only trusted
 * callers can, the library's caller or Studio's panel, since the HTTP server never passes a
 * client's context through.
 */
export const limitFields = {
  max_rounds: limitField(
    "model calls a subagent may make per task; unset: the subagent's own max_rounds, else the server's (built in: 10)",
  ),
  max_result_chars: limitField(
    "characters of a subagent's answer passed back to the agent; unset: the agent's own, else the server's (built in: 8000)",
  ),
  max_parallel_subagents: limitField(
    "task calls one model turn may make; unset: the agent's own, else the server's (built in: 3)",
  ),
  subagent_timeout_ms: limitField(
    "time limit of one subagent task, in ms; unset: the agent's own, else the server's (built in: none)",
  ),
};

/** The limits a run's context sets, each unset one left to the agent and the process. */
export type LimitOverrides = z.output<z.ZodObject<typeof limitFields>>;

/** The names of {@link limitFields}. */
export const LIMIT_FIELD_NAMES = Object.keys(limitFields) as (keyof LimitOverrides)[];

/**
 * The fields a main run's context shares with Studio's configuration panel: which agent runs,
 * which of its subagents it may call, and the limits of this run. Described once here, so the
 * library's schema and the panel's (`backends/context.ts`) say the same.
 */
export const runChoiceFields = {
  /** Which of the user's chat agents a hosted graph runs (LangGraph Studio's panel). */
  agent: z
    .string({ error: "use the slug or id of one of the user's chat agents" })
    .min(1, { error: "use the slug or id of one of the user's chat agents" })
    .optional()
    .describe("slug or id of the chat agent to run; unset: the user's default agent"),
  /** Narrows the agent's subagent allow-list for this run (still only visible subagents). */
  subagents: z
    .array(z.string({ error: "use a list of subagent slugs" }), {
      error: "use a list of subagent slugs",
    })
    .optional()
    .describe(
      "subagent slugs this run may call, among the agent's own; unset: all of the agent's subagents",
    ),
  ...limitFields,
};

/**
 * The knowledge bases a run may search, as ids: its agent's `context.knowledge_bases` resolved
 * for the run's user when the run (or the task call) starts, so a knowledge base created or
 * shared later does not join a run under way. Unset (a host that makes its own context): the
 * knowledge tools resolve the agent's selection themselves.
 */
function knowledgeSnapshotField() {
  return z
    .array(z.string())
    .optional()
    .describe("knowledge bases this run may search (ids), fixed when it starts");
}

/**
 * The runtime context of a main agent's run. Set by the runtime from the authenticated caller;
 * `thread_id` defaults to the config's, `file_thread_id` and `skills_thread_id` to the thread.
 *
 * @example
 * const context = { uid: "alice", thread_id: "t1", is_subagent_runtime: false } satisfies MainRunContext;
 */
export const mainRunContextSchema = z.object({
  uid: z.string().min(1).describe("the acting user: only their agents and threads are reachable"),
  thread_id: z
    .string()
    .min(1)
    .optional()
    .describe("the run's thread (default: the config's thread_id, which hosts set)"),
  file_thread_id: z.string().min(1).optional(),
  skills_thread_id: z.string().min(1).optional(),
  is_subagent_runtime: z.literal(false).default(false),
  knowledge_base_ids: knowledgeSnapshotField(),
  ...runChoiceFields,
});
export type MainRunContext = z.output<typeof mainRunContextSchema>;

/**
 * The runtime context of a subagent's run, made by the task tool: the child's own checkpoint
 * thread and skills scope, the parent's file scope (uploads/outputs), and the bounds of this
 * call (read at dispatch, so one compiled subagent graph serves every call).
 */
export const subagentRunContextSchema = z.object({
  uid: z.string().min(1),
  thread_id: z.string().min(1),
  parent_thread_id: z.string().min(1),
  file_thread_id: z.string().min(1),
  skills_thread_id: z.string().min(1),
  is_subagent_runtime: z.literal(true),
  /** Tools the child may see and run for this call (its allowed set, maybe narrowed). */
  allowed_tools: z.array(z.string()),
  /** Model calls the child may make. */
  max_rounds: z.number().int().positive(),
  /** The task's description, for prompts rendered per call (the general-purpose subagent). */
  intent: z.string().optional(),
  knowledge_base_ids: knowledgeSnapshotField(),
});
export type SubagentRunContext = z.output<typeof subagentRunContextSchema>;

/** A run's context as {@link readRunContext} returns it: either kind, its thread resolved. */
export type RunContext = (MainRunContext & { thread_id: string }) | SubagentRunContext;

/**
 * Contexts {@link readRunContext} has accepted, with what it returned (frozen, as it is shared).
 * LangGraph hands every node, model-call and tool-call hook of a run the same context object (no
 * middleware of ours declares a `contextSchema`, which would make langchain parse a copy for
 * each of its hooks), so a run's context is checked once, not at each of its reads (bench/README.md,
 * "Scenario: dispatch"); a context is never changed once its run started.
 */
const checkedContexts = new WeakMap<object, RunContext>();

/** What {@link readRunContext} says in its errors. */
export interface ReadRunContextOptions {
  /** Who reads, as the plural subject of its errors ("file tools", "task calls"). */
  reader?: string;
}

const RUN_IT = "run the graph through createRuntime() or pass that context";

/**
 * The run's context, checked: a {@link SubagentRunContext} when it says `is_subagent_runtime:
 * true`, else a {@link MainRunContext}, its `thread_id` falling back to `configurable.thread_id`.
 *
 * @throws SubagentGraphError `VALIDATION_FAILED` when the context is missing or malformed; its
 *   `field` is `context`, or `context.<field>` for the field at fault, and the message names the
 *   field and the fix.
 */
export function readRunContext(
  context: unknown,
  configurable?: unknown,
  options: ReadRunContextOptions = {},
): RunContext {
  const reader = options.reader ?? "this run's middleware and tools";
  const identityMissing = (field: string, detail: string) =>
    new SubagentGraphError(
      ErrorCode.Validation,
      `${reader} need the run's context { uid, thread_id }, and this run's context has no uid or thread_id (${detail}): ${RUN_IT}`,
      { field },
    );
  if (!isRecord(context)) throw identityMissing("context", "it has none");
  if (context.uid === undefined) throw identityMissing("context.uid", "context.uid is missing");
  const threadId =
    context.thread_id ?? (isRecord(configurable) ? configurable.thread_id : undefined);
  if (threadId === undefined) {
    throw identityMissing(
      "context.thread_id",
      "neither context.thread_id nor configurable.thread_id is set",
    );
  }
  const known = checkedContexts.get(context);
  if (known !== undefined && known.thread_id === threadId) return known;
  const input = { ...context, thread_id: threadId };
  const schema =
    context.is_subagent_runtime === true ? subagentRunContextSchema : mainRunContextSchema;
  const result = schema.safeParse(input);
  if (result.success) {
    const checked = deepFreeze(result.data as RunContext);
    checkedContexts.set(context, checked);
    return checked;
  }
  const issue = result.error.issues[0];
  const path = issue?.path.map(String) ?? [];
  const field = ["context", ...path].join(".");
  const value = valueAt(input, path);
  const shown = value === undefined ? "is missing" : `${JSON.stringify(value)} is invalid`;
  const subagent = context.is_subagent_runtime === true;
  // The run-choice fields' messages are their fix already (as in Studio's panel).
  const reason =
    !subagent && path[0] !== undefined && path[0] in runChoiceFields
      ? `: ${issue?.message}`
      : ` (${issue?.message}): ${subagent ? SUBAGENT_FIX : MAIN_FIX}`;
  throw new SubagentGraphError(
    ErrorCode.Validation,
    `${reader} need a valid run context: ${field} ${shown}${reason}`,
    { field, cause: result.error },
  );
}

const MAIN_FIX = `see MainRunContext (ids are non-empty strings, is_subagent_runtime is false or left out), or ${RUN_IT}`;
const SUBAGENT_FIX =
  "a subagent's context is the task tool's to make (see SubagentRunContext): run subagents through a main agent's task tool";

/**
 * The run's context when it must be a subagent's (the bounds the task tool sets).
 *
 * @throws SubagentGraphError `VALIDATION_FAILED` as {@link readRunContext}, and when the context
 *   is a main run's (field `context.is_subagent_runtime`).
 */
export function readSubagentRunContext(
  context: unknown,
  options: ReadRunContextOptions = {},
): SubagentRunContext {
  const run = readRunContext(context, undefined, options);
  if (run.is_subagent_runtime) return run;
  throw new SubagentGraphError(
    ErrorCode.Validation,
    `${options.reader ?? "a subagent's middleware"} need a subagent's run context (is_subagent_runtime: true, allowed_tools, max_rounds), and this is a main run's: a subagent runs only through a main agent's task tool, which sets it`,
    { field: "context.is_subagent_runtime" },
  );
}

/** Where a run's files live (see `sandbox/layout.ts`). */
export interface RunFileScope {
  /** The acting user: their workspace. */
  uid: string;
  /** The run's checkpoint thread. */
  threadId: string;
  /** Whose uploads and outputs the run sees: the thread's own, or a child's parent's. */
  fileThreadId: string;
  /** Whose skills folder the run sees: the thread's own (a child's never shows to its parent). */
  skillsThreadId: string;
}

/** The file scope of a run: `file_thread_id` and `skills_thread_id` default to the thread. */
export function fileScopeOf(context: RunContext): RunFileScope {
  return {
    uid: context.uid,
    threadId: context.thread_id,
    fileThreadId: context.file_thread_id ?? context.thread_id,
    skillsThreadId: context.skills_thread_id ?? context.thread_id,
  };
}

/**
 * The limits a main run's context sets over the agents' own. A subagent's context sets none: its
 * `max_rounds` is its own bound for this call, not an override for anyone's children.
 */
export function limitOverridesOf(context: RunContext): LimitOverrides {
  if (context.is_subagent_runtime) return {};
  const overrides: LimitOverrides = {};
  for (const name of LIMIT_FIELD_NAMES) {
    const value = context[name];
    if (value !== undefined) overrides[name] = value;
  }
  return overrides;
}

function valueAt(record: Record<string, unknown>, path: readonly string[]): unknown {
  let value: unknown = record;
  for (const key of path)
    value =
      isRecord(value) || Array.isArray(value) ? (value as Record<string, unknown>)[key] : undefined;
  return value;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** `value` and everything in it, frozen: a checked context is shared by every later read. */
function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value)) deepFreeze(inner);
  }
  return value;
}
