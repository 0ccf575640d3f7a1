import { glob, isDynamicPattern } from "tinyglobby";
import type { FileToolLimits } from "../limits.js";
import { resolveHostPath } from "../policy.js";
import { PathRefusal, PathRule } from "../refusal.js";
import { TEMP_PREFIX } from "../safe-fs.js";
import type { FileScope } from "../scope.js";
import { DEFAULT_DIRECTORY, parseVirtualPath } from "../virtual-paths.js";

/** Arguments of `glob`. */
export interface GlobArgs {
  /** A relative pattern such as `**\/*.md`, matched below `path`. */
  pattern: string;
  /** The folder to search. Default: the workspace. */
  path?: string | undefined;
}

/** Files found by a search, as virtual paths, with what was left out. */
export interface FoundFiles {
  base: string;
  paths: string[];
  /** Matches beyond the cap, not shown. */
  more: number;
  /** True when the walk stopped at the time limit. */
  timedOut: boolean;
}

/**
 * Files under `path` matching `pattern`, as virtual paths, sorted. tinyglobby reads through a
 * link named in the pattern's static prefix (`link-dir/*`) even with `followSymbolicLinks:
 * false`, so that prefix is resolved by the policy first and becomes the crawl's `cwd`; the
 * crawl itself follows no links; and every result is checked by the policy again before it is
 * returned. Absolute patterns and any `..` are refused (they move the crawl outside `cwd`).
 */
export async function findFiles(
  scope: FileScope,
  args: GlobArgs,
  limits: FileToolLimits,
  signal?: AbortSignal,
): Promise<FoundFiles> {
  const { staticPrefix, dynamic } = splitPattern(args.pattern);
  const basePath = args.path ?? DEFAULT_DIRECTORY;
  const base = await resolveHostPath(scope, basePath, "read");
  if (base.missing.length === 0 && !base.stat.isDirectory()) {
    // Searching below a file (or a FIFO) answered "no files match", as if it were an empty folder.
    throw new PathRefusal(
      PathRule.NotADirectory,
      basePath,
      "is a file, not a folder: pass a folder as path",
    );
  }
  const cwdVirtual = staticPrefix ? `${base.virtual}/${staticPrefix}` : base.virtual;
  const cwd = staticPrefix ? await resolveHostPath(scope, cwdVirtual, "read", "pattern") : base;
  if (cwd.missing.length > 0 || !cwd.stat.isDirectory()) {
    // A pattern without wildcards names one file: report it if it is there and allowed.
    if (dynamic === "" && cwd.missing.length === 0 && cwd.stat.isFile()) {
      return { base: base.virtual, paths: [cwd.virtual], more: 0, timedOut: false };
    }
    return { base: base.virtual, paths: [], more: 0, timedOut: false };
  }
  const timeout = AbortSignal.timeout(limits.searchMillis);
  const crawlSignal = signal ? AbortSignal.any([signal, timeout]) : timeout;
  let matches: string[] = [];
  try {
    matches = await glob([dynamic || "**/*"], {
      cwd: cwd.real,
      dot: true,
      deep: limits.searchDepth,
      followSymbolicLinks: false,
      onlyFiles: true,
      expandDirectories: false,
      ignore: [`**/${TEMP_PREFIX}*`],
      signal: crawlSignal,
    });
  } catch (error) {
    if (!timeout.aborted) throw error;
  }
  signal?.throwIfAborted();
  matches.sort();
  const paths: string[] = [];
  let more = 0;
  for (const match of matches) {
    if (paths.length >= limits.globResults) {
      more += 1;
      continue;
    }
    const virtual = `${cwd.virtual}/${match}`;
    const checked = await resolveHostPath(scope, virtual, "read").catch(() => undefined);
    if (checked && checked.missing.length === 0 && checked.stat.isFile()) paths.push(virtual);
  }
  return { base: base.virtual, paths, more, timedOut: timeout.aborted };
}

/** The reply of `glob`. */
export function formatFoundFiles(found: FoundFiles, pattern: string, limits: FileToolLimits) {
  if (found.paths.length === 0) {
    return `no files under ${found.base} match ${JSON.stringify(pattern)}${found.timedOut ? " (the search stopped at its time limit)" : ""}`;
  }
  const lines = [...found.paths];
  if (found.more > 0) {
    lines.push(
      `… ${found.more} more matches not shown (limit ${limits.globResults}): narrow the pattern`,
    );
  }
  if (found.timedOut)
    lines.push(`(the search stopped at its ${limits.searchMillis} ms time limit)`);
  return lines.join("\n");
}

/**
 * Splits a pattern into its literal leading folders and the rest, refusing what could move the
 * crawl out of its folder: absolute patterns, `..` anywhere, backslashes, NUL and the other
 * characters the path rules refuse.
 */
export function splitPattern(pattern: string): { staticPrefix: string; dynamic: string } {
  const refuse = (reason: string) =>
    new PathRefusal(PathRule.BadPattern, pattern, reason, "pattern");
  if (pattern.trim() === "") throw refuse("is empty: pass a pattern such as **/*.md");
  if (pattern.startsWith("/")) {
    throw refuse("is absolute: patterns are relative to path (pass the folder as path)");
  }
  if (pattern.includes("..")) throw refuse('contains "..": search from a higher folder instead');
  if (pattern.includes("\\")) throw refuse("contains a backslash: escapes are not supported");
  // The lexical path rules (NUL, control characters, lengths, disguised separators) apply too.
  parseVirtualPath(pattern, "pattern");
  const segments = pattern.split("/").filter((segment) => segment !== "" && segment !== ".");
  const firstDynamic = segments.findIndex((segment) => isDynamicPattern(segment));
  const literal = firstDynamic === -1 ? segments : segments.slice(0, firstDynamic);
  const rest = firstDynamic === -1 ? [] : segments.slice(firstDynamic);
  return { staticPrefix: literal.join("/"), dynamic: rest.join("/") };
}
