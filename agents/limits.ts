import type { RuntimeContext } from "./schema.js";

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
}

/** The design's built-in defaults. */
export const BUILTIN_LIMITS: Readonly<Limits> = Object.freeze({
  max_rounds: 10,
  max_result_chars: 8000,
  max_parallel_subagents: 3,
  subagent_timeout_ms: undefined,
});

/** Environment variables that override {@link BUILTIN_LIMITS} process-wide. */
export const LIMIT_ENV_VARS: Readonly<Record<keyof Limits, string>> = Object.freeze({
  max_rounds: "SUBAGENT_MAX_ROUNDS",
  max_result_chars: "SUBAGENT_MAX_RESULT_CHARS",
  max_parallel_subagents: "SUBAGENT_MAX_PARALLEL",
  subagent_timeout_ms: "SUBAGENT_TIMEOUT_MS",
});

/**
 * Process-wide limits: built-ins, overridden by the environment, overridden by `overrides`.
 * Read again on every dispatch, so a changed environment or config applies to the next `task`
 * call without a restart. An unusable value is ignored with a warning naming the variable.
 */
export function processLimits(
  env: NodeJS.ProcessEnv,
  overrides: Partial<Limits> = {},
  warn: (message: string) => void = console.warn,
): Limits {
  const limits: Limits = { ...BUILTIN_LIMITS };
  for (const key of Object.keys(LIMIT_ENV_VARS) as (keyof Limits)[]) {
    const name = LIMIT_ENV_VARS[key];
    const raw = env[name]?.trim();
    if (!raw) continue;
    const value = Number(raw);
    if (Number.isInteger(value) && value >= 1) limits[key] = value;
    else warn(`ignoring ${name}=${JSON.stringify(raw)}: use a whole number of at least 1`);
  }
  for (const [key, value] of Object.entries(overrides) as [keyof Limits, number | undefined][]) {
    if (value !== undefined) limits[key] = value;
  }
  return limits;
}

/** An agent's limits: its own config where set, else the process-wide ones. */
export function agentLimits(context: RuntimeContext, fallback: Limits): Limits {
  return {
    max_rounds: context.max_rounds ?? fallback.max_rounds,
    max_result_chars: context.max_result_chars ?? fallback.max_result_chars,
    max_parallel_subagents: context.max_parallel_subagents ?? fallback.max_parallel_subagents,
    subagent_timeout_ms: context.subagent_timeout_ms ?? fallback.subagent_timeout_ms,
  };
}
