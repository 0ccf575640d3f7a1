/**
 * The skill library: the host folder that holds every installed skill.
 *
 * Each skill is a folder `<root>/<name>` holding a `SKILL.md` (see {@link parseSkillManifest})
 * and any other files and subfolders. Agents never see this folder: their runs get copies of
 * the skills they may use (see `materialise.ts`).
 *
 * Skills come from outside (an operator's folder, an upload) and the library may be edited by
 * hand, so every tree is read the same defensive way: `lstat` only, never following links;
 * symbolic links, FIFOs, sockets and devices are refused rather than skipped (a skill with a
 * missing file would misbehave in a way nobody can see); limits bound the work; every file is
 * opened with `O_NOFOLLOW | O_NONBLOCK` and checked through its descriptor (same inode as the
 * `lstat`, and on Linux its `/proc/self/fd` path inside the tree), so a file swapped for a link
 * after the check is refused too. Copies are written file by file; links are never created.
 *
 * Installs and removals are atomic for readers: a new copy is built in a `.staging-<hex>`
 * folder under the root and renamed into place; an old copy is first renamed to `.trash-<hex>`
 * and then deleted. Names starting with `.` are never skills, so these folders stay invisible.
 */

import { createHash, randomBytes } from "node:crypto";
import { type BigIntStats, constants } from "node:fs";
import {
  type FileHandle,
  lstat,
  mkdir,
  open,
  readdir,
  readlink,
  realpath,
  rename,
  rm,
  writeFile,
} from "node:fs/promises";
import { dirname, join, resolve, sep } from "node:path";
import { ErrorCode, SubagentGraphError } from "../../errors.js";
import { makeDirectory } from "../../util/make-directory.js";
import { parseSkillManifest, type SkillManifest } from "./front-matter.js";
import { assertSkillName, SKILL_NAME_PATTERN } from "./skill-name.js";

/** What the runtime needs to know about an installed skill. */
export interface SkillSummary {
  /** The skill's name, which is also its folder name. */
  readonly name: string;
  /** The trimmed `description` from its SKILL.md front matter. */
  readonly description: string;
  /**
   * SHA-256 (hex) over every file's relative path and content (and every folder's path), in
   * sorted path order: it changes whenever any file of the skill changes.
   */
  readonly digest: string;
}

/** Options of {@link SkillLibrary.install} and {@link SkillLibrary.installFiles}. */
export interface SkillInstallOptions {
  /** Replace an installed skill of the same name instead of failing. */
  replace?: boolean;
}

/** The file every skill must have at its top level. */
export const SKILL_FILE = "SKILL.md";

/** Limits on one skill's tree. Skills are instructions plus a few scripts, not data sets. */
export const SKILL_LIMITS = {
  /** Regular files. */
  maxFiles: 500,
  /** Folders (bounded separately so a tree of empty folders cannot grow without limit). */
  maxFolders: 500,
  /** Total size of all files, in bytes (20 MiB). */
  maxBytes: 20 * 1024 * 1024,
  /** Length of one file or folder name, in UTF-8 bytes (the usual file system limit). */
  maxNameBytes: 255,
  /** Length of a relative path, in UTF-8 bytes (the usual `PATH_MAX`). */
  maxPathBytes: 4096,
  /** Path segments below the skill folder: `a/b/c` has depth 3. */
  maxDepth: 16,
} as const;

/** Where an in-memory skill's files come from, for error messages. */
const UPLOAD_LABEL = "the uploaded skill files";

/**
 * Attempts at swapping a copy into place while concurrent calls keep swapping theirs in. Each
 * lost attempt means another call's swap succeeded (and that call is done), so n concurrent
 * calls lose at most n - 1 times; this bounds the loop, not normal use.
 */
const MAX_SWAP_ATTEMPTS = 16;

/** Installed skills under one host folder. */
export class SkillLibrary {
  /** The library's folder, absolute. Created by the first install. */
  readonly root: string;
  /** Summaries by skill name, kept while the tree's stat signature is unchanged. */
  readonly #cache = new Map<string, { signature: string; summary: SkillSummary }>();

  /** @param root The library folder, normally `<dataDir>/skills`; it need not exist yet. */
  constructor(root: string) {
    this.root = resolve(root);
  }

  /**
   * The host folder of skill `name` (whether installed or not).
   *
   * @throws SubagentGraphError `INVALID_SKILL` for a malformed name.
   */
  hostPath(name: string): string {
    assertSkillName(name, "name");
    return join(this.root, name);
  }

  /**
   * Every valid installed skill, sorted by name.
   *
   * Folders that fail validation (no or bad SKILL.md, a front-matter name that differs from the
   * folder name, links, over the limits) are skipped, not thrown: one broken folder edited by
   * hand must not take every agent down. Names starting with `.` are ignored.
   */
  async list(): Promise<SkillSummary[]> {
    let names: string[];
    try {
      const entries = await readdir(this.root, { withFileTypes: true });
      names = entries
        .filter((entry) => entry.isDirectory() && SKILL_NAME_PATTERN.test(entry.name))
        .map((entry) => entry.name)
        .sort(comparePaths);
    } catch (error) {
      if (hasErrno(error, "ENOENT")) return [];
      throw error;
    }
    for (const name of this.#cache.keys()) {
      if (!names.includes(name)) this.#cache.delete(name);
    }
    const summaries: SkillSummary[] = [];
    for (const name of names) {
      const summary = await this.#read(name);
      if (summary !== undefined) summaries.push(summary);
    }
    return summaries;
  }

  /**
   * The installed skill `name`, or `undefined` when it is not installed or fails validation.
   *
   * @throws SubagentGraphError `INVALID_SKILL` for a malformed name.
   */
  async get(name: string): Promise<SkillSummary | undefined> {
    assertSkillName(name, "name");
    return this.#read(name);
  }

  /**
   * Installs the skill in host folder `sourceDir` under the name its SKILL.md declares, by
   * copying it (links inside are refused, not followed; `sourceDir` itself may be a link).
   *
   * @throws SubagentGraphError `INVALID_SKILL` naming the offending relative path when the folder
   *   has no valid SKILL.md, holds a link or special file, or is over {@link SKILL_LIMITS};
   *   `VALIDATION_FAILED` when the skill is installed already and `replace` is not set.
   */
  async install(sourceDir: string, options: SkillInstallOptions = {}): Promise<SkillSummary> {
    const label = `skill source ${JSON.stringify(sourceDir)}`;
    let realSource: string;
    try {
      realSource = await realpath(sourceDir);
      if (!(await lstat(realSource)).isDirectory()) throw new Error("not a folder");
    } catch (error) {
      throw invalid(`${label} is not a readable folder: pass the folder that holds SKILL.md`, {
        cause: error,
      });
    }
    return this.#installFrom(realSource, label, options);
  }

  /**
   * Installs a skill given as a map from relative path (`/`-separated) to content (strings are
   * written as UTF-8), under the name its SKILL.md declares.
   *
   * @throws SubagentGraphError `INVALID_SKILL` naming the path for an absolute path, a `.`, `..`
   *   or empty segment, a backslash, NUL, a lone surrogate, an over-long name, a path that is
   *   both a file and a folder, or when over {@link SKILL_LIMITS}; otherwise as {@link install}.
   */
  async installFiles(
    files: Readonly<Record<string, string | Uint8Array>>,
    options: SkillInstallOptions = {},
  ): Promise<SkillSummary> {
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
    // Checked before anything is written so an oversized upload costs no disk space.
    if (contents.size > SKILL_LIMITS.maxFiles) {
      throw invalid(
        `${UPLOAD_LABEL} hold ${contents.size} files: a skill may have at most ` +
          `${SKILL_LIMITS.maxFiles}; move large data out of the skill`,
        { field: "files" },
      );
    }
    if (folders.size > SKILL_LIMITS.maxFolders) {
      throw invalid(
        `${UPLOAD_LABEL} use ${folders.size} folders: a skill may have at most ` +
          `${SKILL_LIMITS.maxFolders}; flatten the tree`,
        { field: "files" },
      );
    }
    if (total > SKILL_LIMITS.maxBytes) {
      throw invalid(
        `${UPLOAD_LABEL} hold ${total} bytes: a skill may hold at most ${SKILL_LIMITS.maxBytes} ` +
          "bytes (20 MiB); move large data out of the skill",
        { field: "files" },
      );
    }
    for (const path of contents.keys()) {
      if (folders.has(path)) {
        throw invalid(
          `${UPLOAD_LABEL} use ${JSON.stringify(path)} both as a file and as a folder: rename one`,
          { field: "files" },
        );
      }
    }

    await makeDirectory(this.root);
    const source = await makeTempFolder(this.root, ".staging-");
    try {
      // mkdir with `recursive` is safe here: the folder is fresh and we never create links.
      for (const [path, bytes] of [...contents].sort(([a], [b]) => comparePaths(a, b))) {
        const file = join(source, ...path.split("/"));
        await mkdir(dirname(file), { recursive: true });
        await writeFile(file, bytes, { flag: "wx", mode: 0o644 });
      }
      return await this.#installFrom(source, UPLOAD_LABEL, options);
    } finally {
      await rm(source, { recursive: true, force: true });
    }
  }

  /**
   * Uninstalls skill `name`. Returns `false` when it was not installed.
   *
   * @throws SubagentGraphError `INVALID_SKILL` for a malformed name.
   */
  async remove(name: string): Promise<boolean> {
    const target = this.hostPath(name);
    const trash = tempName(this.root, ".trash-");
    try {
      // Renaming first makes the removal atomic for readers; the slow delete happens out of sight.
      await rename(target, trash);
    } catch (error) {
      if (hasErrno(error, "ENOENT")) return false;
      throw error;
    }
    this.#cache.delete(name);
    await rm(trash, { recursive: true, force: true });
    return true;
  }

  /**
   * The skills an agent gets, from its `context.skills` setting: `undefined` means every
   * installed skill, `[]` none, a list exactly those (deduplicated, in the given order).
   *
   * @throws SubagentGraphError `UNKNOWN_SKILL` (field `context.skills`) naming the agent, the
   *   unknown names and the installed skills.
   */
  async resolve(names: readonly string[] | undefined, agentSlug: string): Promise<SkillSummary[]> {
    if (names === undefined) return this.list();
    const found: SkillSummary[] = [];
    const unknown: string[] = [];
    for (const name of new Set(names)) {
      const summary = SKILL_NAME_PATTERN.test(name) ? await this.#read(name) : undefined;
      if (summary === undefined) unknown.push(name);
      else found.push(summary);
    }
    if (unknown.length > 0) {
      const installed = (await this.list()).map((skill) => skill.name);
      const plural = unknown.length === 1 ? "" : "s";
      throw new SubagentGraphError(
        ErrorCode.UnknownSkill,
        `agent "${agentSlug}" lists unknown skill${plural} ${quoteAll(unknown)} in ` +
          `context.skills; installed skills: ${installed.length > 0 ? quoteAll(installed) : "none"}. ` +
          `Install the missing skill${plural} or remove ${unknown.length === 1 ? "it" : "them"} ` +
          "from context.skills (leave context.skills out to give the agent every installed skill)",
        { field: "context.skills" },
      );
    }
    return found;
  }

  /**
   * Copies installed skill `name` into `destination`, checking the tree exactly like an install
   * (so a link planted in the library by hand is refused, not copied). `destination` must not
   * exist; its parent must. Returns the summary of what was actually copied, whose digest may
   * differ from an earlier {@link list} when the skill changed in between.
   *
   * On failure nothing is left at `destination`.
   *
   * @throws SubagentGraphError `UNKNOWN_SKILL` when the skill is not installed; `INVALID_SKILL`
   *   when it fails validation.
   */
  async copySkill(name: string, destination: string): Promise<SkillSummary> {
    const source = this.hostPath(name);
    const label = `installed skill "${name}"`;
    let stats: BigIntStats;
    try {
      stats = await lstat(source, { bigint: true });
    } catch (error) {
      if (!hasErrno(error, "ENOENT")) throw error;
      throw new SubagentGraphError(
        ErrorCode.UnknownSkill,
        `skill "${name}" is not installed (any more): install it or resolve the agent's skills again`,
        { cause: error },
      );
    }
    if (!stats.isDirectory()) {
      throw invalid(
        `${label} is ${kindOf(stats)}, not a folder: the library holds skill folders only; ` +
          "reinstall the skill",
      );
    }
    const realSource = join(await realpath(this.root), name);
    const entries = await scanTree(realSource, label);
    await mkdir(destination, { mode: 0o755 });
    try {
      const { manifest, digest } = await copyTree(realSource, label, entries, destination, name);
      return { name, description: manifest.description, digest };
    } catch (error) {
      await rm(destination, { recursive: true, force: true });
      throw error;
    }
  }

  /** Reads and validates installed skill `name`; `undefined` when absent or invalid. */
  async #read(name: string): Promise<SkillSummary | undefined> {
    const label = `installed skill "${name}"`;
    try {
      const stats = await lstat(join(this.root, name));
      // A link at the top is refused like a link inside: the library holds copies only.
      if (!stats.isDirectory()) return undefined;
      const realSource = join(await realpath(this.root), name);
      const entries = await scanTree(realSource, label);
      const signature = signatureOf(entries);
      const cached = this.#cache.get(name);
      if (cached?.signature === signature) return cached.summary;
      const { manifest, digest } = await copyTree(realSource, label, entries, undefined, name);
      const summary: SkillSummary = { name, description: manifest.description, digest };
      this.#cache.set(name, { signature, summary });
      return summary;
    } catch (error) {
      this.#cache.delete(name);
      if (SubagentGraphError.isInstance(error) || hasErrnoCode(error)) return undefined;
      throw error;
    }
  }

  /** Copies the checked tree at `realSource` to a staging folder and moves it into place. */
  async #installFrom(
    realSource: string,
    label: string,
    options: SkillInstallOptions,
  ): Promise<SkillSummary> {
    const entries = await scanTree(realSource, label);
    await makeDirectory(this.root);
    const staging = await makeTempFolder(this.root, ".staging-");
    let moved = false;
    try {
      const { manifest, digest } = await copyTree(realSource, label, entries, staging, undefined);
      await this.#moveIntoPlace(staging, manifest.name, options.replace === true);
      moved = true;
      return { name: manifest.name, description: manifest.description, digest };
    } finally {
      if (!moved) await rm(staging, { recursive: true, force: true });
    }
  }

  /** Renames `staging` to `<root>/<name>`, moving an old copy to the trash when replacing. */
  async #moveIntoPlace(staging: string, name: string, replace: boolean): Promise<void> {
    const target = join(this.root, name);
    const trashes: string[] = [];
    try {
      for (let attempt = 1; ; attempt += 1) {
        if (await pathExists(target)) {
          if (!replace) throw alreadyInstalled(name);
          const trash = tempName(this.root, ".trash-");
          try {
            await rename(target, trash);
            trashes.push(trash);
          } catch (error) {
            // Removed by someone else in between: nothing to move aside.
            if (!hasErrno(error, "ENOENT")) throw error;
          }
        }
        try {
          await rename(staging, target);
          return;
        } catch (error) {
          // ENOTEMPTY/EEXIST: a concurrent install put its copy there after our check.
          const taken = hasErrno(error, "ENOTEMPTY") || hasErrno(error, "EEXIST");
          if (taken && !replace) throw alreadyInstalled(name);
          if (!taken || attempt >= MAX_SWAP_ATTEMPTS) {
            const last = trashes.pop();
            // Best effort: put the old copy back so a failed replace leaves the skill installed.
            if (last !== undefined) await rename(last, target).catch(() => trashes.push(last));
            throw error;
          }
        }
      }
    } finally {
      for (const trash of trashes) await rm(trash, { recursive: true, force: true });
    }
  }
}

/** One file or folder of a checked tree, as `lstat` saw it. */
interface TreeEntry {
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
 * Lists the tree under `realRoot` with `lstat`, refusing links and special files and enforcing
 * {@link SKILL_LIMITS}. Entries are sorted by path, so every folder comes before its contents.
 */
async function scanTree(realRoot: string, label: string): Promise<TreeEntry[]> {
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
        throw invalid(
          `${label} has a name longer than ${SKILL_LIMITS.maxNameBytes} bytes at ` +
            `${JSON.stringify(path)}: rename it`,
        );
      }
      if (depth + 1 > SKILL_LIMITS.maxDepth) {
        throw invalid(
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
          throw invalid(
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
          throw invalid(
            `${label} has more than ${SKILL_LIMITS.maxFiles} files (at ${JSON.stringify(path)}): ` +
              "move large data out of the skill",
          );
        }
        if (bytes > BigInt(SKILL_LIMITS.maxBytes)) {
          throw invalid(
            `${label} is larger than ${SKILL_LIMITS.maxBytes} bytes (20 MiB) at ` +
              `${JSON.stringify(path)}: move large data out of the skill`,
          );
        }
        entries.push(entryOf(path, "file", stats));
      } else {
        throw refused(label, path, kindOf(stats));
      }
    }
  };

  await walk("", 0);
  return entries.sort((a, b) => comparePaths(a.path, b.path));
}

/**
 * Reads every file of a scanned tree, validates its SKILL.md and computes the digest; with a
 * `destination` (an existing empty folder) also copies the tree there, file by file.
 *
 * The SKILL.md is read and validated first so a broken skill costs no copying, and its bytes
 * are reused for the copy so what was validated is what gets installed.
 */
async function copyTree(
  realRoot: string,
  label: string,
  entries: readonly TreeEntry[],
  destination: string | undefined,
  expectedName: string | undefined,
): Promise<{ manifest: SkillManifest; digest: string }> {
  const skillFile = entries.find((entry) => entry.path === SKILL_FILE);
  if (skillFile?.kind !== "file") {
    throw invalid(
      `${label} has no ${SKILL_FILE} file at its top level: add one starting with "---", ` +
        '"name: <skill-name>", "description: <what it is for>", "---"',
    );
  }
  const skillBytes = await readChecked(realRoot, skillFile, label);
  const manifest = parseSkillManifest(decodeUtf8(skillBytes, label), `${SKILL_FILE} of ${label}`);
  if (expectedName !== undefined && manifest.name !== expectedName) {
    throw invalid(
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
    handle = await open(
      join(realRoot, entry.path),
      constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK,
    );
  } catch (error) {
    if (hasErrno(error, "ELOOP")) throw refused(label, entry.path, "a symbolic link");
    throw changedWhileReading(label, entry.path, error);
  }
  try {
    const stats = await handle.stat({ bigint: true });
    if (
      !stats.isFile() ||
      stats.dev !== entry.dev ||
      stats.ino !== entry.ino ||
      stats.size !== entry.size ||
      !(await openedInside(handle, realRoot))
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

/** False when the descriptor's real path is outside `realRoot`; true when it is or unknown. */
async function openedInside(handle: FileHandle, realRoot: string): Promise<boolean> {
  if (process.platform !== "linux") return true;
  let opened: string;
  try {
    opened = await readlink(`/proc/self/fd/${handle.fd}`);
  } catch {
    return true; // No /proc (a minimal container): the inode check above still applies.
  }
  return opened.startsWith(realRoot + sep);
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

/**
 * A hash of every entry's stat data. Any write changes a file's ctime (which, unlike mtime,
 * cannot be set back by hand), and a replaced file or folder has a new inode, so an unchanged
 * signature means unchanged contents.
 */
function signatureOf(entries: readonly TreeEntry[]): string {
  const hash = createHash("sha256");
  for (const entry of entries) {
    hash.update(
      `${entry.kind} ${JSON.stringify(entry.path)} ${entry.size} ${entry.dev} ${entry.ino} ` +
        `${entry.mtimeNs} ${entry.ctimeNs} ${entry.executable}\n`,
    );
  }
  return hash.digest("hex");
}

/** Checks one relative path of an in-memory skill and returns its segments. */
function checkUploadPath(path: string): string[] {
  const problem = uploadPathProblem(path);
  if (problem !== undefined) {
    throw invalid(`${UPLOAD_LABEL} contain the path ${JSON.stringify(path)}, which ${problem}`, {
      field: "files",
    });
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

function decodeUtf8(bytes: Uint8Array, label: string): string {
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch (error) {
    throw invalid(`${SKILL_FILE} of ${label} is not UTF-8 text: save it as UTF-8`, {
      cause: error,
    });
  }
}

function kindOf(stats: BigIntStats): string {
  if (stats.isSymbolicLink()) return "a symbolic link";
  if (stats.isFIFO()) return "a FIFO (named pipe)";
  if (stats.isSocket()) return "a socket";
  if (stats.isBlockDevice() || stats.isCharacterDevice()) return "a device file";
  if (stats.isFile()) return "a file";
  return "a special file";
}

function refused(label: string, path: string, kind: string): SubagentGraphError {
  const fix =
    kind === "a symbolic link" ? "replace the link with a copy of what it points to" : "remove it";
  return invalid(
    `${label} contains ${kind} at ${JSON.stringify(path)}: skills may hold only regular files ` +
      `and folders; ${fix}`,
  );
}

function unreadable(label: string, path: string, cause: unknown): SubagentGraphError {
  return invalid(
    `${label} could not be read at ${JSON.stringify(path)} (${errnoOf(cause) ?? "error"}): ` +
      "check that it exists and is readable",
    { cause },
  );
}

function changedWhileReading(label: string, path: string, cause?: unknown): SubagentGraphError {
  return invalid(
    `${label} changed while being read at ${JSON.stringify(path)}: retry when nothing is ` +
      "editing the skill",
    cause === undefined ? {} : { cause },
  );
}

function alreadyInstalled(name: string): SubagentGraphError {
  return new SubagentGraphError(
    ErrorCode.Validation,
    `skill "${name}" is already installed: pass replace: true (on the command line: --replace) to replace it`,
    { field: "name" },
  );
}

function invalid(message: string, options: { field?: string; cause?: unknown } = {}) {
  return new SubagentGraphError(ErrorCode.InvalidSkill, message, options);
}

function quoteAll(names: readonly string[]): string {
  return names.map((name) => JSON.stringify(name)).join(", ");
}

/** Code-unit order: stable across locales, and a folder sorts before everything inside it. */
function comparePaths(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** A fixed-length random name under `folder`. */
function tempName(folder: string, prefix: string): string {
  return join(folder, `${prefix}${randomBytes(8).toString("hex")}`);
}

/** Creates a fresh, empty folder with a random name (never recursive: the parent must exist). */
async function makeTempFolder(folder: string, prefix: string): Promise<string> {
  const path = tempName(folder, prefix);
  await mkdir(path, { mode: 0o755 });
  return path;
}

async function pathExists(path: string): Promise<boolean> {
  try {
    await lstat(path);
    return true;
  } catch (error) {
    if (hasErrno(error, "ENOENT")) return false;
    throw error;
  }
}

function errnoOf(error: unknown): string | undefined {
  if (typeof error !== "object" || error === null || !("code" in error)) return undefined;
  return typeof error.code === "string" ? error.code : undefined;
}

function hasErrnoCode(error: unknown): boolean {
  return error instanceof Error && errnoOf(error) !== undefined;
}

function hasErrno(error: unknown, code: string): boolean {
  return errnoOf(error) === code;
}
