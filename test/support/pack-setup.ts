import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestProject } from "vitest/node";

declare module "vitest" {
  export interface ProvidedContext {
    /**
     * An empty folder for this run's `npm pack` (see `test/support/consumer-project.ts`): the
     * first test file that needs the tarball packs into it, the others reuse what it left.
     */
    consumerPackDir: string;
  }
}

/**
 * Makes one folder per vitest run for the packed package and removes it at the end. Nothing is
 * packed here: a run whose files never ask for a consumer project pays nothing.
 */
export default async function setup(project: TestProject) {
  const dir = await mkdtemp(join(tmpdir(), "subagent-graph-pack-"));
  project.provide("consumerPackDir", dir);
  return () => rm(dir, { recursive: true, force: true });
}
