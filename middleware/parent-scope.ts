import {
  fileScopeOf,
  type LimitOverrides,
  limitOverridesOf,
  readRunContext,
} from "../run-context.js";

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
 * The scope of the run a `task` call executes in, read from its context with
 * {@link readRunContext} (the thread falling back to `configurable.thread_id`, `file_thread_id`
 * to the thread).
 *
 * @throws SubagentGraphError `VALIDATION_FAILED` when the context is missing or malformed (the
 *   task tool answers the call with its message)
 */
export function parentScope(context: unknown, configurable: unknown): ParentRunScope {
  const run = readRunContext(context, configurable, { reader: "task calls" });
  const { uid, threadId, fileThreadId } = fileScopeOf(run);
  return { uid, threadId, fileThreadId, overrides: limitOverridesOf(run) };
}
