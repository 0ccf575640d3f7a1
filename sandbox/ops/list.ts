import { lstat, realpath } from "node:fs/promises";
import { join } from "node:path";
import type { FileToolLimits } from "../limits.js";
import { resolveInScope } from "../policy.js";
import { isInternalName, listFolder } from "../safe-fs.js";
import type { FileScope } from "../scope.js";
import { formatBytes } from "../text.js";

/**
 * `ls`: a folder's entries, folders first, each with its kind and size. Symbolic links are
 * shown for what they point to when that lies in the scope, and as refused otherwise (never
 * followed). Internal temp files are hidden.
 */
export async function listPath(
  scope: FileScope,
  path: string,
  limits: FileToolLimits,
): Promise<string> {
  const resolved = await resolveInScope(scope, path, "read");
  if (resolved.kind === "virtual-directory") {
    const prefix = resolved.virtual === "/" ? "" : resolved.virtual;
    return [
      `${resolved.virtual} (${resolved.children.length} entries)`,
      ...resolved.children.map((child) => `dir   ${prefix}/${child}/`),
    ].join("\n");
  }
  const entries = (await listFolder(scope, resolved)).filter((e) => !isInternalName(e.name));
  const rows = await Promise.all(
    entries.map(async (entry) => {
      const host = join(resolved.real, entry.name);
      const virtual = `${resolved.virtual === "/" ? "" : resolved.virtual}/${entry.name}`;
      if (entry.isSymbolicLink()) return describeLink(scope, host, virtual);
      if (entry.isDirectory()) return { order: 0, text: `dir   ${virtual}/` };
      if (entry.isFile()) {
        const size = await lstat(host)
          .then((s) => s.size)
          .catch(() => undefined);
        return {
          order: 1,
          text: `file  ${virtual}${size === undefined ? "" : `  (${formatBytes(size)})`}`,
        };
      }
      return { order: 1, text: `other ${virtual}  (not a regular file)` };
    }),
  );
  rows.sort((a, b) => a.order - b.order || a.text.localeCompare(b.text));
  const shown = rows.slice(0, limits.listEntries).map((row) => row.text);
  const header = `${resolved.virtual} (${rows.length} ${rows.length === 1 ? "entry" : "entries"})`;
  if (rows.length > shown.length) {
    shown.push(`… ${rows.length - shown.length} more not shown: use glob to narrow the listing`);
  }
  return rows.length === 0 ? `${header}: empty` : [header, ...shown].join("\n");
}

async function describeLink(scope: FileScope, host: string, virtual: string) {
  const target = await realpath(host).catch(() => undefined);
  const inside = target ? scope.toVirtual(target) : undefined;
  if (!target || !inside) {
    return {
      order: 1,
      text: `link  ${virtual}  (refused: leads outside the agent's folders or is broken)`,
    };
  }
  const stat = await lstat(target);
  return stat.isDirectory()
    ? { order: 0, text: `dir   ${virtual}/  (link to ${inside})` }
    : { order: 1, text: `file  ${virtual}  (link to ${inside}, ${formatBytes(stat.size)})` };
}
