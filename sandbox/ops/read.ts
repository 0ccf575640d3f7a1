import { ErrorCode, SubagentGraphError } from "../../errors.js";
import type { FileToolLimits } from "../limits.js";
import { resolveHostPath } from "../policy.js";
import { openForRead } from "../safe-fs.js";
import type { FileScope } from "../scope.js";
import { cutLine, formatBytes, isBinary, numberedLine, splitLines } from "../text.js";

/** Arguments of `read_file`. */
export interface ReadArgs {
  path: string;
  /** First line to show, 1-based. Default 1. */
  offset?: number | undefined;
  /** Lines to show. Default (and at most) `limits.readLines`. */
  limit?: number | undefined;
}

/**
 * A file's bytes, through the policy and a checked descriptor, refusing files over `maxBytes`.
 * The file is read through the descriptor that was checked, never reopened by name.
 */
export async function readBytes(
  scope: FileScope,
  path: string,
  maxBytes: number,
): Promise<{ virtual: string; bytes: Buffer }> {
  const resolved = await resolveHostPath(scope, path, "read");
  const file = await openForRead(scope, resolved);
  try {
    if (file.stat.size > maxBytes) {
      throw new SubagentGraphError(
        ErrorCode.TooLarge,
        `${JSON.stringify(resolved.virtual)} is ${formatBytes(file.stat.size)}, over the ${formatBytes(maxBytes)} limit: use grep to find the part you need`,
        { field: "path" },
      );
    }
    return { virtual: resolved.virtual, bytes: await file.handle.readFile() };
  } finally {
    await file.handle.close();
  }
}

/** A text file's content, refusing binary files. */
export async function readText(
  scope: FileScope,
  path: string,
  maxBytes: number,
): Promise<{ virtual: string; text: string }> {
  const { virtual, bytes } = await readBytes(scope, path, maxBytes);
  if (isBinary(bytes)) {
    throw new SubagentGraphError(
      ErrorCode.Validation,
      `${JSON.stringify(virtual)} is a binary file (${formatBytes(bytes.length)}): only text files can be read or edited`,
      { field: "path" },
    );
  }
  return { virtual, text: bytes.toString("utf8") };
}

/** `read_file`: numbered lines of a text file, a window of it at a time. */
export async function readFileLines(
  scope: FileScope,
  args: ReadArgs,
  limits: FileToolLimits,
): Promise<string> {
  const { virtual, text } = await readText(scope, args.path, limits.maxReadBytes);
  const lines = splitLines(text);
  if (lines.length === 0) return `${virtual} is empty.`;
  const offset = args.offset ?? 1;
  const count = Math.min(args.limit ?? limits.readLines, limits.readLines);
  if (offset > lines.length) {
    throw new SubagentGraphError(
      ErrorCode.Validation,
      `offset ${offset} is past the end of ${JSON.stringify(virtual)}, which has ${lines.length} lines: pass an offset from 1 to ${lines.length}`,
      { field: "offset" },
    );
  }
  const window = lines.slice(offset - 1, offset - 1 + count);
  const shown = window.map((line, i) => numberedLine(offset + i, cutLine(line, limits.lineChars)));
  const last = offset + window.length - 1;
  if (last < lines.length) {
    shown.push(`(lines ${offset}-${last} of ${lines.length}; read on with offset=${last + 1})`);
  }
  return shown.join("\n");
}
