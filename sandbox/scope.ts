import { realpath } from "node:fs/promises";
import { sep } from "node:path";
import { makeDirectory } from "../util/make-directory.js";
import type { SandboxLayout } from "./layout.js";
import { isWithin, VirtualRoot } from "./virtual-paths.js";

/** The ids that pick a run's folders (the table in README.md "Files and skills"). */
export interface ScopeIds {
  uid: string;
  /** Whose uploads/outputs: the main thread's id, shared by its children. */
  fileThreadId: string;
  /** Whose skills: the run's own thread (a child's differs from its parent's). */
  skillsThreadId: string;
}

/**
 * Who acts: an `agent` through its file tools (uploads and skills read-only), or the `host`
 * (the runtime's files API, which adds uploads; skills stay read-only, materialised only by the
 * skills code).
 */
export type ScopeAccess = "agent" | "host";

/** One virtual root and the host folder behind it. */
export interface Mount {
  name: "workspace" | "uploads" | "outputs" | "skills";
  virtualRoot: string;
  /** `realpath` of the host folder, computed once when the scope opens. */
  realRoot: string;
  readOnly: boolean;
}

/**
 * The folders one run may touch, with their real host paths. Open one per tool call: the
 * folders are created on demand, and `realpath` runs once per root, so a link anywhere above the
 * data dir is resolved before any containment test.
 */
export class FileScope {
  readonly mounts: readonly Mount[];
  readonly dataDir: string;

  private constructor(mounts: Mount[], dataDir: string) {
    this.mounts = mounts;
    this.dataDir = dataDir;
  }

  /** Creates the scope's folders if needed and resolves them. Validates every id first. */
  static async open(
    layout: SandboxLayout,
    ids: ScopeIds,
    access: ScopeAccess = "agent",
  ): Promise<FileScope> {
    const roots = [
      { name: "workspace", virtualRoot: VirtualRoot.workspace, host: layout.workspace(ids.uid) },
      { name: "uploads", virtualRoot: VirtualRoot.uploads, host: layout.uploads(ids.fileThreadId) },
      { name: "outputs", virtualRoot: VirtualRoot.outputs, host: layout.outputs(ids.fileThreadId) },
      {
        name: "skills",
        virtualRoot: VirtualRoot.skills,
        host: layout.skillsScope(ids.skillsThreadId),
      },
    ] as const;
    const mounts = await Promise.all(
      roots.map(async ({ name, virtualRoot, host }) => {
        await makeDirectory(host);
        return {
          name,
          virtualRoot,
          realRoot: await realpath(host),
          readOnly: name === "skills" || (name === "uploads" && access === "agent"),
        };
      }),
    );
    return new FileScope(mounts, layout.dataDir);
  }

  /** The mount a normalised virtual path lies in, by its text alone. */
  mountOf(virtualPath: string): Mount | undefined {
    return this.mounts.find((mount) => isWithin(virtualPath, mount.virtualRoot));
  }

  /** The mount a real host path lies in, if any: the containment test of the policy. */
  landingOf(realPath: string): Mount | undefined {
    return this.mounts.find(
      (mount) => realPath === mount.realRoot || realPath.startsWith(mount.realRoot + sep),
    );
  }

  /** The virtual path of a real host path inside the scope. */
  toVirtual(realPath: string): string | undefined {
    const mount = this.landingOf(realPath);
    if (!mount) return undefined;
    return mount.virtualRoot + realPath.slice(mount.realRoot.length).split(sep).join("/");
  }

  /**
   * The virtual folders above the mounts (`/`, `/home`, `/home/gem`, `/home/gem/user-data`) and
   * their children, which exist only in the listing.
   */
  virtualChildren(virtualPath: string): string[] | undefined {
    const below = this.mounts
      .map((mount) => mount.virtualRoot)
      .filter((root) => root !== virtualPath && isWithin(root, virtualPath));
    if (below.length === 0) return undefined;
    const prefix = virtualPath === "/" ? "/" : `${virtualPath}/`;
    return [...new Set(below.map((root) => root.slice(prefix.length).split("/")[0] ?? ""))].sort();
  }

  /** Replaces host paths in a message (e.g. from a Node fs error) with virtual ones. */
  scrub(message: string): string {
    let text = message;
    for (const mount of this.mounts) text = text.split(mount.realRoot).join(mount.virtualRoot);
    return text.split(this.dataDir).join("<data>");
  }
}
