/** The caller's identity and scopes, read from the parent run's context. */
export interface ParentRunScope {
  uid: string;
  threadId: string;
  fileThreadId: string;
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
  return { uid, threadId, fileThreadId: stringField(ctx, "file_thread_id") ?? threadId };
}

function stringField(record: Partial<Record<string, unknown>>, key: string): string | undefined {
  const value = record[key];
  return typeof value === "string" && value.length > 0 ? value : undefined;
}
