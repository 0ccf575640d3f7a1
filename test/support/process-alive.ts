import { readdirSync } from "node:fs";
import { join } from "node:path";

/**
 * Whether process `pid` exists (signal 0 checks without signalling; EPERM means it exists under
 * another user). A child that ended is reaped by Node, so its pid is gone.
 */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * The folders in `parent` named `<prefix><pid>` or `<prefix><pid>-…` whose process is gone:
 * what a killed test run left behind. Folders of live processes, and names without a pid, are
 * not listed; a missing `parent` lists nothing.
 */
export function foldersOfEndedProcesses(parent: string, prefix: string): string[] {
  let names: string[];
  try {
    names = readdirSync(parent);
  } catch {
    return [];
  }
  return names
    .filter((name) => {
      if (!name.startsWith(prefix)) return false;
      const pid = /^(\d+)(?:-|$)/.exec(name.slice(prefix.length))?.[1];
      return pid !== undefined && !isAlive(Number(pid));
    })
    .map((name) => join(parent, name));
}
