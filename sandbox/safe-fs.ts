/**
 * The file tools' opens and writes inside an agent's scope: the file-system guard's checks
 * (`fs-guard.ts`) with the scope's folders as the boundary and refusals in the agent's words.
 */

import type { Dirent, Stats } from "node:fs";
import { type FileHandle, lstat, mkdir, open, readdir } from "node:fs/promises";
import { join } from "node:path";
import { ErrorCode, SubagentGraphError } from "../errors.js";
import { errnoOf } from "../util/errno.js";
import { descriptorPath, OPEN_FLAGS, openedWithin, writeFileAtomically } from "./fs-guard.js";
import type { HostPath } from "./policy.js";
import { PathRefusal, PathRule } from "./refusal.js";
import type { FileScope } from "./scope.js";

/**
 * Temp files of atomic writes: fixed length (a `${name}.tmp` could exceed 255 bytes), hidden
 * from listings and searches.
 */
export const TEMP_PREFIX = ".sg-tmp-";

/** True for names the sandbox uses internally (never shown to agents). */
export function isInternalName(name: string): boolean {
  return name.startsWith(TEMP_PREFIX);
}

/** An open regular file inside the scope. Close it. */
export interface OpenFile {
  handle: FileHandle;
  stat: Stats;
}

/**
 * Opens a resolved path for reading, closing the check-to-use gap: `O_NOFOLLOW` refuses a link
 * swapped in as the last component, `O_NONBLOCK` keeps a FIFO from blocking a libuv thread, and
 * the descriptor's own path (`/proc/self/fd/N`) must still lie in the scope. Only regular files
 * with a single link pass (a hard link is invisible to `realpath`).
 */
export async function openForRead(scope: FileScope, path: HostPath): Promise<OpenFile> {
  if (path.missing.length > 0) throw notFound(path.virtual);
  const handle = await openChecked(scope, path, OPEN_FLAGS.readFile);
  try {
    const stat = await handle.stat();
    if (stat.isDirectory()) {
      throw new PathRefusal(PathRule.NotRegularFile, path.virtual, "is a folder: use ls or glob");
    }
    if (!stat.isFile()) {
      throw new PathRefusal(
        PathRule.NotRegularFile,
        path.virtual,
        "is not a regular file (a FIFO, socket or device): it is not opened",
      );
    }
    if (stat.nlink > 1) {
      throw new PathRefusal(
        PathRule.HardLink,
        path.virtual,
        "has several hard links, so its content may live outside the agent's folders: it is not read",
      );
    }
    return { handle, stat };
  } catch (error) {
    await handle.close();
    throw error;
  }
}

/** Lists a resolved folder through a descriptor checked like {@link openForRead}'s. */
export async function listFolder(scope: FileScope, path: HostPath): Promise<Dirent[]> {
  if (path.missing.length > 0) throw notFound(path.virtual);
  if (!path.stat.isDirectory()) {
    throw new PathRefusal(PathRule.NotADirectory, path.virtual, "is a file: use read_file");
  }
  const handle = await openChecked(scope, path, OPEN_FLAGS.readFolder);
  try {
    return await readdir(descriptorPath(handle) ?? path.real, { withFileTypes: true });
  } finally {
    await handle.close();
  }
}

/**
 * Replaces (or creates) a file so readers see the old or the new content, never a mix (see
 * {@link writeFileAtomically}: temp file in the target's real folder, flushed, renamed over
 * it). Missing folders are created one at a time, each checked to be a real folder (`mkdir -p`
 * would follow a link planted in the middle).
 *
 * @returns whether the file existed before
 */
export async function writeAtomically(
  scope: FileScope,
  path: HostPath,
  data: string | Uint8Array,
): Promise<{ created: boolean }> {
  let folder = path.existingReal;
  for (const name of path.missing.slice(0, -1)) {
    folder = join(folder, name);
    await makeFolder(scope, folder, path.virtual);
  }
  const target = path.missing.length > 0 ? join(folder, path.missing.at(-1) ?? "") : path.real;
  if (path.missing.length === 0 && path.stat.isDirectory()) {
    throw new PathRefusal(PathRule.NotRegularFile, path.virtual, "is a folder: name a file");
  }
  if (path.missing.length === 0 && !path.stat.isFile()) {
    throw new PathRefusal(
      PathRule.NotRegularFile,
      path.virtual,
      "is not a regular file (a FIFO, socket or device): it is not replaced",
    );
  }
  await writeFileAtomically(target, data, {
    tempPrefix: TEMP_PREFIX,
    checkOpened: (handle) => assertDescriptorInScope(scope, handle, path.virtual),
  });
  return { created: path.missing.length > 0 };
}

async function makeFolder(scope: FileScope, folder: string, virtual: string): Promise<void> {
  try {
    await mkdir(folder, 0o755);
  } catch (error) {
    if (errnoOf(error) !== "EEXIST") throw error;
  }
  const stat = await lstat(folder);
  if (!stat.isDirectory() || !scope.landingOf(folder)) {
    throw new PathRefusal(
      PathRule.SymlinkEscape,
      virtual,
      "had a folder replaced by a link or a file while it was being written: try again",
    );
  }
}

async function openChecked(scope: FileScope, path: HostPath, flags: number): Promise<FileHandle> {
  let handle: FileHandle;
  try {
    handle = await open(path.real, flags);
  } catch (error) {
    const code = errnoOf(error);
    if (code === "ELOOP") {
      throw new PathRefusal(
        PathRule.SymlinkEscape,
        path.virtual,
        "became a symbolic link after it was checked: it is not followed",
      );
    }
    if (code === "ENOENT") throw notFound(path.virtual);
    throw error;
  }
  try {
    assertDescriptorInScope(scope, handle, path.virtual);
    return handle;
  } catch (error) {
    await handle.close();
    throw error;
  }
}

/** Refuses a descriptor the kernel reports outside the scope's folders (see {@link openedWithin}). */
function assertDescriptorInScope(scope: FileScope, handle: FileHandle, virtual: string): void {
  if (openedWithin(handle, (real) => scope.landingOf(real) !== undefined)) return;
  throw new PathRefusal(
    PathRule.SymlinkEscape,
    virtual,
    "resolved outside the agent's folders when opened (a folder on the way was swapped for a link): it is not used",
  );
}

/** The error for a path that does not exist (in the caller's words, never the host's). */
export function notFound(virtual: string): SubagentGraphError {
  return new SubagentGraphError(
    ErrorCode.NotFound,
    `no such file or folder: ${JSON.stringify(virtual)} (use ls or glob to see what exists)`,
    { field: "path" },
  );
}
