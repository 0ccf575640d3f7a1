import { ErrorCode, SubagentGraphError } from "../errors.js";
import { toWellFormedUnicode } from "../util/well-formed.js";

/**
 * The rules of the access policy, by stable name. A refusal names one of them so a model (or a
 * user reading the transcript) learns which rule it broke and how to comply.
 */
export const PathRule = {
  Empty: "empty-path",
  NulByte: "nul-byte",
  ControlCharacter: "control-character",
  MalformedUnicode: "malformed-unicode",
  PathTooLong: "path-too-long",
  NameTooLong: "name-too-long",
  ParentSegment: "parent-segment",
  DisguisedSeparator: "disguised-separator",
  OutsideRoots: "outside-virtual-roots",
  HostPath: "host-path",
  SymlinkEscape: "symlink-escape",
  BrokenSymlink: "broken-symlink",
  ReadOnly: "read-only",
  NotRegularFile: "not-a-regular-file",
  HardLink: "hard-link",
  NotADirectory: "not-a-directory",
  BadPattern: "bad-pattern",
} as const;
export type PathRule = (typeof PathRule)[keyof typeof PathRule];

/** Longest excerpt of the offending path a message quotes (a 4 KiB path helps nobody). */
const QUOTED_PATH_CHARS = 160;

/**
 * A path (or pattern) the access policy refused. `path` is what the caller passed, never a host
 * path; the message quotes it JSON-escaped, so NUL bytes and control characters stay visible.
 */
export class PathRefusal extends SubagentGraphError {
  readonly rule: PathRule;
  readonly path: string;

  constructor(rule: PathRule, path: string, reason: string, field = "path") {
    super(ErrorCode.PathRefused, `path refused (${rule}): ${quotePath(path)} ${reason}`, {
      field,
    });
    this.name = "PathRefusal";
    this.rule = rule;
    this.path = path;
  }

  static isRefusal(value: unknown): value is PathRefusal {
    return SubagentGraphError.isInstance(value) && value.code === ErrorCode.PathRefused;
  }
}

/** The path as a JSON string, cut to a readable length. */
export function quotePath(path: string): string {
  const cut =
    path.length > QUOTED_PATH_CHARS ? `${path.slice(0, QUOTED_PATH_CHARS)}…(${path.length})` : path;
  return JSON.stringify(toWellFormedUnicode(cut));
}
