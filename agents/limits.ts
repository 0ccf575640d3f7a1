import { readFileSync, type Stats, statSync } from "node:fs";
import { z } from "zod";
import { messageOf } from "../errors.js";
import type { RuntimeContext } from "./schema.js";
import { parseOrThrow } from "./validation.js";

/** Execution limits of an agent, after defaults are applied. */
export interface Limits {
  /** Model calls a subagent may make (its own config governs it). */
  max_rounds: number;
  /** A subagent's answer is cut to this many characters (the caller's config governs it). */
  max_result_chars: number;
  /** Task calls one model turn may make (the caller's config governs it). */
  max_parallel_subagents: number;
  /** Per-subagent time limit in ms; undefined = none (the caller's config governs it). */
  subagent_timeout_ms: number | undefined;
  /** Background tasks active at once per parent thread (the caller's config governs it). */
  max_async_tasks: number;
  /** A background task's running time limit in ms; undefined = none (the caller's config). */
  async_task_timeout_ms: number | undefined;
}

/** Process-wide settings: default limits, whether delegation is on at all, the model timeout. */
export interface ProcessSettings extends Limits {
  /** `false` removes the `task` tool from every agent. */
  enabled: boolean;
  /**
   * How long one model call (main agents and subagents alike) may take, its retries included,
   * before it is aborted and fails with `MODEL_TIMEOUT`. Default 120 000 ms.
   */
  model_timeout_ms: number;
}

/** The design's built-in defaults. */
export const BUILTIN_LIMITS: Readonly<ProcessSettings> = Object.freeze({
  max_rounds: 10,
  max_result_chars: 8000,
  max_parallel_subagents: 3,
  subagent_timeout_ms: undefined,
  max_async_tasks: 3,
  async_task_timeout_ms: undefined,
  enabled: true,
  model_timeout_ms: 120_000,
});

/** Environment variables that override {@link BUILTIN_LIMITS} process-wide. */
export const LIMIT_ENV_VARS: Readonly<Record<keyof ProcessSettings, string>> = Object.freeze({
  max_rounds: "SUBAGENT_MAX_ROUNDS",
  max_result_chars: "SUBAGENT_MAX_RESULT_CHARS",
  max_parallel_subagents: "SUBAGENT_MAX_PARALLEL",
  subagent_timeout_ms: "SUBAGENT_TIMEOUT_MS",
  max_async_tasks: "SUBAGENT_MAX_ASYNC_TASKS",
  async_task_timeout_ms: "SUBAGENT_ASYNC_TASK_TIMEOUT_MS",
  enabled: "SUBAGENT_ENABLED",
  model_timeout_ms: "SUBAGENT_GRAPH_MODEL_TIMEOUT_MS",
});

const positive = z.number().int().positive();

/** A settings file: `{ "subagent": { max_rounds?, …, enabled? } }`, unknown keys refused. */
const settingsFileSchema = z.strictObject({
  subagent: z
    .strictObject({
      max_rounds: positive.optional(),
      max_result_chars: positive.optional(),
      max_parallel_subagents: positive.optional(),
      subagent_timeout_ms: positive.optional(),
      max_async_tasks: positive.optional(),
      async_task_timeout_ms: positive.optional(),
      enabled: z.boolean().optional(),
    })
    .optional(),
});

/**
 * Process-wide settings: built-ins, overridden by the environment, then by `overrides` (a
 * settings file, the runtime's `limits` option). Called on every dispatch, so a change applies
 * to the next `task` call without a restart. An unusable environment value is ignored with a
 * warning naming the variable.
 */
export function processLimits(
  env: NodeJS.ProcessEnv,
  overrides: Partial<ProcessSettings> = {},
  warn: (message: string) => void = console.warn,
): ProcessSettings {
  const settings: ProcessSettings = { ...BUILTIN_LIMITS };
  for (const key of Object.keys(LIMIT_ENV_VARS) as (keyof ProcessSettings)[]) {
    const name = LIMIT_ENV_VARS[key];
    const raw = env[name]?.trim();
    if (!raw) continue;
    if (key === "enabled") {
      if (/^(true|1|yes)$/i.test(raw)) settings.enabled = true;
      else if (/^(false|0|no)$/i.test(raw)) settings.enabled = false;
      else warn(`ignoring ${name}=${JSON.stringify(raw)}: use true or false`);
      continue;
    }
    const value = Number(raw);
    if (Number.isInteger(value) && value >= 1) settings[key] = value;
    else warn(`ignoring ${name}=${JSON.stringify(raw)}: use a whole number of at least 1`);
  }
  return { ...settings, ...definedOnly(overrides) };
}

function definedOnly(overrides: Partial<ProcessSettings>): Partial<ProcessSettings> {
  return Object.fromEntries(Object.entries(overrides).filter(([, value]) => value !== undefined));
}

/**
 * Reads the `subagent` section of a JSON settings file, again whenever the file changes (its
 * modification time and size are checked on each call, the file is parsed only when they
 * change). A missing file means no overrides; an invalid one is reported once per change and
 * ignored, so a bad edit never stops a running service.
 */
export function settingsFileReader(
  file: string,
  warn: (message: string) => void,
): () => Partial<ProcessSettings> {
  let stamp = "";
  let cached: Partial<ProcessSettings> = {};
  return () => {
    // Called on every dispatch: a missing file (the usual case) must not cost an exception.
    const stats = statOrUndefined(file);
    if (stats === undefined) {
      stamp = "";
      cached = {};
      return cached;
    }
    const current = `${stats.mtimeMs}:${stats.size}`;
    if (current === stamp) return cached;
    stamp = current;
    try {
      const parsed = parseOrThrow(settingsFileSchema, JSON.parse(readFileSync(file, "utf8")));
      cached = parsed.subagent ?? {};
    } catch (error) {
      cached = {};
      warn(`ignoring settings file ${file}: ${messageOf(error)}`);
    }
    return cached;
  };
}

/** The file's stats; `undefined` when it is missing or cannot be read. */
function statOrUndefined(file: string): Stats | undefined {
  try {
    return statSync(file, { throwIfNoEntry: false });
  } catch {
    return undefined;
  }
}

/** An agent's limits: its own config where set, else the process-wide ones. */
export function agentLimits(context: RuntimeContext, fallback: Limits): Limits {
  return {
    max_rounds: context.max_rounds ?? fallback.max_rounds,
    max_result_chars: context.max_result_chars ?? fallback.max_result_chars,
    max_parallel_subagents: context.max_parallel_subagents ?? fallback.max_parallel_subagents,
    subagent_timeout_ms: context.subagent_timeout_ms ?? fallback.subagent_timeout_ms,
    max_async_tasks: context.max_async_tasks ?? fallback.max_async_tasks,
    async_task_timeout_ms: context.async_task_timeout_ms ?? fallback.async_task_timeout_ms,
  };
}
