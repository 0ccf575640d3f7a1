import { createHash } from "node:crypto";
import { ErrorCode, SubagentGraphError } from "../errors.js";

/**
 * Child checkpoint thread ids: `<parent_thread_id>_sub_<slug>_<8 hex>`.
 *
 * The hex is a hash of (parent thread, slug, tool call id, id of the AI message that made the
 * call). Resuming the same checkpoint after a crash reproduces the same id, so a child resumes
 * its own checkpoints; a fresh model turn or a replay makes new tool call / message ids and so a
 * new child thread, leaving the old one intact.
 *
 * Slugs never contain `_`, so the id parses unambiguously from the right even when the parent id
 * itself contains `_sub_` (the last `_sub_` is always the one this function wrote).
 */

/** Slug format shared with the agent records (no `_`, see above). */
const SLUG = "[a-z0-9][a-z0-9-]{0,62}";
const CHILD_THREAD_ID = new RegExp(`^(.+)_sub_(${SLUG})_([0-9a-f]{8})$`);
const SLUG_ONLY = new RegExp(`^${SLUG}$`);

/** What a child thread id encodes. */
export interface ChildThreadIdParts {
  parentThreadId: string;
  slug: string;
  hash: string;
}

/** The inputs that identify one `task` call. */
export interface ChildThreadIdInput {
  parentThreadId: string;
  slug: string;
  toolCallId: string;
  /** Id of the AI message that made the tool call. */
  aiMessageId: string;
}

/** Makes the child thread id of one `task` call. */
export function makeChildThreadId(input: ChildThreadIdInput): string {
  if (input.parentThreadId.length === 0) {
    throw new SubagentGraphError(
      ErrorCode.InvalidThreadId,
      "parent thread id is empty: a task call needs the parent run's thread_id",
      { field: "parentThreadId" },
    );
  }
  if (!SLUG_ONLY.test(input.slug)) {
    throw new SubagentGraphError(
      ErrorCode.InvalidThreadId,
      `slug ${JSON.stringify(input.slug)} cannot name a child thread: slugs are 1-63 lowercase letters, digits or "-"`,
      { field: "slug" },
    );
  }
  const hash = createHash("sha256")
    // NUL separators: no field can contain NUL, so distinct inputs never join to the same bytes.
    .update([input.parentThreadId, input.slug, input.toolCallId, input.aiMessageId].join("\0"))
    .digest("hex")
    .slice(0, 8);
  return `${input.parentThreadId}_sub_${input.slug}_${hash}`;
}

/** Parses a child thread id, or returns undefined when `threadId` is not one. */
export function parseChildThreadId(threadId: string): ChildThreadIdParts | undefined {
  const match = CHILD_THREAD_ID.exec(threadId);
  if (!match) return undefined;
  const [, parentThreadId, slug, hash] = match;
  if (parentThreadId === undefined || slug === undefined || hash === undefined) return undefined;
  return { parentThreadId, slug, hash };
}

/** True when `threadId` has the shape of a child thread id. */
export function isChildThreadId(threadId: string): boolean {
  return parseChildThreadId(threadId) !== undefined;
}
