import { ErrorCode, SubagentGraphError } from "../errors.js";
import type { ScopeIds } from "./scope.js";

/**
 * The file scope of the run a tool executes in, from the run's context (set by the runtime for
 * a main agent, by the task tool for a child): `uid`, `thread_id` (falling back to
 * `configurable.thread_id`), `file_thread_id` and `skills_thread_id` (each defaulting to the
 * thread).
 *
 * @throws SubagentGraphError `VALIDATION_FAILED` when the context has no uid or thread id
 */
export function scopeIdsOf(context: unknown, configurable: unknown): ScopeIds {
  const ctx = (context ?? {}) as Record<string, unknown>;
  const threadId =
    text(ctx.thread_id) ?? text((configurable as Record<string, unknown> | undefined)?.thread_id);
  const uid = text(ctx.uid);
  if (!uid || !threadId) {
    throw new SubagentGraphError(
      ErrorCode.Validation,
      "file tools need the run's context { uid, thread_id }: run the graph through createRuntime() or pass that context",
      { field: "context" },
    );
  }
  return {
    uid,
    fileThreadId: text(ctx.file_thread_id) ?? threadId,
    skillsThreadId: text(ctx.skills_thread_id) ?? threadId,
  };
}

function text(value: unknown): string | undefined {
  return typeof value === "string" && value.length > 0 ? value : undefined;
}
