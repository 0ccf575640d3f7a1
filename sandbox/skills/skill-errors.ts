/**
 * The `INVALID_SKILL` errors of reading a skill's tree, shared by scanning, copying and upload
 * checks so one kind of problem reads the same wherever it is found. Each names the skill
 * (`label`), the relative path and the fix.
 */

import { ErrorCode, SubagentGraphError } from "../../errors.js";
import { errnoOf } from "../../util/errno.js";

/** An `INVALID_SKILL` error with `message` (which should name the thing and the fix). */
export function invalidSkill(
  message: string,
  options: { field?: string; cause?: unknown } = {},
): SubagentGraphError {
  return new SubagentGraphError(ErrorCode.InvalidSkill, message, options);
}

/**
 * A link or special file (`kind`, such as "a symbolic link") found at `path`: skills hold only
 * regular files and folders.
 */
export function refusedEntry(label: string, path: string, kind: string): SubagentGraphError {
  const fix =
    kind === "a symbolic link" ? "replace the link with a copy of what it points to" : "remove it";
  return invalidSkill(
    `${label} contains ${kind} at ${JSON.stringify(path)}: skills may hold only regular files ` +
      `and folders; ${fix}`,
  );
}

/** A file or folder at `path` that could not be read; the errno code is named, not the host path. */
export function unreadable(label: string, path: string, cause: unknown): SubagentGraphError {
  return invalidSkill(
    `${label} could not be read at ${JSON.stringify(path)} (${errnoOf(cause) ?? "error"}): ` +
      "check that it exists and is readable",
    { cause },
  );
}

/** A file at `path` that differs from what the scan saw: replaced, swapped for a link, or being written. */
export function changedWhileReading(
  label: string,
  path: string,
  cause?: unknown,
): SubagentGraphError {
  return invalidSkill(
    `${label} changed while being read at ${JSON.stringify(path)}: retry when nothing is ` +
      "editing the skill",
    cause === undefined ? {} : { cause },
  );
}
