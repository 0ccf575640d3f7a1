import { ErrorCode, SubagentGraphError } from "../../errors.js";
import type { FileToolLimits } from "../limits.js";
import type { FileScope } from "../scope.js";
import { readText } from "./read.js";
import { type WriteOutcome, writeBytes } from "./write.js";

/** Arguments of `edit_file`. */
export interface EditArgs {
  path: string;
  old_string: string;
  new_string: string;
  /** Replace every occurrence instead of requiring exactly one. */
  replace_all?: boolean | undefined;
}

/**
 * `edit_file`: exact string replacement. The old text must occur exactly once (or at least
 * once with `replace_all`), so an edit never lands somewhere the model did not mean. The file
 * is replaced atomically: a concurrent edit may be lost, but the file is never a mix of both.
 */
export async function editFile(
  scope: FileScope,
  args: EditArgs,
  limits: FileToolLimits,
): Promise<WriteOutcome & { replacements: number }> {
  if (args.old_string === "") {
    throw new SubagentGraphError(
      ErrorCode.Validation,
      "old_string is empty: pass the exact text to replace (use write_file to create a file)",
      { field: "old_string" },
    );
  }
  if (args.old_string === args.new_string) {
    throw new SubagentGraphError(
      ErrorCode.Validation,
      "old_string and new_string are the same: nothing would change",
      { field: "new_string" },
    );
  }
  const { virtual, text } = await readText(scope, args.path, limits.maxReadBytes);
  const parts = text.split(args.old_string);
  const occurrences = parts.length - 1;
  if (occurrences === 0) {
    throw new SubagentGraphError(
      ErrorCode.Validation,
      `old_string was not found in ${JSON.stringify(virtual)}: read the file and copy the text exactly, whitespace included`,
      { field: "old_string" },
    );
  }
  if (occurrences > 1 && !args.replace_all) {
    throw new SubagentGraphError(
      ErrorCode.Validation,
      `old_string occurs ${occurrences} times in ${JSON.stringify(virtual)}: add surrounding text to make it unique, or pass replace_all: true`,
      { field: "old_string" },
    );
  }
  const outcome = await writeBytes(
    scope,
    virtual,
    parts.join(args.new_string),
    limits.maxWriteBytes,
  );
  return { ...outcome, replacements: occurrences };
}
