import { fileScopeOf, readRunContext } from "../run-context.js";
import type { ScopeIds } from "./scope.js";

/**
 * The file scope of the run a tool executes in, from the run's context (set by the runtime for
 * a main agent, by the task tool for a child), read with {@link readRunContext}: `uid`, the
 * thread (falling back to `configurable.thread_id`), `file_thread_id` and `skills_thread_id`
 * (each defaulting to the thread).
 *
 * @throws SubagentGraphError `VALIDATION_FAILED` when the context is missing or malformed (the
 *   file tools answer the call with its message)
 */
export function scopeIdsOf(context: unknown, configurable: unknown): ScopeIds {
  const { uid, fileThreadId, skillsThreadId } = fileScopeOf(
    readRunContext(context, configurable, { reader: "file tools" }),
  );
  return { uid, fileThreadId, skillsThreadId };
}
