/** Limits a run's context may set for itself (the library's caller or the Studio panel). */
export interface LimitOverrides {
  max_rounds?: number;
  max_result_chars?: number;
  max_parallel_subagents?: number;
  subagent_timeout_ms?: number;
}

/** The context keys of {@link LimitOverrides}. */
export const LIMIT_OVERRIDE_KEYS = [
  "max_rounds",
  "max_result_chars",
  "max_parallel_subagents",
  "subagent_timeout_ms",
] as const;

/** The caller's identity and scopes, read from the parent run's context. */
export interface ParentRunScope {
  uid: string;
  threadId: string;
  fileThreadId: string;
  /**
   * Limits the run's context sets, over the agents' own: the HTTP server never passes a
   * client's context through, so only trusted callers (the library, the Studio panel) can.
   */
  overrides: LimitOverrides;
}

/**
 * The scope of the run a tool executes in: `uid` and `thread_id` from the run's context (the
 * thread id falls back to `configurable.thread_id`), `file_thread_id` defaulting to the thread.
 * Undefined when the context lacks them (a graph invoked by hand, not through the runtime).
 */
export function parentScope(context: unknown, configurable: unknown): ParentRunScope | undefined {
  const ctx = (context ?? {}) as Partial<Record<string, unknown>>;
  const threadId =
    stringField(ctx, "thread_id") ??
    stringField((configurable ?? {}) as Record<string, unknown>, "thread_id");
  const uid = stringField(ctx, "uid");
  if (!threadId || !uid) return undefined;
  const overrides: LimitOverrides = {};
  for (const key of LIMIT_OVERRIDE_KEYS) {
    const value = ctx[key];
    if (typeof value === "number" && Number.isInteger(value) && value > 0) overrides[key] = value;
  }
  return {
    uid,
    threadId,
    fileThreadId: stringField(ctx, "file_thread_id") ?? threadId,
    overrides,
  };
}

function stringField(record: Partial<Record<string, unknown>>, key: string): string | undefined {
  const value = record[key];
  return typeof value === "string" && value.length > 0 ? value : undefined;
}
