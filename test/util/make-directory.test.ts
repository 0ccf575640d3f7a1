import { statSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { makeDirectory, makeDirectorySync } from "../../util/make-directory.js";

describe.each([
  ["makeDirectorySync", async (path: string) => makeDirectorySync(path)],
  ["makeDirectory", makeDirectory],
])("%s", (_name, make) => {
  let root: string;
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), "make-directory-"));
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it("makes a folder and its missing parents, and is content when it exists", async () => {
    const nested = join(root, "a", "b", "c");
    await make(nested);
    expect(statSync(nested).isDirectory()).toBe(true);
    await make(nested);
    await make(root);
  });

  it("fails with ENOENT where the parent exists but the folder cannot be made there", async () => {
    // procfs answers ENOENT to mkdir: Node's recursive mkdir retries that forever.
    await expect(make("/proc/subagent-graph-nope/data")).rejects.toMatchObject({
      code: "ENOENT",
      path: "/proc/subagent-graph-nope",
    });
  });

  it("fails with ENOTDIR under a file, and for a file in the way", async () => {
    const file = join(root, "file");
    writeFileSync(file, "x");
    await expect(make(join(file, "sub"))).rejects.toMatchObject({ code: "ENOTDIR" });
    await expect(make(file)).rejects.toMatchObject({ code: "ENOTDIR", path: file });
  });
});
