import { existsSync } from "node:fs";
import {
  lstat,
  mkdir,
  mkdtemp,
  open,
  readdir,
  readFile,
  realpath,
  rename,
  rm,
  stat,
  symlink,
  writeFile,
} from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  hiddenName,
  isInsideFolder,
  isSameFile,
  makeStagingFolder,
  OPEN_FLAGS,
  openedPath,
  openedWithin,
  pathExists,
  removeAtomically,
  swapIntoPlace,
  writeFileAtomically,
} from "../../sandbox/fs-guard.js";

const PROC_FD = existsSync("/proc/self/fd");

let base: string;
beforeEach(async () => {
  base = await realpath(await mkdtemp(join(tmpdir(), "fs-guard-")));
});
afterEach(async () => {
  await rm(base, { recursive: true, force: true });
});

/** A folder holding one file `file` with `content`. */
async function folderWith(path: string, content: string): Promise<string> {
  await mkdir(path);
  await writeFile(join(path, "file"), content);
  return path;
}

describe("descriptor checks", () => {
  it.runIf(PROC_FD)("reports where a descriptor really is, through a link on the way", async () => {
    const root = join(base, "root");
    const outside = join(base, "outside");
    await mkdir(root);
    await folderWith(outside, "secret");
    await writeFile(join(root, "own"), "mine");
    // The middle component is a link: O_NOFOLLOW only refuses a link as the last component.
    await symlink(outside, join(root, "swapped"));
    const inside = (real: string) => isInsideFolder(real, root);

    const own = await open(join(root, "own"), OPEN_FLAGS.readFile);
    const escaped = await open(join(root, "swapped", "file"), OPEN_FLAGS.readFile);
    try {
      expect(openedPath(own)).toBe(join(root, "own"));
      expect(openedWithin(own, inside)).toBe(true);
      expect(openedPath(escaped)).toBe(join(outside, "file"));
      expect(openedWithin(escaped, inside)).toBe(false);
    } finally {
      await own.close();
      await escaped.close();
    }
  });

  it("refuses a link as the last component when opening to read", async () => {
    await writeFile(join(base, "target"), "x");
    await symlink(join(base, "target"), join(base, "link"));
    await expect(open(join(base, "link"), OPEN_FLAGS.readFile)).rejects.toMatchObject({
      code: "ELOOP",
    });
  });

  it("tells a folder's own path from a sibling that shares its prefix", () => {
    expect(isInsideFolder("/data/skills/a/b", "/data/skills")).toBe(true);
    expect(isInsideFolder("/data/skills", "/data/skills")).toBe(false);
    expect(isInsideFolder("/data/skills-evil/a", "/data/skills")).toBe(false);
  });

  it("sees a file replaced after its lstat, even by one of the same size", async () => {
    const path = join(base, "f");
    await writeFile(path, "one");
    const seen = await lstat(path, { bigint: true });
    expect(isSameFile(await stat(path, { bigint: true }), seen)).toBe(true);
    await writeFile(join(base, "g"), "two");
    await rename(join(base, "g"), path);
    expect(isSameFile(await stat(path, { bigint: true }), seen)).toBe(false);
  });
});

describe("writeFileAtomically", () => {
  it("replaces a file's content and leaves no temp file", async () => {
    const target = join(base, "notes.md");
    await writeFile(target, "old");
    await writeFileAtomically(target, "new", { tempPrefix: ".t-", checkOpened: () => {} });
    expect(await readFile(target, "utf8")).toBe("new");
    expect(await readdir(base)).toEqual(["notes.md"]);
  });

  it("keeps the old content and removes the temp file when the check refuses", async () => {
    const target = join(base, "notes.md");
    await writeFile(target, "old");
    const refusal = new Error("outside");
    await expect(
      writeFileAtomically(target, "new", {
        tempPrefix: ".t-",
        checkOpened: () => {
          throw refusal;
        },
      }),
    ).rejects.toBe(refusal);
    expect(await readFile(target, "utf8")).toBe("old");
    expect(await readdir(base)).toEqual(["notes.md"]);
  });
});

describe("swapIntoPlace", () => {
  const replaceAll = { asidePrefix: ".old-", whenOccupied: () => "replace" as const };

  it("moves a staging folder to a missing target", async () => {
    const staging = await makeStagingFolder(base, ".staging-");
    await writeFile(join(staging, "file"), "new");
    await expect(swapIntoPlace(staging, join(base, "target"), replaceAll)).resolves.toBe(true);
    expect(await readFile(join(base, "target", "file"), "utf8")).toBe("new");
    expect(await readdir(base)).toEqual(["target"]);
  });

  it("replaces an old copy as a whole and deletes it", async () => {
    const target = await folderWith(join(base, "target"), "old");
    await writeFile(join(target, "only-old"), "x");
    const staging = await folderWith(hiddenName(base, ".staging-"), "new");
    await expect(swapIntoPlace(staging, target, replaceAll)).resolves.toBe(true);
    expect(await readdir(target)).toEqual(["file"]);
    expect(await readFile(join(target, "file"), "utf8")).toBe("new");
    expect(await readdir(base)).toEqual(["target"]);
  });

  it("leaves the old copy when the caller refuses or yields, and staging to the caller", async () => {
    const target = await folderWith(join(base, "target"), "old");
    const staging = await folderWith(hiddenName(base, ".staging-"), "new");
    const taken = new Error("taken");
    await expect(
      swapIntoPlace(staging, target, {
        asidePrefix: ".old-",
        whenOccupied: () => {
          throw taken;
        },
      }),
    ).rejects.toBe(taken);
    await expect(
      swapIntoPlace(staging, target, { asidePrefix: ".old-", whenOccupied: () => "yield" }),
    ).resolves.toBe(false);
    expect(await readFile(join(target, "file"), "utf8")).toBe("old");
    expect(await pathExists(staging)).toBe(true);
  });

  it("puts the old copy back when the swap fails", async () => {
    const target = await folderWith(join(base, "target"), "old");
    const vanished = join(base, ".staging-gone");
    await expect(swapIntoPlace(vanished, target, replaceAll)).rejects.toMatchObject({
      code: "ENOENT",
    });
    expect(await readFile(join(target, "file"), "utf8")).toBe("old");
    expect(await readdir(base)).toEqual(["target"]);
  });

  it("ends with one complete copy when concurrent calls race", async () => {
    const target = await folderWith(join(base, "target"), "old");
    const stagings = await Promise.all(
      Array.from({ length: 8 }, (_, index) =>
        folderWith(hiddenName(base, ".staging-"), `copy ${index}`),
      ),
    );
    const results = await Promise.all(
      stagings.map((staging) => swapIntoPlace(staging, target, replaceAll)),
    );
    expect(results).toEqual(stagings.map(() => true));
    expect(await readdir(target)).toEqual(["file"]);
    expect(await readFile(join(target, "file"), "utf8")).toMatch(/^copy \d$/);
    expect(await readdir(base)).toEqual(["target"]);
  });
});

describe("removeAtomically and pathExists", () => {
  it("removes a whole folder once, leaving nothing beside it", async () => {
    const target = await folderWith(join(base, "target"), "x");
    await expect(removeAtomically(target, ".trash-")).resolves.toBe(true);
    await expect(removeAtomically(target, ".trash-")).resolves.toBe(false);
    expect(await readdir(base)).toEqual([]);
  });

  it("counts a dangling link as something in the way", async () => {
    await symlink(join(base, "nowhere"), join(base, "dangling"));
    expect(await pathExists(join(base, "dangling"))).toBe(true);
    expect(await pathExists(join(base, "nowhere"))).toBe(false);
  });
});
