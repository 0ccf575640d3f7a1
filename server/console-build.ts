import { existsSync, readdirSync, renameSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { ErrorCode, SubagentGraphError } from "../errors.js";
import { packageRoot } from "../util/package-root.js";

/**
 * The console's sources (`web/`: index.html, src/, vite.config.ts), beside the package root
 * whether this module runs from its source or from `dist/`.
 */
export const CONSOLE_SOURCE_DIR = join(packageRoot(import.meta.url), "web");

/**
 * Where `npm run build` puts the console and `npm start` serves it from. The published package
 * ships this folder (package.json `files`) and not the sources, so an installed CLI serves it
 * as built.
 */
export const CONSOLE_DIST_DIR = join(CONSOLE_SOURCE_DIR, "dist");

/**
 * Builds the console with Vite into `outDir` (emptied first). Vite is a development
 * dependency: an install without it cannot build, and says so; so does an installed package,
 * which has the build but not the sources.
 */
export async function buildConsole(outDir: string = CONSOLE_DIST_DIR): Promise<void> {
  if (!existsSync(join(CONSOLE_SOURCE_DIR, "index.html"))) {
    throw new SubagentGraphError(
      ErrorCode.ConsoleUnavailable,
      `cannot build the web console: its sources are not here (${CONSOLE_SOURCE_DIR} has no index.html; an installed package ships only the build, web/dist). Reinstall the package, or build from a clone of the repository with \`npm run build\``,
    );
  }
  let vite: typeof import("vite");
  try {
    vite = await import("vite");
  } catch (error) {
    throw new SubagentGraphError(
      ErrorCode.ConsoleUnavailable,
      `cannot build the web console: Vite is not installed (${(error as Error).message}); run \`npm ci\` with development dependencies, then \`npm run build\``,
      { cause: error },
    );
  }
  // Built beside the target and swapped in, so a server serving `outDir` never sees it half
  // emptied, and two starts building at once each swap in a whole build.
  const building = `${outDir}.building-${process.pid}-${Date.now()}`;
  const previous = `${outDir}.previous-${process.pid}-${Date.now()}`;
  try {
    await vite.build({
      root: CONSOLE_SOURCE_DIR,
      configFile: join(CONSOLE_SOURCE_DIR, "vite.config.ts"),
      logLevel: "warn",
      build: { outDir: building, emptyOutDir: true },
    });
    if (existsSync(outDir)) renameSync(outDir, previous);
    renameSync(building, outDir);
  } finally {
    rmSync(building, { recursive: true, force: true });
    rmSync(previous, { recursive: true, force: true });
  }
}

/**
 * True when `distDir` has no built console, or one older than any of its sources (so a
 * checkout that changed the console rebuilds it on the next start).
 */
export function consoleIsStale(distDir: string = CONSOLE_DIST_DIR): boolean {
  let builtAt: number;
  try {
    builtAt = statSync(join(distDir, "index.html")).mtimeMs;
  } catch {
    return true;
  }
  const sources = [
    join(CONSOLE_SOURCE_DIR, "index.html"),
    join(CONSOLE_SOURCE_DIR, "vite.config.ts"),
    join(CONSOLE_SOURCE_DIR, "src"),
  ];
  return sources.some((source) => newestChange(source) > builtAt);
}

function newestChange(path: string): number {
  const stat = statSync(path, { throwIfNoEntry: false });
  if (!stat) return 0;
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = stat.mtimeMs;
  for (const entry of readdirSync(path)) newest = Math.max(newest, newestChange(join(path, entry)));
  return newest;
}
