import { RE2JS } from "re2js";
import { ErrorCode, messageOf, SubagentGraphError } from "../../errors.js";
import type { FileToolLimits } from "../limits.js";
import { resolveHostPath } from "../policy.js";
import { openForRead } from "../safe-fs.js";
import type { FileScope } from "../scope.js";
import { cutLine, isBinary, splitLines } from "../text.js";
import { DEFAULT_DIRECTORY } from "../virtual-paths.js";
import { findFiles } from "./glob.js";

/** Arguments of `grep`. */
export interface GrepArgs {
  /** A regular expression (RE2 syntax), or literal text with `fixed_strings`. */
  pattern: string;
  /** A file or folder to search. Default: the workspace. */
  path?: string | undefined;
  /** Only files matching this glob (relative to `path`), e.g. `**\/*.ts`. */
  glob?: string | undefined;
  ignore_case?: boolean | undefined;
  fixed_strings?: boolean | undefined;
}

/**
 * `grep`: matching lines as `path:line: text`. Patterns run on RE2 (linear time, so no pattern
 * can hang the process on a crafted line); files over the size limit and binary files are
 * skipped and counted; the number of files, matches and the walk's time are bounded.
 */
export async function grepFiles(
  scope: FileScope,
  args: GrepArgs,
  limits: FileToolLimits,
  signal?: AbortSignal,
): Promise<string> {
  const regex = compile(args);
  const base = await resolveHostPath(scope, args.path ?? DEFAULT_DIRECTORY, "read");
  let files: string[];
  let note = "";
  if (base.missing.length === 0 && !base.stat.isDirectory()) {
    // A file named as `path` is opened now, so what read_file refuses (a FIFO or device, a hard
    // link) is refused here too; skipped in the loop below, it read "0 matching lines".
    await (await openForRead(scope, base)).handle.close();
    files = [base.virtual];
  } else {
    const found = await findFiles(
      scope,
      { pattern: args.glob ?? "**/*", path: base.virtual },
      { ...limits, globResults: limits.grepFiles },
      signal,
    );
    files = found.paths;
    if (found.more > 0)
      note += `; ${found.more} files beyond the first ${limits.grepFiles} not searched`;
    if (found.timedOut) note += "; the file walk stopped at its time limit";
  }
  const matches: string[] = [];
  let skippedLarge = 0;
  let skippedBinary = 0;
  let truncated = false;
  for (const file of files) {
    signal?.throwIfAborted();
    if (matches.length >= limits.grepMatches) {
      truncated = true;
      break;
    }
    const resolved = await resolveHostPath(scope, file, "read").catch(() => undefined);
    if (!resolved) continue;
    const opened = await openForRead(scope, resolved).catch(() => undefined);
    if (!opened) continue;
    let bytes: Buffer;
    try {
      if (opened.stat.size > limits.grepFileBytes) {
        skippedLarge += 1;
        continue;
      }
      bytes = await opened.handle.readFile();
    } finally {
      await opened.handle.close();
    }
    if (isBinary(bytes)) {
      skippedBinary += 1;
      continue;
    }
    const lines = splitLines(bytes.toString("utf8"));
    for (let index = 0; index < lines.length; index += 1) {
      const line = lines[index] ?? "";
      if (!regex.test(line)) continue;
      if (matches.length >= limits.grepMatches) {
        truncated = true;
        break;
      }
      matches.push(`${file}:${index + 1}: ${cutLine(line, limits.lineChars)}`);
    }
  }
  if (skippedLarge > 0) note += `; ${skippedLarge} files over the size limit skipped`;
  if (skippedBinary > 0) note += `; ${skippedBinary} binary files skipped`;
  if (truncated) note += `; stopped at ${limits.grepMatches} matches: narrow the pattern or path`;
  const summary = `${matches.length} matching lines in ${files.length} files searched${note}`;
  return matches.length === 0
    ? `no matches for ${JSON.stringify(args.pattern)} (${summary})`
    : [...matches, `(${summary})`].join("\n");
}

function compile(args: GrepArgs): RE2JS {
  const source = args.fixed_strings ? RE2JS.quote(args.pattern) : args.pattern;
  try {
    return RE2JS.compile(source, args.ignore_case ? RE2JS.CASE_INSENSITIVE : 0);
  } catch (error) {
    throw new SubagentGraphError(
      ErrorCode.Validation,
      `pattern ${JSON.stringify(args.pattern)} is not a valid RE2 regular expression (${messageOf(error)}): fix it, or pass fixed_strings: true to search for literal text`,
      { field: "pattern" },
    );
  }
}
