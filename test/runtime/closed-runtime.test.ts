import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { ErrorCode } from "../../errors.js";
import { createRuntime } from "../../index.js";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/**
 * A closed runtime refuses every member a caller reaches through the public entry point, users
 * included, and refuses by rejecting the call's promise (a `.catch` sees it), never by throwing.
 */
it("refuses every call once closed, by rejecting", async () => {
  const dataDir = mkdtempSync(join(tmpdir(), "closed-"));
  dirs.push(dataDir);
  const runtime = await createRuntime({ dataDir, env: {}, warn: () => {} });
  await runtime.users.ensure("alice");
  await runtime.close();
  const calls: [string, () => Promise<unknown>][] = [
    ["users.list", () => runtime.users.list()],
    ["users.authenticate", () => runtime.users.authenticate("token")],
    ["agents.list", () => runtime.agents.list("alice")],
    ["skills.list", () => runtime.skills.list()],
    ["mcp.list", () => runtime.mcp.list()],
    ["files.list", () => runtime.files.list("alice", "t")],
    ["threads.search", () => runtime.threads.search("alice")],
    ["history", () => runtime.history("alice", "t")],
    ["cancel", () => runtime.cancel("alice", "r")],
    ["runInfo", () => runtime.runInfo("alice", "r")],
    ["run", () => runtime.run({ uid: "alice", input: "hi" })],
  ];
  for (const [name, call] of calls) {
    let promise: Promise<unknown> | undefined;
    expect(() => {
      promise = call();
    }, name).not.toThrow();
    await expect(promise, name).rejects.toMatchObject({ code: ErrorCode.Closed });
  }
});
