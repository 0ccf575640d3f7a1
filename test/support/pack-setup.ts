import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestProject } from "vitest/node";

declare module "vitest" {
  export interface ProvidedContext {
    /**
     * An empty folder for this run's `npm pack` (see `test/support/consumer-project.ts`): the
     * first process that needs the tarball packs into it, the others reuse what it left.
     */
    consumerPackDir: string;
  }
}

/** How long the teardown waits for a pack still running in this process before removing it. */
const PACK_WAIT_MS = 120_000;

/**
 * Makes one folder per vitest run for the packed package and removes it at the end. Nothing is
 * packed here: the run's sequencer starts the pack when the run has files that install the
 * package (`test/support/sequencer.ts`), so a run without them pays nothing.
 */
export default async function setup(project: TestProject) {
  const dir = await mkdtemp(join(tmpdir(), "subagent-graph-pack-"));
  project.provide("consumerPackDir", dir);
  return async () => {
    await packOfThisProcessEnded(dir);
    await rm(dir, { recursive: true, force: true });
  };
}

/**
 * Waits while this process (vitest's, which packs ahead of the files) is still packing into
 * `dir`, so the folder is not removed under `npm pack`, e.g. when the files that wanted the
 * tarball failed before it was done.
 */
async function packOfThisProcessEnded(dir: string): Promise<void> {
  const holder = await readFile(join(dir, "lock", "pid"), "utf8").catch(() => "");
  if (Number(holder) !== process.pid) return;
  const deadline = Date.now() + PACK_WAIT_MS;
  while (!existsSync(join(dir, "result.json")) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
