/**
 * `mkdir -p` that tries each missing folder once.
 *
 * Why not `mkdir(path, { recursive: true })`: Node's own walks up on ENOENT, creates the parent
 * and tries the child again, for as long as it keeps getting ENOENT. Where a parent exists but
 * the child can never be made there (`/proc/nope`: procfs answers ENOENT), that is forever: the
 * process spins at full CPU and never reports anything. Here the missing folders are found by
 * walking up once (one step per path component), then each is made once, outermost first, and
 * the first failure is thrown as it is (its `code` and `path` intact).
 */

import { mkdirSync, type Stats, statSync } from "node:fs";
import { mkdir, stat } from "node:fs/promises";
import { dirname, resolve } from "node:path";
import { errnoOf } from "./errno.js";

/** Creates folder `path` and its missing parents, like `mkdir -p`; throws the first failure. */
export function makeDirectorySync(path: string): void {
  const missing: string[] = [];
  for (let current = resolve(path); ; current = dirname(current)) {
    const stats = statIfExists(current);
    if (stats) {
      if (!stats.isDirectory()) throw notAFolder(current);
      break;
    }
    missing.push(current);
    // Nothing exists up to the root: mkdir reports that below.
    if (dirname(current) === current) break;
  }
  for (const folder of missing.reverse()) {
    try {
      mkdirSync(folder);
    } catch (error) {
      // Another process made it meanwhile: fine, if it is a folder.
      if (errnoOf(error) !== "EEXIST" || !statSync(folder).isDirectory()) throw error;
    }
  }
}

/** Creates folder `path` and its missing parents, like `mkdir -p`; rejects with the first failure. */
export async function makeDirectory(path: string): Promise<void> {
  const missing: string[] = [];
  for (let current = resolve(path); ; current = dirname(current)) {
    let stats: Stats | undefined;
    try {
      stats = await stat(current);
    } catch (error) {
      if (errnoOf(error) !== "ENOENT") throw error;
    }
    if (stats) {
      if (!stats.isDirectory()) throw notAFolder(current);
      break;
    }
    missing.push(current);
    if (dirname(current) === current) break;
  }
  for (const folder of missing.reverse()) {
    try {
      await mkdir(folder);
    } catch (error) {
      if (errnoOf(error) !== "EEXIST" || !(await stat(folder)).isDirectory()) throw error;
    }
  }
}

/** The path's stats, or undefined when it does not exist; other errors are thrown. */
function statIfExists(path: string): Stats | undefined {
  try {
    return statSync(path);
  } catch (error) {
    if (errnoOf(error) === "ENOENT") return undefined;
    throw error;
  }
}

function notAFolder(path: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`ENOTDIR: not a directory, mkdir '${path}'`), {
    code: "ENOTDIR",
    syscall: "mkdir",
    path,
  });
}
