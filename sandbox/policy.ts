import type { Stats } from "node:fs";
import { lstat, realpath } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { errnoOf } from "../util/errno.js";
import { PathRefusal, PathRule } from "./refusal.js";
import type { FileScope, Mount } from "./scope.js";
import { parseVirtualPath, VirtualRoot } from "./virtual-paths.js";

/** What the caller means to do with the path. */
export type PathIntent = "read" | "write";

/** A virtual folder above the mounts (`/home/gem/user-data`): it can only be listed. */
export interface VirtualDirectory {
  kind: "virtual-directory";
  virtual: string;
  children: string[];
}

/** A path inside one of the scope's folders, resolved to where it really is on the host. */
export interface HostPath {
  kind: "host";
  /** The normalised virtual path the caller named. */
  virtual: string;
  /** The mount the real path lands in (may differ from the named one through an in-scope link). */
  mount: Mount;
  /** The real host path: every existing link resolved, missing components appended. */
  real: string;
  /** The deepest existing ancestor (or the path itself), real. */
  existingReal: string;
  /** Components below `existingReal` that do not exist yet (empty when the path exists). */
  missing: string[];
  /** lstat of `existingReal`. */
  stat: Stats;
}

export type ResolvedPath = VirtualDirectory | HostPath;

/**
 * The access policy: resolves `input` inside `scope` or refuses it. Every file operation goes
 * through here and then uses `real` (never the raw string): the kernel resolves `link/..` to the
 * parent of the link's target, which string normalisation cannot know.
 *
 * Refuses what {@link parseVirtualPath} refuses, host paths, paths outside the virtual roots,
 * links (at any depth, dangling or looping) that lead outside the scope, paths through a file,
 * and writes to read-only folders (skills; uploads for agents).
 *
 * @throws PathRefusal naming the rule
 */
export async function resolveInScope(
  scope: FileScope,
  input: string,
  intent: PathIntent,
  field = "path",
): Promise<ResolvedPath> {
  const parsed = parseVirtualPath(input, field);
  const refuse = (rule: PathRule, reason: string) => new PathRefusal(rule, input, reason, field);
  const named = scope.mountOf(parsed.text);
  if (!named) {
    const children = scope.virtualChildren(parsed.text);
    if (children && intent === "read") {
      return { kind: "virtual-directory", virtual: parsed.text, children };
    }
    if (children) {
      throw refuse(
        PathRule.ReadOnly,
        `is a virtual folder: write under ${VirtualRoot.workspace} or ${VirtualRoot.outputs}`,
      );
    }
    if (isWithinHost(parsed.text, scope)) {
      throw refuse(
        PathRule.HostPath,
        `is a host path: agents see only virtual paths, e.g. ${VirtualRoot.workspace}/notes.md`,
      );
    }
    throw refuse(
      PathRule.OutsideRoots,
      `is outside the virtual roots: use a path under ${VirtualRoot.workspace}, ${VirtualRoot.uploads}, ${VirtualRoot.outputs} or ${VirtualRoot.skills}`,
    );
  }

  const rest = parsed.text.slice(named.virtualRoot.length).split("/").filter(Boolean);
  let existing = join(named.realRoot, ...rest);
  const missing: string[] = [];
  let stat: Stats | undefined;
  while (stat === undefined) {
    try {
      stat = await lstat(existing);
    } catch (error) {
      const code = errnoOf(error);
      if (code === "ENAMETOOLONG") {
        throw refuse(PathRule.PathTooLong, "is too long for the file system: use a shorter path");
      }
      // lstat follows the links in the middle of the path, so a loop there (`loop/x`) fails here,
      // not in realpath below: refuse it by its rule rather than pass on a bare ELOOP.
      if (code === "ELOOP") throw refuse(PathRule.BrokenSymlink, BROKEN_LINK_REASON);
      if ((code !== "ENOENT" && code !== "ENOTDIR") || existing === named.realRoot) throw error;
      missing.unshift(basename(existing));
      existing = dirname(existing);
    }
  }
  let existingReal: string;
  try {
    existingReal = await realpath(existing);
  } catch (error) {
    const code = errnoOf(error);
    // ENOTDIR: a link whose target goes through a file (`link -> file.txt/x`) is just as broken.
    if (code === "ENOENT" || code === "ELOOP" || code === "ENOTDIR") {
      throw refuse(PathRule.BrokenSymlink, BROKEN_LINK_REASON);
    }
    throw error;
  }
  const landing = scope.landingOf(existingReal);
  if (!landing) {
    throw refuse(
      PathRule.SymlinkEscape,
      "goes through a symbolic link that leads outside the agent's folders: it is not followed",
    );
  }
  const realStat = existingReal === existing ? stat : await lstat(existingReal);
  if (missing.length > 0 && !realStat.isDirectory()) {
    throw refuse(
      PathRule.NotADirectory,
      `goes through ${JSON.stringify(scope.toVirtual(existingReal))}, which is a file, not a folder`,
    );
  }
  if (intent === "write" && (landing.readOnly || named.readOnly)) {
    throw refuse(
      PathRule.ReadOnly,
      `is in a read-only folder (${named.readOnly ? named.virtualRoot : landing.virtualRoot}): write under ${VirtualRoot.workspace} or ${VirtualRoot.outputs}`,
    );
  }
  return {
    kind: "host",
    virtual: parsed.text,
    mount: landing,
    real: join(existingReal, ...missing),
    existingReal,
    missing,
    stat: realStat,
  };
}

const BROKEN_LINK_REASON =
  "goes through a symbolic link that is dangling or loops: it is not followed";

/** The same check for a path that must name something inside a mount (not a virtual folder). */
export async function resolveHostPath(
  scope: FileScope,
  input: string,
  intent: PathIntent,
  field = "path",
): Promise<HostPath> {
  const resolved = await resolveInScope(scope, input, intent, field);
  if (resolved.kind === "host") return resolved;
  throw new PathRefusal(
    PathRule.NotRegularFile,
    input,
    `is a virtual folder holding ${resolved.children.join(", ")}: name a file inside one of them`,
    field,
  );
}

function isWithinHost(path: string, scope: FileScope): boolean {
  const hostRoots = [scope.dataDir, ...scope.mounts.map((mount) => mount.realRoot)];
  return hostRoots.some((root) => path === root || path.startsWith(`${root}/`));
}
