import { isWellFormedUnicode } from "../util/well-formed.js";
import { PathRefusal, PathRule } from "./refusal.js";

/** The virtual file system agents see. Nothing else exists for them. */
export const VirtualRoot = {
  home: "/home/gem",
  userData: "/home/gem/user-data",
  workspace: "/home/gem/user-data/workspace",
  uploads: "/home/gem/user-data/uploads",
  outputs: "/home/gem/user-data/outputs",
  skills: "/home/gem/skills",
} as const;

/** Where a relative path is taken from: models often write `notes.md` for the workspace. */
export const DEFAULT_DIRECTORY = VirtualRoot.workspace;

/** Linux limits, counted in UTF-8 bytes (100 × "€" is 300 bytes, over a name's 255). */
export const MAX_NAME_BYTES = 255;
export const MAX_PATH_BYTES = 4096;

/** A syntactically acceptable virtual path: absolute, normalised, no `..`. */
export interface VirtualPath {
  /** `/home/gem/...`, with `.` and repeated slashes removed. */
  text: string;
  segments: string[];
}

/**
 * Checks a path an agent (or a caller of the files API) passed and normalises it, before any
 * file system call. Refuses NUL bytes, control characters, malformed UTF-16 (lone surrogates
 * would be written as U+FFFD, so two different strings would name one file), over-long paths
 * and names, and every `..` segment, also disguised ones (`%2e%2e`, `‥`, `．．`, `..\`) that a
 * later layer might decode into a real one. A relative path is taken from the workspace.
 *
 * The result is only lexically safe: {@link resolveInScope} still resolves symbolic links.
 *
 * @throws PathRefusal naming the rule
 */
export function parseVirtualPath(input: string, field = "path"): VirtualPath {
  const refuse = (rule: PathRule, reason: string) => new PathRefusal(rule, input, reason, field);
  if (input.length === 0) throw refuse(PathRule.Empty, "is empty: pass a path under /home/gem");
  if (input.includes("\0")) {
    throw refuse(PathRule.NulByte, "contains a NUL byte: remove it (it is never stripped)");
  }
  if (!isWellFormedUnicode(input)) {
    throw refuse(PathRule.MalformedUnicode, "contains a lone UTF-16 surrogate: fix the encoding");
  }
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what we refuse.
  if (/[\u0001-\u001f\u007f]/.test(input)) {
    throw refuse(PathRule.ControlCharacter, "contains a control character: remove it");
  }
  if (Buffer.byteLength(input) > MAX_PATH_BYTES) {
    throw refuse(
      PathRule.PathTooLong,
      `is longer than ${MAX_PATH_BYTES} bytes: use a shorter path`,
    );
  }
  const absolute = input.startsWith("/") ? input : `${DEFAULT_DIRECTORY}/${input}`;
  const segments: string[] = [];
  for (const segment of absolute.split("/")) {
    if (segment === "" || segment === ".") continue;
    if (segment === "..") {
      throw refuse(
        PathRule.ParentSegment,
        `contains "..": write the absolute path instead, under ${VirtualRoot.userData} or ${VirtualRoot.skills}`,
      );
    }
    if (isDisguisedParentOrSeparator(segment)) {
      throw refuse(
        PathRule.DisguisedSeparator,
        `has a segment ${JSON.stringify(segment)} that decodes or normalises to ".." or a path separator: rename it`,
      );
    }
    if (Buffer.byteLength(segment) > MAX_NAME_BYTES) {
      throw refuse(
        PathRule.NameTooLong,
        `has a name longer than ${MAX_NAME_BYTES} bytes (UTF-8): shorten it`,
      );
    }
    segments.push(segment);
  }
  return { text: `/${segments.join("/")}`, segments };
}

/**
 * True when another layer (URL decoding, Unicode compatibility normalisation, a Windows-minded
 * tool) could read the segment as `..` or as containing a separator.
 */
function isDisguisedParentOrSeparator(segment: string): boolean {
  if (segment.includes("\\")) return true;
  const variants = [segment.normalize("NFKC"), percentDecoded(segment)];
  variants.push(variants[1]?.normalize("NFKC") ?? "");
  return variants.some((v) => v === ".." || v.includes("/") || v.includes("\\") || v === ".");
}

function percentDecoded(segment: string): string {
  if (!segment.includes("%")) return segment;
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/** True when `path` is `root` or lies under it (segment-wise, so `/a/bc` is not under `/a/b`). */
export function isWithin(path: string, root: string): boolean {
  return path === root || path.startsWith(root.endsWith("/") ? root : `${root}/`);
}
