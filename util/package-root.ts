import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** The `name` in our package.json. */
const PACKAGE_NAME = "subagent-graph";

/**
 * The folder of this package's package.json, found from the URL of one of its modules.
 *
 * A module runs from two places: its source (`server/console-build.ts` under tsx) and its build
 * (`dist/server/console-build.js`, also inside `node_modules/subagent-graph` once installed), so
 * a fixed `new URL("..", import.meta.url)` is right in one and one folder short in the other.
 * Files beside the package root (the web console, langgraph.json) are found from here instead.
 * A package.json of another name on the way up (a project's own, for a copy of the sources
 * outside any package) is passed over; with none found, the module's parent folder is the answer.
 */
export function packageRoot(moduleUrl: string | URL): string {
  const start = dirname(fileURLToPath(moduleUrl));
  for (let dir = start; ; dir = dirname(dir)) {
    if (isOurPackage(join(dir, "package.json"))) return dir;
    if (dirname(dir) === dir) return dirname(start);
  }
}

function isOurPackage(file: string): boolean {
  if (!existsSync(file)) return false;
  try {
    return (JSON.parse(readFileSync(file, "utf8")) as { name?: unknown }).name === PACKAGE_NAME;
  } catch {
    return false;
  }
}
