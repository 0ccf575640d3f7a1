import { isChildThreadId } from "../checkpoints/child-thread-id.js";
import { ErrorCode, SubagentGraphError } from "../errors.js";

/** User-supplied thread ids: safe as file names, and never shaped like a child thread id. */
const THREAD_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_-]{0,159}$/;

/**
 * Checks a caller-chosen thread id.
 * @throws SubagentGraphError `INVALID_THREAD_ID` naming the id and the rule it breaks.
 */
export function validateThreadId(threadId: string): void {
  if (!THREAD_ID_PATTERN.test(threadId)) {
    throw new SubagentGraphError(
      ErrorCode.InvalidThreadId,
      `thread id ${JSON.stringify(threadId.slice(0, 80))} is invalid: use 1-160 letters, digits, "_" or "-", starting with a letter or digit (or omit it for a new thread)`,
      { field: "threadId" },
    );
  }
  if (isChildThreadId(threadId)) {
    throw new SubagentGraphError(
      ErrorCode.InvalidThreadId,
      `thread id "${threadId}" has the shape of a subagent's child thread (<parent>_sub_<slug>_<hex>), which only the task tool creates: choose another id`,
      { field: "threadId" },
    );
  }
}
