/**
 * The file-system guard: the low-level checks and moves that keep the sandbox safe on a tree
 * that can change under it (an agent's own files, a skill folder edited by hand). Every file
 * tool (through `safe-fs.ts`, which adds the agent's scope), the skill library and the skills
 * copy (`skills/materialise.ts`) use these and nothing of their own, so a security fix lands
 * here once.
 *
 * - Open flags: never follow a final link, never block on a FIFO.
 * - Descriptor checks: after an open, ask the kernel where the descriptor really is; a folder
 *   on the way swapped for a link between the check and the open is caught here.
 * - Atomic replacement: a file is written to a hidden temp file and renamed over its target; a
 *   folder is built in a hidden staging folder and swapped in, the old copy moved aside and then
 *   deleted. Readers see the old content or the new, never a mix.
 *
 * Errno codes are read with `util/errno.ts`, which `util/` shares.
 */

import { randomBytes } from "node:crypto";
import { type BigIntStats, constants, existsSync, readlinkSync } from "node:fs";
import { type FileHandle, lstat, mkdir, open, rename, rm, unlink } from "node:fs/promises";
import { dirname, join, sep } from "node:path";
import { hasErrno } from "../util/errno.js";

/** `open` flags for the ways the sandbox opens what it has checked. */
export const OPEN_FLAGS = {
  /**
   * A file to read: `O_NOFOLLOW` refuses a link swapped in as the last component (ELOOP), and
   * `O_NONBLOCK` keeps a FIFO from blocking one of libuv's few threads for ever.
   */
  readFile: constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK,
  /** A folder to list: `O_DIRECTORY` fails on anything else. */
  readFolder: constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW,
  /** A new file: `O_EXCL` never writes through an existing file or link. */
  createNew: constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
} as const;

/**
 * Attempts at swapping a copy into place while concurrent calls keep swapping theirs in. Each
 * lost attempt means another call's swap succeeded (and that call is done), so n concurrent
 * calls lose at most n - 1 times; this bounds the loop, not normal use.
 */
const MAX_SWAP_ATTEMPTS = 16;

/** Linux exposes each descriptor's path; elsewhere the check-to-use gap stays open. */
const PROC_FD_AVAILABLE = existsSync("/proc/self/fd");

/**
 * A path that names the open file itself (`/proc/self/fd/N` on Linux), so a later call works
 * on what was checked rather than on whatever the original path leads to now; `undefined`
 * without `/proc`.
 */
export function descriptorPath(handle: FileHandle): string | undefined {
  return PROC_FD_AVAILABLE ? `/proc/self/fd/${handle.fd}` : undefined;
}

/**
 * Where the kernel says an open descriptor is (its real path), or `undefined` when the system
 * cannot tell (no `/proc`, as in some minimal containers).
 */
export function openedPath(handle: FileHandle): string | undefined {
  const path = descriptorPath(handle);
  if (path === undefined) return undefined;
  try {
    return readlinkSync(path);
  } catch {
    return undefined;
  }
}

/**
 * False when the kernel reports the descriptor at a real path that `isInside` rejects; true
 * when it is inside or when the system cannot tell. Callers refuse on false, with their own
 * error; where the answer is unknown their other checks (inode, link count) still apply.
 */
export function openedWithin(handle: FileHandle, isInside: (realPath: string) => boolean): boolean {
  const real = openedPath(handle);
  return real === undefined || isInside(real);
}

/** True when real path `path` lies strictly below real folder `folder`. */
export function isInsideFolder(path: string, folder: string): boolean {
  return path.startsWith(folder + sep);
}

/**
 * True when a descriptor's `fstat` shows the same file an earlier `lstat` saw (device and
 * inode): a file replaced in between, even by one of the same size, has a new inode.
 */
export function isSameFile(
  opened: Pick<BigIntStats, "dev" | "ino">,
  seen: Pick<BigIntStats, "dev" | "ino">,
): boolean {
  return opened.dev === seen.dev && opened.ino === seen.ino;
}

/**
 * A fresh name in `folder`: `prefix` plus 16 hex digits. Fixed length (a `${name}.tmp` could
 * exceed the 255-byte name limit) and unguessable, so concurrent calls never collide.
 */
export function hiddenName(folder: string, prefix: string): string {
  return join(folder, `${prefix}${randomBytes(8).toString("hex")}`);
}

/**
 * Creates an empty folder with a {@link hiddenName} in `parent` to build a copy in before it is
 * swapped into place. Never recursive: the parent must exist, and a fresh folder holds no link.
 *
 * @returns the folder's path
 */
export async function makeStagingFolder(parent: string, prefix: string): Promise<string> {
  const path = hiddenName(parent, prefix);
  await mkdir(path, { mode: 0o755 });
  return path;
}

/** Options of {@link writeFileAtomically}. */
export interface AtomicWriteOptions {
  /** Prefix of the temp file's name, so listings can hide it while it exists. */
  readonly tempPrefix: string;
  /** Throws when the temp file's descriptor is not where it should be (see {@link openedWithin}). */
  readonly checkOpened: (handle: FileHandle) => void;
}

/**
 * Replaces (or creates) file `target` so readers see the old or the new content, never a mix:
 * the data goes to an exclusively created temp file beside it, is flushed, and is renamed over
 * the target. The temp file is removed on failure: left behind, it would be a stray file.
 */
export async function writeFileAtomically(
  target: string,
  data: string | Uint8Array,
  options: AtomicWriteOptions,
): Promise<void> {
  const temp = hiddenName(dirname(target), options.tempPrefix);
  const handle = await open(temp, OPEN_FLAGS.createNew, 0o644);
  try {
    try {
      options.checkOpened(handle);
      await handle.writeFile(data);
      await handle.datasync();
    } finally {
      await handle.close();
    }
    await rename(temp, target);
  } catch (error) {
    await unlink(temp).catch(() => undefined);
    throw error;
  }
}

/** What to do about a target that is in the way of a swap: replace it, or let it stand. */
export type OccupiedDecision = "replace" | "yield";

/** Options of {@link swapIntoPlace}. */
export interface SwapOptions {
  /** Prefix of the hidden name an old copy is moved to (beside the target) before deletion. */
  readonly asidePrefix: string;
  /**
   * Called when the target is in the way: `"found"` before a swap, `"raced"` when a concurrent
   * call put its copy there between our two renames. Return `"replace"` to move it aside (and,
   * after a race, try again), `"yield"` to leave it and stop, or throw to refuse.
   */
  readonly whenOccupied: (
    moment: "found" | "raced",
  ) => OccupiedDecision | Promise<OccupiedDecision>;
}

/**
 * Renames folder `staging` to `target`, moving an old `target` aside first and deleting it
 * after, so readers see the old copy or the new one. Concurrent calls each swap a complete copy
 * in; the last one wins, bounded by {@link MAX_SWAP_ATTEMPTS}. On failure the old copy is put
 * back (best effort), so a failed replace leaves the old one in place.
 *
 * @returns `true` once swapped; `false` when `whenOccupied` yielded. Either way, on `false` or a
 *   throw, `staging` is still the caller's to delete.
 */
export async function swapIntoPlace(
  staging: string,
  target: string,
  options: SwapOptions,
): Promise<boolean> {
  const folder = dirname(target);
  const asides: string[] = [];
  try {
    for (let attempt = 1; ; attempt += 1) {
      if (await pathExists(target)) {
        if ((await options.whenOccupied("found")) === "yield") return false;
        const aside = hiddenName(folder, options.asidePrefix);
        try {
          await rename(target, aside);
          asides.push(aside);
        } catch (error) {
          // A concurrent call has just moved it aside, or removed it: nothing to move.
          if (!hasErrno(error, "ENOENT")) throw error;
        }
      }
      try {
        await rename(staging, target);
        return true;
      } catch (error) {
        // ENOTEMPTY/EEXIST: a concurrent call renamed its copy in between our two renames.
        if (!hasErrno(error, "ENOTEMPTY", "EEXIST")) throw error;
        if ((await options.whenOccupied("raced")) === "yield") return false;
        if (attempt >= MAX_SWAP_ATTEMPTS) throw error;
      }
    }
  } catch (error) {
    const last = asides.pop();
    // Best effort: fails harmlessly when a concurrent call's copy already stands there.
    if (last !== undefined) await rename(last, target).catch(() => asides.push(last));
    throw error;
  } finally {
    for (const aside of asides) await rm(aside, { recursive: true, force: true });
  }
}

/**
 * Deletes `target` (a file or a whole folder) atomically for readers: it is first renamed to a
 * hidden name beside it, then deleted out of sight, so nobody sees a half-deleted folder.
 *
 * @returns `false` when `target` did not exist
 */
export async function removeAtomically(target: string, asidePrefix: string): Promise<boolean> {
  const aside = hiddenName(dirname(target), asidePrefix);
  try {
    await rename(target, aside);
  } catch (error) {
    if (hasErrno(error, "ENOENT")) return false;
    throw error;
  }
  await rm(aside, { recursive: true, force: true });
  return true;
}

/** Whether anything (even a dangling link) is at `path`; other errors than ENOENT are thrown. */
export async function pathExists(path: string): Promise<boolean> {
  try {
    await lstat(path);
    return true;
  } catch (error) {
    if (hasErrno(error, "ENOENT")) return false;
    throw error;
  }
}
