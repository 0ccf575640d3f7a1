/**
 * Scanning a skill's tree: every file and folder under a skill folder, as `lstat` saw it.
 *
 * Skills come from outside (an operator's folder, an upload) and the library may be edited by
 * hand, so the scan never follows a link, and symbolic links, FIFOs, sockets and devices are
 * refused rather than skipped (a skill with a missing file would misbehave in a way nobody can
 * see); {@link SKILL_LIMITS} bound the work. The entries keep device and inode so the copy
 * (`tree-copy.ts`) can check that what it opens is what was scanned.
 */

import { createHash } from "node:crypto";
import type { BigIntStats } from "node:fs";
import { lstat, readdir } from "node:fs/promises";
import { join } from "node:path";
import { invalidSkill, refusedEntry, unreadable } from "./skill-errors.js";
import { SKILL_LIMITS } from "./skill-limits.js";

/** One file or folder of a checked tree, as `lstat` saw it. */
export interface TreeEntry {
  /** Relative to the tree's root, `/`-separated. */
  readonly path: string;
  readonly kind: "file" | "folder";
  readonly size: bigint;
  readonly dev: bigint;
  readonly ino: bigint;
  readonly mtimeNs: bigint;
  readonly ctimeNs: bigint;
  readonly executable: boolean;
}

/**
 * Lists the tree under `realRoot` (a real path: no link in it) with `lstat`, refusing links and
 * special files and enforcing {@link SKILL_LIMITS}. Entries are sorted by path, so every folder
 * comes before its contents.
 *
 * @param label Names the tree in error messages, e.g. `installed skill "pdf"`.
 * @throws SubagentGraphError `INVALID_SKILL` naming the relative path of the first problem.
 */
export async function scanTree(realRoot: string, label: string): Promise<TreeEntry[]> {
  const entries: TreeEntry[] = [];
  let files = 0;
  let folders = 0;
  let bytes = 0n;

  const walk = async (folder: string, depth: number): Promise<void> => {
    let names: string[];
    try {
      names = await readdir(folder === "" ? realRoot : join(realRoot, folder));
    } catch (error) {
      throw unreadable(label, folder === "" ? "." : folder, error);
    }
    for (const name of names.sort(comparePaths)) {
      const path = folder === "" ? name : `${folder}/${name}`;
      if (Buffer.byteLength(name, "utf8") > SKILL_LIMITS.maxNameBytes) {
        throw invalidSkill(
          `${label} has a name longer than ${SKILL_LIMITS.maxNameBytes} bytes at ` +
            `${JSON.stringify(path)}: rename it`,
        );
      }
      if (depth + 1 > SKILL_LIMITS.maxDepth) {
        throw invalidSkill(
          `${label} nests ${JSON.stringify(path)} more than ${SKILL_LIMITS.maxDepth} levels ` +
            "deep: flatten the tree",
        );
      }
      let stats: BigIntStats;
      try {
        stats = await lstat(join(realRoot, path), { bigint: true });
      } catch (error) {
        throw unreadable(label, path, error);
      }
      if (stats.isDirectory()) {
        folders += 1;
        if (folders > SKILL_LIMITS.maxFolders) {
          throw invalidSkill(
            `${label} has more than ${SKILL_LIMITS.maxFolders} folders (at ` +
              `${JSON.stringify(path)}): flatten the tree`,
          );
        }
        entries.push(entryOf(path, "folder", stats));
        await walk(path, depth + 1);
      } else if (stats.isFile()) {
        files += 1;
        bytes += stats.size;
        if (files > SKILL_LIMITS.maxFiles) {
          throw invalidSkill(
            `${label} has more than ${SKILL_LIMITS.maxFiles} files (at ${JSON.stringify(path)}): ` +
              "move large data out of the skill",
          );
        }
        if (bytes > BigInt(SKILL_LIMITS.maxBytes)) {
          throw invalidSkill(
            `${label} is larger than ${SKILL_LIMITS.maxBytes} bytes (20 MiB) at ` +
              `${JSON.stringify(path)}: move large data out of the skill`,
          );
        }
        entries.push(entryOf(path, "file", stats));
      } else {
        throw refusedEntry(label, path, kindOf(stats));
      }
    }
  };

  await walk("", 0);
  return entries.sort((a, b) => comparePaths(a.path, b.path));
}

/**
 * A hash of every entry's stat data. Any write changes a file's ctime (which, unlike mtime,
 * cannot be set back by hand), and a replaced file or folder has a new inode, so an unchanged
 * signature means unchanged contents.
 */
export function signatureOf(entries: readonly TreeEntry[]): string {
  const hash = createHash("sha256");
  for (const entry of entries) {
    hash.update(
      `${entry.kind} ${JSON.stringify(entry.path)} ${entry.size} ${entry.dev} ${entry.ino} ` +
        `${entry.mtimeNs} ${entry.ctimeNs} ${entry.executable}\n`,
    );
  }
  return hash.digest("hex");
}

/** What `stats` describes, in words for an error message ("a symbolic link", "a socket"). */
export function kindOf(stats: BigIntStats): string {
  if (stats.isSymbolicLink()) return "a symbolic link";
  if (stats.isFIFO()) return "a FIFO (named pipe)";
  if (stats.isSocket()) return "a socket";
  if (stats.isBlockDevice() || stats.isCharacterDevice()) return "a device file";
  if (stats.isFile()) return "a file";
  return "a special file";
}

/** Code-unit order: stable across locales, and a folder sorts before everything inside it. */
export function comparePaths(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function entryOf(path: string, kind: TreeEntry["kind"], stats: BigIntStats): TreeEntry {
  return {
    path,
    kind,
    size: kind === "file" ? stats.size : 0n,
    dev: stats.dev,
    ino: stats.ino,
    mtimeNs: stats.mtimeNs,
    ctimeNs: stats.ctimeNs,
    executable: (stats.mode & 0o100n) !== 0n,
  };
}
