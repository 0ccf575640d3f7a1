import { lstat } from "node:fs/promises";
import { ErrorCode, SubagentGraphError } from "../errors.js";
import type { SandboxLayout } from "./layout.js";
import type { FileToolLimits } from "./limits.js";
import { findFiles } from "./ops/glob.js";
import { readBytes } from "./ops/read.js";
import { writeBytes } from "./ops/write.js";
import { resolveHostPath } from "./policy.js";
import { FileScope, type ScopeIds } from "./scope.js";
import { isWithin, VirtualRoot } from "./virtual-paths.js";

/** A file in a thread's folders, as the files API lists it. */
export interface ThreadFileEntry {
  /** Virtual path, e.g. `/home/gem/user-data/outputs/report.md`. */
  path: string;
  size: number;
  modifiedAt: string;
}

/**
 * The host side of a thread's files (for the runtime's files API, not for agents): add uploads,
 * list and read what agents wrote. It goes through the same policy as the agents' tools, with
 * uploads writable.
 */
export class ThreadFiles {
  constructor(
    private readonly layout: SandboxLayout,
    private readonly limits: FileToolLimits,
  ) {}

  /**
   * Stores `content` as `name` in the thread's uploads (`name` may hold sub-folders; an
   * existing file is replaced atomically).
   *
   * @throws PathRefusal for a name the policy refuses; `TOO_LARGE` over `maxBytes`
   */
  async upload(
    ids: ScopeIds,
    name: string,
    content: string | Uint8Array,
    maxBytes: number,
  ): Promise<ThreadFileEntry> {
    const virtual = name.startsWith("/") ? name : `${VirtualRoot.uploads}/${name}`;
    if (!isWithin(virtual, VirtualRoot.uploads) || virtual === VirtualRoot.uploads) {
      throw new SubagentGraphError(
        ErrorCode.Validation,
        `upload name ${JSON.stringify(name)} is not a file in ${VirtualRoot.uploads}: pass a file name such as "data.csv"`,
        { field: "name" },
      );
    }
    const scope = await FileScope.open(this.layout, ids, "host");
    const target = await resolveHostPath(scope, virtual, "write", "name");
    if (target.mount.name !== "uploads") {
      throw new SubagentGraphError(
        ErrorCode.Validation,
        `upload name ${JSON.stringify(name)} leads out of ${VirtualRoot.uploads}: pass a plain file name`,
        { field: "name" },
      );
    }
    const written = await writeBytes(scope, virtual, content, maxBytes);
    return describe(scope, written.virtual);
  }

  /** Every file under `folder` (default the outputs), sorted, with size and modification time. */
  async list(ids: ScopeIds, folder: string = VirtualRoot.outputs): Promise<ThreadFileEntry[]> {
    const scope = await FileScope.open(this.layout, ids, "host");
    const found = await findFiles(scope, { pattern: "**/*", path: folder }, this.limits);
    return Promise.all(found.paths.map((path) => describe(scope, path)));
  }

  /** A file's bytes (any of the thread's folders), refusing files over the read limit. */
  async read(ids: ScopeIds, path: string): Promise<{ path: string; bytes: Buffer }> {
    const scope = await FileScope.open(this.layout, ids, "host");
    const { virtual, bytes } = await readBytes(scope, path, this.limits.maxReadBytes);
    return { path: virtual, bytes };
  }
}

async function describe(scope: FileScope, path: string): Promise<ThreadFileEntry> {
  const resolved = await resolveHostPath(scope, path, "read");
  const stat = await lstat(resolved.real);
  return { path: resolved.virtual, size: stat.size, modifiedAt: stat.mtime.toISOString() };
}
