/**
 * A skill given as files in memory (an upload): checking its relative paths and size before
 * anything touches the disk, and writing it into a fresh folder to be installed from like any
 * other folder (so the install checks it once more, the same way).
 */

import { mkdir, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { invalidSkill } from "./skill-errors.js";
import { SKILL_LIMITS } from "./skill-limits.js";
import { comparePaths } from "./tree-scan.js";

/** Where an in-memory skill's files come from, for error messages. */
export const UPLOAD_LABEL = "the uploaded skill files";

/** A checked upload: `[relative path, bytes]` in path order. */
export type CheckedUpload = ReadonlyArray<readonly [path: string, bytes: Uint8Array]>;

/**
 * Checks an upload given as a map from relative path (`/`-separated) to content (strings become
 * UTF-8). Runs before anything is written, so an oversized upload costs no disk space.
 *
 * @throws SubagentGraphError `INVALID_SKILL` (field `files`) naming the path for an absolute
 *   path, a `.`, `..` or empty segment, a backslash, NUL, a lone surrogate, an over-long name, a
 *   path that is both a file and a folder, or when over {@link SKILL_LIMITS}.
 */
export function checkUpload(files: Readonly<Record<string, string | Uint8Array>>): CheckedUpload {
  const contents = new Map<string, Uint8Array>();
  const folders = new Set<string>();
  let total = 0;
  for (const [path, content] of Object.entries(files)) {
    const segments = checkUploadPath(path);
    for (let index = 1; index < segments.length; index += 1) {
      folders.add(segments.slice(0, index).join("/"));
    }
    const bytes = typeof content === "string" ? Buffer.from(content, "utf8") : content;
    total += bytes.byteLength;
    contents.set(path, bytes);
  }
  if (contents.size > SKILL_LIMITS.maxFiles) {
    throw invalidSkill(
      `${UPLOAD_LABEL} hold ${contents.size} files: a skill may have at most ` +
        `${SKILL_LIMITS.maxFiles}; move large data out of the skill`,
      { field: "files" },
    );
  }
  if (folders.size > SKILL_LIMITS.maxFolders) {
    throw invalidSkill(
      `${UPLOAD_LABEL} use ${folders.size} folders: a skill may have at most ` +
        `${SKILL_LIMITS.maxFolders}; flatten the tree`,
      { field: "files" },
    );
  }
  if (total > SKILL_LIMITS.maxBytes) {
    throw invalidSkill(
      `${UPLOAD_LABEL} hold ${total} bytes: a skill may hold at most ${SKILL_LIMITS.maxBytes} ` +
        "bytes (20 MiB); move large data out of the skill",
      { field: "files" },
    );
  }
  for (const path of contents.keys()) {
    if (folders.has(path)) {
      throw invalidSkill(
        `${UPLOAD_LABEL} use ${JSON.stringify(path)} both as a file and as a folder: rename one`,
        { field: "files" },
      );
    }
  }
  return [...contents].sort(([a], [b]) => comparePaths(a, b));
}

/**
 * Writes a checked upload into `folder`, a fresh empty folder that only this call writes to.
 * `mkdir` with `recursive` is safe here for that reason: no link can be in the way, and we never
 * create one.
 */
export async function writeUpload(folder: string, upload: CheckedUpload): Promise<void> {
  for (const [path, bytes] of upload) {
    const file = join(folder, ...path.split("/"));
    await mkdir(dirname(file), { recursive: true });
    await writeFile(file, bytes, { flag: "wx", mode: 0o644 });
  }
}

/** Checks one relative path of an upload and returns its segments. */
function checkUploadPath(path: string): string[] {
  const problem = uploadPathProblem(path);
  if (problem !== undefined) {
    throw invalidSkill(
      `${UPLOAD_LABEL} contain the path ${JSON.stringify(path)}, which ${problem}`,
      { field: "files" },
    );
  }
  return path.split("/");
}

function uploadPathProblem(path: string): string | undefined {
  if (path === "") return 'is empty: give a relative path such as "scripts/run.sh"';
  if (path.includes("\0")) return "contains NUL: remove it";
  // Lone surrogates are written as U+FFFD, so two different strings would name one file.
  if (/[\uD800-\uDFFF]/u.test(path)) return "is not well-formed Unicode: fix its encoding";
  if (path.includes("\\")) return 'contains a backslash: separate folders with "/"';
  if (path.startsWith("/")) return "is absolute: give a path relative to the skill folder";
  if (Buffer.byteLength(path, "utf8") > SKILL_LIMITS.maxPathBytes) {
    return `is longer than ${SKILL_LIMITS.maxPathBytes} bytes: shorten it`;
  }
  const segments = path.split("/");
  if (segments.length > SKILL_LIMITS.maxDepth) {
    return `is nested more than ${SKILL_LIMITS.maxDepth} levels deep: flatten the tree`;
  }
  for (const segment of segments) {
    if (segment === "")
      return 'has an empty segment ("//" or a leading or trailing "/"): remove it';
    if (segment === "." || segment === "..") {
      return `has a "${segment}" segment: give a plain path inside the skill folder`;
    }
    if (Buffer.byteLength(segment, "utf8") > SKILL_LIMITS.maxNameBytes) {
      return `has a name longer than ${SKILL_LIMITS.maxNameBytes} bytes: shorten it`;
    }
  }
  return undefined;
}
