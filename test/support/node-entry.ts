import { join } from "node:path";
import { inject } from "vitest";

/**
 * The test scripts (besides the CLI) that tests start as processes of their own. They are
 * transpiled with the package's sources and `test/support/` (see
 * `test/support/compiled-sources-setup.ts`), so {@link nodeEntry} can start them from
 * JavaScript too.
 */
export const CHILD_SCRIPTS = [
  "test/support/durable-worker.ts",
  "test/support/mcp-fixture-server.ts",
  "test/support/start-worker.ts",
  "test/knowledge/ingest-child.ts",
] as const;

/** A file {@link nodeEntry} starts: the CLI, or one of {@link CHILD_SCRIPTS}. */
export type NodeEntryFile = "cli/main.ts" | (typeof CHILD_SCRIPTS)[number];

/**
 * The arguments to `node` that run `file` (a path from the repository root, where the process
 * runs): in a vitest run its JavaScript from this run's build (see
 * `test/support/compiled-sources-setup.ts`), outside one `--import tsx <file>`.
 */
export function nodeEntry(file: NodeEntryFile): string[] {
  const compiled = compiledSourcesDir();
  return compiled === undefined
    ? ["--import", "tsx", file]
    : [join(compiled, file.replace(/\.ts$/, ".js"))];
}

/** `node` and the arguments that start the CLI, before the CLI's own (see {@link nodeEntry}). */
export function cliCommand(): string[] {
  return [process.execPath, ...nodeEntry("cli/main.ts")];
}

function compiledSourcesDir(): string | undefined {
  try {
    return inject("compiledSourcesDir");
  } catch {
    // Not inside a vitest worker (a script importing this module): run the sources.
    return undefined;
  }
}
