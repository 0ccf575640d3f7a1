import { spawn } from "node:child_process";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { foldersOfEndedProcesses, isAlive } from "../support/process-alive.js";

/** The pid of a process that has ended and been reaped. */
async function endedPid(): Promise<number> {
  const child = spawn(process.execPath, ["-e", ""], { stdio: "ignore" });
  await new Promise((resolve) => child.on("exit", resolve));
  const pid = child.pid ?? 0;
  expect(pid).toBeGreaterThan(0);
  return pid;
}

// What a killed run leaves (its PostgreSQL cluster, its build of the sources) is found by the
// pid in the folder's name (test/support/postgres-cluster.ts, compiled-sources-setup.ts).
describe("folders of ended processes", () => {
  let parent = "";
  afterEach(async () => {
    await rm(parent, { recursive: true, force: true });
  });

  it("lists the folders whose pid is gone, and never a live process's or a name without a pid", async () => {
    parent = await mkdtemp(join(tmpdir(), "ended-"));
    const ended = await endedPid();
    expect(isAlive(ended)).toBe(false);
    expect(isAlive(process.pid)).toBe(true);
    const names = [
      `sg-pg-${ended}-a1b2c3`,
      `sg-pg-${process.pid}-d4e5f6`,
      "sg-pg-Xy12Zq",
      `test-build-${ended}`,
      `other-${ended}`,
    ];
    for (const name of names) await mkdir(join(parent, name));

    expect(foldersOfEndedProcesses(parent, "sg-pg-")).toEqual([join(parent, names[0] ?? "")]);
    expect(foldersOfEndedProcesses(parent, "test-build-")).toEqual([join(parent, names[3] ?? "")]);
    expect(foldersOfEndedProcesses(join(parent, "missing"), "sg-pg-")).toEqual([]);
  });
});
