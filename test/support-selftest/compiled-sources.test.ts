import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { cli } from "../support/cli.js";
import { cliInProcess } from "../support/in-process-cli.js";
import { CHILD_SCRIPTS, nodeEntry } from "../support/node-entry.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

// The processes tests start run this run's JavaScript of the sources
// (test/support/compiled-sources-setup.ts). If that build went stale or wrong, every process
// test would test something else than the working tree: these checks say so first.
describe("the run's JavaScript of the sources", { timeout: 60_000 }, () => {
  it("is what the CLI and every child script start from, inside the repository's .tmp/", () => {
    for (const file of ["cli/main.ts", ...CHILD_SCRIPTS] as const) {
      const [entry, ...rest] = nodeEntry(file);
      expect(rest).toEqual([]);
      expect(entry?.startsWith(join(ROOT, ".tmp", "test-build-"))).toBe(true);
      expect(entry?.endsWith(file.replace(/\.ts$/, ".js"))).toBe(true);
      expect(existsSync(entry ?? "")).toBe(true);
    }
  });

  it("behaves as the sources do: the same help, and the same refusal of a bad data folder", async () => {
    const dataDir = await mkdtemp(join(tmpdir(), "compiled-cli-"));
    try {
      for (const argv of [["help"], ["agents", "list", "--data", "/proc/nope"]]) {
        const [inProcess, asProcess] = [await cliInProcess(argv), await cli(argv)];
        expect({ argv, ...asProcess }).toEqual({ argv, ...inProcess });
      }
      const listed = await cli(["agents", "list", "--data", dataDir]);
      expect(listed.code, listed.stderr).toBe(0);
      expect(listed.stdout).toMatch(/\S/);
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
