/**
 * Copies an agent's skills into its skills scope.
 *
 * An agent sees skills through a scope folder (for example `<data>/threads/<thread>/skills`)
 * that must hold exactly the skills it may use. The scope gets copies, never links: a link would
 * let the agent read whatever the library points to, and would change under a running agent.
 *
 * The scope is replaced as a whole: the new copy is built in a sibling staging folder and renamed
 * into place, so a reader sees the old set or the new set, never a mix. A `.manifest.json`
 * records what the scope holds so an unchanged scope costs one small read.
 */

import { lstat, open, rm, writeFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { makeDirectory } from "../../util/make-directory.js";
import { makeStagingFolder, OPEN_FLAGS, swapIntoPlace } from "../fs-guard.js";
import type { SkillLibrary, SkillSummary } from "./library.js";

/** The file in a skills scope that lists its skills as `[{ name, digest }]`, sorted by name. */
export const SKILLS_MANIFEST_FILE = ".manifest.json";

/** A manifest this large was not written by us: rebuild instead of parsing it. */
const MAX_MANIFEST_BYTES = 1024 * 1024;

interface ManifestEntry {
  name: string;
  digest: string;
}

/**
 * Makes `scopeDir` hold exactly copies of `skills` (as `scopeDir/<name>/…`) plus the manifest.
 *
 * Does nothing when the manifest already lists the same names and digests. Otherwise copies
 * each skill from `library` (checking it like an install, so links or special files planted in
 * the library by hand are refused), writes the manifest last and swaps the copy in. The parent
 * of `scopeDir` is created when missing. Concurrent calls for one scope each build a complete
 * copy; the last swap wins.
 *
 * The manifest records the digests of what was actually copied; when a skill changed since
 * `skills` was resolved, the next call copies again.
 *
 * @throws SubagentGraphError `UNKNOWN_SKILL` when a skill is no longer installed;
 *   `INVALID_SKILL` when one fails validation. The old scope is then left as it was.
 */
export async function materialiseSkills(
  library: SkillLibrary,
  skills: readonly SkillSummary[],
  scopeDir: string,
): Promise<void> {
  const target = resolve(scopeDir);
  const wanted = manifestOf(skills);
  if (sameEntries(await readScopeManifest(target), wanted)) return;

  const parent = dirname(target);
  // Parents and all: the runtime builds these paths itself from validated ids.
  await makeDirectory(parent);
  const staging = await makeStagingFolder(parent, ".skills-staging-");
  let swapped = false;
  try {
    const copied: ManifestEntry[] = [];
    for (const { name } of wanted) {
      const summary = await library.copySkill(name, join(staging, name));
      copied.push({ name: summary.name, digest: summary.digest });
    }
    // Last, so a manifest always describes a complete copy.
    await writeFile(join(staging, SKILLS_MANIFEST_FILE), `${JSON.stringify(copied, null, 2)}\n`, {
      flag: "wx",
      mode: 0o644,
    });
    swapped = await swapIn(staging, target, [wanted, copied]);
  } finally {
    if (!swapped) await rm(staging, { recursive: true, force: true });
  }
}

/**
 * Swaps `staging` in as `target` (see {@link swapIntoPlace}). Returns `false` (leaving `staging`
 * to the caller) when a concurrent call swapped in a copy whose manifest equals one of
 * `acceptable`: its copy is as good as ours, so there is no point in replacing it again.
 */
function swapIn(
  staging: string,
  target: string,
  acceptable: readonly (readonly ManifestEntry[])[],
): Promise<boolean> {
  return swapIntoPlace(staging, target, {
    asidePrefix: ".skills-old-",
    whenOccupied: async (moment) => {
      // An old scope is always replaced; only a copy that raced ours in may be kept.
      if (moment === "found") return "replace";
      const current = await readScopeManifest(target);
      return acceptable.some((entries) => sameEntries(current, entries)) ? "yield" : "replace";
    },
  });
}

/**
 * The manifest of the scope at `target`, or `undefined` when there is none or it is not one we
 * wrote (missing, a link, too large, not JSON of the right shape): every such case just means
 * "rebuild", so no error is worth reporting.
 */
async function readScopeManifest(target: string): Promise<ManifestEntry[] | undefined> {
  try {
    if (!(await lstat(target)).isDirectory()) return undefined;
    const handle = await open(join(target, SKILLS_MANIFEST_FILE), OPEN_FLAGS.readFile);
    let text: string;
    try {
      const stats = await handle.stat();
      if (!stats.isFile() || stats.size > MAX_MANIFEST_BYTES) return undefined;
      text = await handle.readFile("utf8");
    } finally {
      await handle.close();
    }
    const data: unknown = JSON.parse(text);
    if (!Array.isArray(data)) return undefined;
    const entries: ManifestEntry[] = [];
    for (const item of data as unknown[]) {
      if (typeof item !== "object" || item === null) return undefined;
      const { name, digest } = item as Record<string, unknown>;
      if (typeof name !== "string" || typeof digest !== "string") return undefined;
      entries.push({ name, digest });
    }
    return entries;
  } catch {
    return undefined;
  }
}

/** The wanted manifest: one entry per name (the first wins), sorted by name. */
function manifestOf(skills: readonly SkillSummary[]): ManifestEntry[] {
  const byName = new Map<string, ManifestEntry>();
  for (const { name, digest } of skills) {
    if (!byName.has(name)) byName.set(name, { name, digest });
  }
  return [...byName.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

function sameEntries(
  a: readonly ManifestEntry[] | undefined,
  b: readonly ManifestEntry[],
): boolean {
  return (
    a !== undefined &&
    a.length === b.length &&
    a.every((entry, index) => entry.name === b[index]?.name && entry.digest === b[index]?.digest)
  );
}
