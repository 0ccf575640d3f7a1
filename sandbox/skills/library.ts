/**
 * The skill library: the host folder that holds every installed skill.
 *
 * Each skill is a folder `<root>/<name>` holding a `SKILL.md` (see `front-matter.ts`)
 * and any other files and subfolders. Agents never see this folder: their runs get copies of
 * the skills they may use (see `materialise.ts`).
 *
 * Every tree, whether a source to install or a skill already here (the library may be edited by
 * hand), is scanned and read the same defensive way (`tree-scan.ts`, `tree-copy.ts`): links and
 * special files are refused, limits bound the work, and each file is checked through its
 * descriptor.
 *
 * Installs and removals are atomic for readers (`fs-guard.ts`): a new copy is built in a
 * `.staging-<hex>` folder under the root and swapped into place; an old copy is first renamed to
 * `.trash-<hex>` and then deleted. Names starting with `.` are never skills, so these folders
 * stay invisible.
 */

import { type BigIntStats, statSync } from "node:fs";
import { lstat, mkdir, readdir, realpath, rm } from "node:fs/promises";
import { join, resolve } from "node:path";
import { ErrorCode, SubagentGraphError } from "../../errors.js";
import { hasErrno, isSystemError } from "../../util/errno.js";
import { makeDirectory } from "../../util/make-directory.js";
import { makeStagingFolder, removeAtomically, swapIntoPlace } from "../fs-guard.js";
import { invalidSkill } from "./skill-errors.js";
import { assertSkillName, SKILL_NAME_PATTERN } from "./skill-name.js";
import { copyTree } from "./tree-copy.js";
import { comparePaths, kindOf, scanTree, signatureOf } from "./tree-scan.js";
import { checkUpload, UPLOAD_LABEL, writeUpload } from "./upload-files.js";

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

/** How old a folder's change time must be before a listing may be kept by it (see `#skillFolders`). */
const STAMP_SETTLED_NS = 1_000_000_000n;

/** Hidden folders under the root: where copies are built, and where old copies are deleted. */
const STAGING_PREFIX = ".staging-";
const TRASH_PREFIX = ".trash-";

/** Installed skills under one host folder. */
export class SkillLibrary {
  /** The library's folder, absolute. Created by the first install. */
  readonly root: string;
  /** Summaries by skill name, kept while the tree's stat signature is unchanged. */
  readonly #cache = new Map<string, { signature: string; summary: SkillSummary }>();
  /** The skill folder names under the root, kept while the root's own stamp is unchanged. */
  #names: { stamp: string; names: string[] } | undefined;

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
    const names = await this.#skillFolders();
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
   *   has no valid SKILL.md, holds a link or special file, or is over `SKILL_LIMITS`
   *   (`skill-limits.ts`); `VALIDATION_FAILED` when the skill is installed already and `replace`
   *   is not set.
   */
  async install(sourceDir: string, options: SkillInstallOptions = {}): Promise<SkillSummary> {
    const label = `skill source ${JSON.stringify(sourceDir)}`;
    const notAFolder = `${label} is not a readable folder: pass the folder that holds SKILL.md`;
    let realSource: string;
    let isFolder: boolean;
    try {
      realSource = await realpath(sourceDir);
      isFolder = (await lstat(realSource)).isDirectory();
    } catch (error) {
      throw invalidSkill(notAFolder, { cause: error });
    }
    if (!isFolder) throw invalidSkill(notAFolder);
    return this.#installFrom(realSource, label, options);
  }

  /**
   * Installs a skill given as a map from relative path (`/`-separated) to content (strings are
   * written as UTF-8), under the name its SKILL.md declares.
   *
   * @throws SubagentGraphError `INVALID_SKILL` naming the path for an absolute path, a `.`, `..`
   *   or empty segment, a backslash, NUL, a lone surrogate, an over-long name, a path that is
   *   both a file and a folder, or when over `SKILL_LIMITS` (see `upload-files.ts`); otherwise
   *   as {@link install}.
   */
  async installFiles(
    files: Readonly<Record<string, string | Uint8Array>>,
    options: SkillInstallOptions = {},
  ): Promise<SkillSummary> {
    const upload = checkUpload(files);
    await makeDirectory(this.root);
    const source = await makeStagingFolder(this.root, STAGING_PREFIX);
    try {
      await writeUpload(source, upload);
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
    const removed = await removeAtomically(this.hostPath(name), TRASH_PREFIX);
    this.#names = undefined;
    if (removed) this.#cache.delete(name);
    return removed;
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
      throw invalidSkill(
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

  /**
   * The names of the skill folders under the root, sorted. Every run of every agent lists the
   * library, and most libraries are absent or unchanged between runs: a synchronous `stat` of
   * the root (microseconds, no wait for the thread pool) says so, and the folder is read again
   * only when its stamp moved. Adding, removing or renaming a skill folder (installs and removals
   * rename) moves the root's change time; a skill edited in place is rescanned by `#read`.
   */
  async #skillFolders(): Promise<string[]> {
    const stats = statSync(this.root, { bigint: true, throwIfNoEntry: false });
    if (stats === undefined) {
      this.#names = undefined;
      return [];
    }
    const stamp = `${stats.ino}:${stats.mtimeNs}:${stats.ctimeNs}`;
    if (this.#names?.stamp === stamp) return this.#names.names;
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
    // The kernel stamps folders with a coarse clock (a few milliseconds): a change made within
    // the same tick as the stamp read above would not move it. A stamp that recent is not kept,
    // so the next call reads the folder again.
    const age = BigInt(Date.now()) * 1_000_000n - stats.ctimeNs;
    this.#names = age > STAMP_SETTLED_NS ? { stamp, names } : undefined;
    return names;
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
      if (SubagentGraphError.isInstance(error) || isSystemError(error)) return undefined;
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
    const staging = await makeStagingFolder(this.root, STAGING_PREFIX);
    let moved = false;
    try {
      const { manifest, digest } = await copyTree(realSource, label, entries, staging, undefined);
      await this.#moveIntoPlace(staging, manifest.name, options.replace === true);
      moved = true;
      this.#names = undefined;
      return { name: manifest.name, description: manifest.description, digest };
    } finally {
      if (!moved) await rm(staging, { recursive: true, force: true });
    }
  }

  /** Swaps `staging` in as `<root>/<name>`, refusing an installed copy unless replacing. */
  async #moveIntoPlace(staging: string, name: string, replace: boolean): Promise<void> {
    await swapIntoPlace(staging, join(this.root, name), {
      asidePrefix: TRASH_PREFIX,
      // Also after a race: a concurrent install that got there first is an installed copy too.
      whenOccupied: () => {
        if (!replace) throw alreadyInstalled(name);
        return "replace";
      },
    });
  }
}

function alreadyInstalled(name: string): SubagentGraphError {
  return new SubagentGraphError(
    ErrorCode.Validation,
    `skill "${name}" is already installed: pass replace: true (on the command line: --replace) to replace it`,
    { field: "name" },
  );
}

function quoteAll(names: readonly string[]): string {
  return names.map((name) => JSON.stringify(name)).join(", ");
}
