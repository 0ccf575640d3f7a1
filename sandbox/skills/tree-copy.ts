/**
 * Reading and copying a scanned skill tree (see `tree-scan.ts`), and checking its SKILL.md.
 *
 * Every file is opened without following a final link and without blocking on a FIFO, and its
 * descriptor is checked to be the scanned file (same inode and size, and on Linux really inside
 * the tree), so a file swapped for a link after the scan is refused too. Copies are written file
 * by file with `O_EXCL`; links are never created.
 */

import { createHash } from "node:crypto";
import { type FileHandle, mkdir, open, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { hasErrno } from "../../util/errno.js";
import { isInsideFolder, isSameFile, OPEN_FLAGS, openedWithin } from "../fs-guard.js";
import { parseSkillManifest, SKILL_FILE, type SkillManifest } from "./front-matter.js";
import { changedWhileReading, invalidSkill, refusedEntry } from "./skill-errors.js";
import type { TreeEntry } from "./tree-scan.js";

/**
 * Reads every file of a scanned tree, validates its SKILL.md and computes the digest; with a
 * `destination` (an existing empty folder) also copies the tree there, file by file.
 *
 * The SKILL.md is read and validated first so a broken skill costs no copying, and its bytes
 * are reused for the copy so what was validated is what gets installed.
 *
 * @param realRoot The tree's real path, as scanned.
 * @param expectedName When set, the name SKILL.md must declare (an installed skill's folder).
 * @returns the manifest and the digest: SHA-256 over every folder's path and every file's path,
 *   length and content, in sorted path order.
 * @throws SubagentGraphError `INVALID_SKILL` naming the path when SKILL.md is missing or bad, or
 *   a file changed since the scan.
 */
export async function copyTree(
  realRoot: string,
  label: string,
  entries: readonly TreeEntry[],
  destination: string | undefined,
  expectedName: string | undefined,
): Promise<{ manifest: SkillManifest; digest: string }> {
  const skillFile = entries.find((entry) => entry.path === SKILL_FILE);
  if (skillFile?.kind !== "file") {
    throw invalidSkill(
      `${label} has no ${SKILL_FILE} file at its top level: add one starting with "---", ` +
        '"name: <skill-name>", "description: <what it is for>", "---"',
    );
  }
  const skillBytes = await readChecked(realRoot, skillFile, label);
  const manifest = parseSkillManifest(decodeUtf8(skillBytes, label), `${SKILL_FILE} of ${label}`);
  if (expectedName !== undefined && manifest.name !== expectedName) {
    throw invalidSkill(
      `${SKILL_FILE} of ${label} declares name "${manifest.name}": the name must equal the ` +
        `folder name "${expectedName}"; fix the front matter or reinstall the skill`,
      { field: "name" },
    );
  }

  const hash = createHash("sha256");
  for (const entry of entries) {
    // JSON-quoted paths and explicit lengths keep the hashed stream unambiguous.
    if (entry.kind === "folder") {
      hash.update(`folder ${JSON.stringify(entry.path)}\n`);
      if (destination !== undefined) {
        await mkdir(join(destination, ...entry.path.split("/")), { mode: 0o755 });
      }
      continue;
    }
    const bytes = entry === skillFile ? skillBytes : await readChecked(realRoot, entry, label);
    hash.update(`file ${JSON.stringify(entry.path)} ${bytes.byteLength}\n`);
    hash.update(bytes);
    if (destination !== undefined) {
      // "wx" (O_CREAT | O_EXCL) never writes through an existing link.
      await writeFile(join(destination, ...entry.path.split("/")), bytes, {
        flag: "wx",
        mode: entry.executable ? 0o755 : 0o644,
      });
    }
  }
  return { manifest, digest: hash.digest("hex") };
}

/**
 * Reads a scanned file through a descriptor that is checked to be the scanned file: opened
 * without following a final link and without blocking on a FIFO, same device and inode, same
 * size, and (on Linux) really inside `realRoot`, which catches a folder swapped for a link.
 */
async function readChecked(realRoot: string, entry: TreeEntry, label: string): Promise<Buffer> {
  let handle: FileHandle;
  try {
    handle = await open(join(realRoot, entry.path), OPEN_FLAGS.readFile);
  } catch (error) {
    if (hasErrno(error, "ELOOP")) throw refusedEntry(label, entry.path, "a symbolic link");
    throw changedWhileReading(label, entry.path, error);
  }
  try {
    const stats = await handle.stat({ bigint: true });
    if (
      !stats.isFile() ||
      !isSameFile(stats, entry) ||
      stats.size !== entry.size ||
      !openedWithin(handle, (real) => isInsideFolder(real, realRoot))
    ) {
      throw changedWhileReading(label, entry.path);
    }
    const size = Number(entry.size);
    const buffer = Buffer.alloc(size);
    let offset = 0;
    while (offset < size) {
      const { bytesRead } = await handle.read(buffer, offset, size - offset, offset);
      if (bytesRead === 0) break;
      offset += bytesRead;
    }
    // A file that shrank or grew after the stat is being written to: do not take half of it.
    const extra = await handle.read(Buffer.alloc(1), 0, 1, size);
    if (offset !== size || extra.bytesRead !== 0) throw changedWhileReading(label, entry.path);
    return buffer;
  } finally {
    await handle.close();
  }
}

function decodeUtf8(bytes: Uint8Array, label: string): string {
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch (error) {
    throw invalidSkill(`${SKILL_FILE} of ${label} is not UTF-8 text: save it as UTF-8`, {
      cause: error,
    });
  }
}
