import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, readdir, readFile, rm, stat, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ErrorCode } from "../../errors.js";
import { parseSkillManifest } from "../../sandbox/skills/front-matter.js";
import { SkillLibrary } from "../../sandbox/skills/library.js";
import { materialiseSkills, SKILLS_MANIFEST_FILE } from "../../sandbox/skills/materialise.js";
import { SKILL_LIMITS } from "../../sandbox/skills/skill-limits.js";
import { assertSkillName } from "../../sandbox/skills/skill-name.js";
import { expectFailure } from "../agents/helpers.js";
import { settledFolder } from "../support/settled-folder.js";

function skillMd(name: string, description = `The ${name} skill.`, body = "Do the thing.\n") {
  return `---\nname: ${name}\ndescription: ${description}\n---\n${body}`;
}

/** Writes `files` (relative path → content) under `dir`, creating folders. */
async function writeTree(dir: string, files: Record<string, string>): Promise<void> {
  for (const [path, content] of Object.entries(files)) {
    const file = join(dir, path);
    await mkdir(join(file, ".."), { recursive: true });
    await writeFile(file, content);
  }
}

/** Every relative path under `dir` (folders end with "/"), sorted. */
async function treeOf(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .map((entry) => {
      const path = join(entry.parentPath, entry.name).slice(dir.length + 1);
      return entry.isDirectory() ? `${path}/` : path;
    })
    .sort();
}

describe("assertSkillName", () => {
  it("accepts valid names and refuses others with the field, value and pattern", () => {
    expect(() => assertSkillName("pdf-tools2", "name")).not.toThrow();
    for (const bad of ["", "-x", "Upper", "a/b", "..", ".hidden", "x".repeat(65)]) {
      let caught: unknown;
      try {
        assertSkillName(bad, "context.skills.0");
      } catch (error) {
        caught = error;
      }
      expect(caught).toMatchObject({ code: ErrorCode.InvalidSkill, field: "context.skills.0" });
      expect(String(caught)).toContain(JSON.stringify(bad));
      expect(String(caught)).toContain("[a-z0-9]");
    }
  });
});

describe("parseSkillManifest", () => {
  it("parses name, trimmed description and body; ignores other keys", () => {
    const manifest = parseSkillManifest(
      "---\nname: pdf\ndescription: '  Reads PDFs.  '\nlicense: MIT\n---\n# PDF\nUse it.\n",
      "test",
    );
    expect(manifest).toEqual({ name: "pdf", description: "Reads PDFs.", body: "# PDF\nUse it.\n" });
  });

  it("tolerates a BOM and CRLF line endings", () => {
    const manifest = parseSkillManifest(
      "\uFEFF---\r\nname: pdf\r\ndescription: Reads PDFs.\r\n---\r\nBody\r\n",
      "test",
    );
    expect(manifest).toEqual({ name: "pdf", description: "Reads PDFs.", body: "Body\n" });
  });

  it("refuses a file without front matter", async () => {
    const error = await expectFailure(
      () => parseSkillManifest("# Just markdown\n", "SKILL.md of x"),
      ErrorCode.InvalidSkill,
    );
    expect(error.message).toContain("SKILL.md of x");
    expect(error.message).toContain("no front matter");
  });

  it("refuses front matter without a closing line", async () => {
    const error = await expectFailure(
      () => parseSkillManifest("---\nname: x\ndescription: y\n", "src"),
      ErrorCode.InvalidSkill,
    );
    expect(error.message).toContain('closing "---"');
  });

  it("turns YAML errors into INVALID_SKILL naming the source", async () => {
    const error = await expectFailure(
      () => parseSkillManifest("---\nname: [unclosed\ndescription: y\n---\n", "SKILL.md of src"),
      ErrorCode.InvalidSkill,
    );
    expect(error.message).toContain("SKILL.md of src");
    expect(error.message).toContain("not valid YAML");
    expect(error.cause).toBeInstanceOf(Error);
  });

  it("refuses front matter that is not a mapping", async () => {
    await expectFailure(
      () => parseSkillManifest("---\n- a\n- b\n---\n", "src"),
      ErrorCode.InvalidSkill,
    );
  });

  it("refuses a missing or invalid name", async () => {
    const missing = await expectFailure(
      () => parseSkillManifest("---\ndescription: y\n---\n", "src"),
      ErrorCode.InvalidSkill,
      "name",
    );
    expect(missing.message).toContain('"name" is missing');
    const invalidName = await expectFailure(
      () => parseSkillManifest("---\nname: Bad Name\ndescription: y\n---\n", "src"),
      ErrorCode.InvalidSkill,
      "name",
    );
    expect(invalidName.message).toContain('"Bad Name"');
    await expectFailure(
      () => parseSkillManifest("---\nname: 42\ndescription: y\n---\n", "src"),
      ErrorCode.InvalidSkill,
      "name",
    );
  });

  it("refuses an empty, missing or too long description", async () => {
    for (const front of ["name: x\ndescription: '   '", "name: x", "name: x\ndescription: 3"]) {
      await expectFailure(
        () => parseSkillManifest(`---\n${front}\n---\n`, "src"),
        ErrorCode.InvalidSkill,
        "description",
      );
    }
    const long = await expectFailure(
      () => parseSkillManifest(`---\nname: x\ndescription: ${"d".repeat(1025)}\n---\n`, "src"),
      ErrorCode.InvalidSkill,
      "description",
    );
    expect(long.message).toContain("1025");
  });
});

describe("SkillLibrary", () => {
  let dir: string;
  let library: SkillLibrary;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "skills-lib-"));
    library = new SkillLibrary(join(dir, "data", "skills"));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  async function source(name: string, files: Record<string, string> = {}): Promise<string> {
    const folder = join(dir, "src", name);
    await writeTree(folder, { "SKILL.md": skillMd(name), ...files });
    return folder;
  }

  it("lists nothing before the library folder exists", async () => {
    expect(await library.list()).toEqual([]);
  });

  it("installs a folder with subfolders by copying it", async () => {
    const folder = await source("pdf", { "scripts/run.sh": "echo hi\n", "ref/a/b.txt": "b" });
    const summary = await library.install(folder);
    expect(summary).toMatchObject({ name: "pdf", description: "The pdf skill." });
    expect(summary.digest).toMatch(/^[0-9a-f]{64}$/);
    expect(await treeOf(library.hostPath("pdf"))).toEqual([
      "SKILL.md",
      "ref/",
      "ref/a/",
      "ref/a/b.txt",
      "scripts/",
      "scripts/run.sh",
    ]);
    expect(await readFile(join(library.hostPath("pdf"), "scripts/run.sh"), "utf8")).toBe(
      "echo hi\n",
    );
    expect(await library.list()).toEqual([summary]);
    expect(await library.get("pdf")).toEqual(summary);
    expect(await library.get("other")).toBeUndefined();
    // Only the skill itself is left in the library: no staging or trash folders.
    expect(await readdir(library.root)).toEqual(["pdf"]);
  });

  it("takes the name from the front matter, not the folder", async () => {
    const folder = join(dir, "src", "Some Folder");
    await writeTree(folder, { "SKILL.md": skillMd("renamed") });
    expect((await library.install(folder)).name).toBe("renamed");
    expect(await readdir(library.root)).toEqual(["renamed"]);
  });

  it("refuses a source without SKILL.md", async () => {
    const folder = join(dir, "src", "empty");
    await writeTree(folder, { "README.md": "hi" });
    const error = await expectFailure(library.install(folder), ErrorCode.InvalidSkill);
    expect(error.message).toContain("no SKILL.md");
    expect(await readdir(library.root)).toEqual([]);
  });

  it("refuses a symlink inside the source and leaves nothing behind", async () => {
    const existing = await library.install(await source("pdf"));
    const folder = await source("linked", { "data/real.txt": "x" });
    await writeFile(join(dir, "secret.txt"), "secret");
    await symlink(join(dir, "secret.txt"), join(folder, "data", "leak.txt"));
    const error = await expectFailure(library.install(folder), ErrorCode.InvalidSkill);
    expect(error.message).toContain('"data/leak.txt"');
    expect(error.message).toContain("symbolic link");
    expect(await readdir(library.root)).toEqual(["pdf"]);
    expect(await library.list()).toEqual([existing]);
  });

  it("refuses a FIFO inside the source without blocking on it", async () => {
    const folder = await source("piped");
    execFileSync("mkfifo", [join(folder, "pipe")]);
    const error = await expectFailure(library.install(folder), ErrorCode.InvalidSkill);
    expect(error.message).toContain('"pipe"');
    expect(error.message).toContain("FIFO");
  });

  it("refuses a source over the file limit", async () => {
    const files: Record<string, string> = {};
    for (let index = 0; index <= SKILL_LIMITS.maxFiles; index += 1) files[`f/${index}`] = "";
    const folder = await source("big", files);
    const error = await expectFailure(library.install(folder), ErrorCode.InvalidSkill);
    expect(error.message).toContain("more than 500 files");
    expect(await readdir(library.root).catch(() => [])).toEqual([]);
  });

  it("refuses to overwrite an installed skill unless replace is set", async () => {
    const first = await library.install(await source("pdf"));
    const second = join(dir, "src2");
    await writeTree(second, { "SKILL.md": skillMd("pdf", "Version two."), "new.txt": "new" });

    const error = await expectFailure(library.install(second), ErrorCode.Validation);
    expect(error.message).toBe(
      'skill "pdf" is already installed: pass replace: true (on the command line: --replace) to replace it',
    );
    expect(await library.get("pdf")).toEqual(first);

    const replaced = await library.install(second, { replace: true });
    expect(replaced.description).toBe("Version two.");
    expect(replaced.digest).not.toBe(first.digest);
    expect(await treeOf(library.hostPath("pdf"))).toEqual(["SKILL.md", "new.txt"]);
    expect(await readdir(library.root)).toEqual(["pdf"]);
  });

  it("installs from in-memory files", async () => {
    const summary = await library.installFiles({
      "SKILL.md": skillMd("mem"),
      "scripts/tool.py": "print(1)\n",
      "bin/data.bin": new Uint8Array([0, 1, 2]),
    });
    expect(summary.name).toBe("mem");
    expect(await treeOf(library.hostPath("mem"))).toEqual([
      "SKILL.md",
      "bin/",
      "bin/data.bin",
      "scripts/",
      "scripts/tool.py",
    ]);
    expect([...(await readFile(join(library.hostPath("mem"), "bin/data.bin")))]).toEqual([0, 1, 2]);
    expect(await readdir(library.root)).toEqual(["mem"]);
  });

  it("refuses in-memory paths that escape or are malformed", async () => {
    for (const bad of ["../x", "/abs", "a//b", "a/./b", "a\\b", "nul\0", "s\uD800", "x/"]) {
      const error = await expectFailure(
        library.installFiles({ "SKILL.md": skillMd("mem"), [bad]: "x" }),
        ErrorCode.InvalidSkill,
        "files",
      );
      expect(error.message).toContain(JSON.stringify(bad));
    }
    await expectFailure(
      library.installFiles({ "SKILL.md": skillMd("mem"), a: "file", "a/b": "nested" }),
      ErrorCode.InvalidSkill,
      "files",
    );
    expect(await readdir(dir)).toEqual([]);
    expect(await library.list()).toEqual([]);
  });

  it("refuses in-memory files with an invalid SKILL.md and cleans up", async () => {
    await expectFailure(
      library.installFiles({ "SKILL.md": "no front matter" }),
      ErrorCode.InvalidSkill,
    );
    expect(await readdir(library.root)).toEqual([]);
  });

  it("skips broken folders in list", async () => {
    const good = await library.installFiles({ "SKILL.md": skillMd("good") });
    await writeTree(library.root, {
      "broken/SKILL.md": "no front matter",
      "mismatch/SKILL.md": skillMd("other-name"),
      "nofile/README.md": "x",
      ".hidden/SKILL.md": skillMd("hidden"),
      "loose-file": "x",
    });
    await symlink(library.hostPath("good"), join(library.root, "linked"));
    expect(await library.list()).toEqual([good]);
    expect(await library.get("broken")).toBeUndefined();
    expect(await library.get("linked")).toBeUndefined();
  });

  it("changes the digest when any file changes, and only then", async () => {
    const before = await library.install(await source("pdf", { "deep/er/file.txt": "one" }));
    expect((await library.get("pdf"))?.digest).toBe(before.digest);

    await writeFile(join(library.hostPath("pdf"), "deep/er/file.txt"), "two");
    const changed = await library.get("pdf");
    expect(changed?.digest).not.toBe(before.digest);

    await writeFile(join(library.hostPath("pdf"), "deep/er/file.txt"), "one");
    expect((await library.get("pdf"))?.digest).toBe(before.digest);

    await writeFile(join(library.hostPath("pdf"), "added.txt"), "");
    expect((await library.get("pdf"))?.digest).not.toBe(before.digest);
  });

  it("removes skills", async () => {
    await library.install(await source("pdf"));
    expect(await library.remove("pdf")).toBe(true);
    expect(await library.remove("pdf")).toBe(false);
    expect(await readdir(library.root)).toEqual([]);
    await expectFailure(library.remove("../x"), ErrorCode.InvalidSkill, "name");
  });

  it("sees what another process installs, removes or edits by hand, also once its listing is kept", async () => {
    // Another process on the same data dir (the CLI beside a server): its own library object.
    const other = new SkillLibrary(library.root);
    const names = async () => (await library.list()).map((skill) => skill.name);
    expect(await names()).toEqual([]);
    await other.install(await source("pdf"));
    expect(await names()).toEqual(["pdf"]);
    // A listing is kept once the folder's change time is old enough to be trusted.
    await settledFolder(library.root);
    expect(await names()).toEqual(["pdf"]);
    await other.install(await source("docx"));
    expect(await names()).toEqual(["docx", "pdf"]);
    await settledFolder(library.root);
    expect(await names()).toEqual(["docx", "pdf"]);
    expect(await other.remove("pdf")).toBe(true);
    expect(await names()).toEqual(["docx"]);
    await settledFolder(library.root);
    expect(await names()).toEqual(["docx"]);
    // Copied in by hand, then edited in place.
    await writeTree(join(library.root, "csv"), { "SKILL.md": skillMd("csv") });
    expect(await names()).toEqual(["csv", "docx"]);
    await settledFolder(library.root);
    await writeFile(join(library.root, "csv", "SKILL.md"), skillMd("csv", "Edited by hand."));
    expect((await library.list()).find((skill) => skill.name === "csv")?.description).toBe(
      "Edited by hand.",
    );
  });

  describe("resolve", () => {
    beforeEach(async () => {
      for (const name of ["beta", "alpha", "gamma"]) {
        await library.installFiles({ "SKILL.md": skillMd(name) });
      }
    });

    it("gives every installed skill when the agent lists none", async () => {
      expect((await library.resolve(undefined, "helper")).map((skill) => skill.name)).toEqual([
        "alpha",
        "beta",
        "gamma",
      ]);
    });

    it("gives no skill for an empty list", async () => {
      expect(await library.resolve([], "helper")).toEqual([]);
    });

    it("gives exactly the listed skills, deduplicated, in order", async () => {
      const skills = await library.resolve(["gamma", "alpha", "gamma"], "helper");
      expect(skills.map((skill) => skill.name)).toEqual(["gamma", "alpha"]);
      expect(skills[0]).toEqual(await library.get("gamma"));
    });

    it("refuses unknown names, naming the agent, the unknown and the installed skills", async () => {
      const error = await expectFailure(
        library.resolve(["alpha", "nope", "Bad/Name"], "helper"),
        ErrorCode.UnknownSkill,
        "context.skills",
      );
      expect(error.message).toContain('agent "helper"');
      expect(error.message).toContain('"nope", "Bad/Name"');
      expect(error.message).toContain('installed skills: "alpha", "beta", "gamma"');
    });
  });
});

describe("materialiseSkills", () => {
  let dir: string;
  let library: SkillLibrary;
  let scope: string;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "skills-mat-"));
    library = new SkillLibrary(join(dir, "skills"));
    scope = join(dir, "threads", "t1", "skills");
    await library.installFiles({ "SKILL.md": skillMd("alpha"), "lib/a.txt": "a" });
    await library.installFiles({ "SKILL.md": skillMd("beta"), "b.txt": "b" });
    await library.installFiles({ "SKILL.md": skillMd("gamma") });
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  async function manifest(): Promise<unknown> {
    return JSON.parse(await readFile(join(scope, SKILLS_MANIFEST_FILE), "utf8"));
  }

  it("copies exactly the wanted skills and writes the manifest", async () => {
    const skills = await library.resolve(["beta", "alpha"], "helper");
    await materialiseSkills(library, skills, scope);
    expect(await treeOf(scope)).toEqual([
      SKILLS_MANIFEST_FILE,
      "alpha/",
      "alpha/SKILL.md",
      "alpha/lib/",
      "alpha/lib/a.txt",
      "beta/",
      "beta/SKILL.md",
      "beta/b.txt",
    ]);
    expect(await readFile(join(scope, "alpha/lib/a.txt"), "utf8")).toBe("a");
    expect(await manifest()).toEqual(
      [...skills]
        .sort((a, b) => a.name.localeCompare(b.name))
        .map(({ name, digest }) => ({ name, digest })),
    );
    // Copies, not links: a file in the scope is a different inode from the library's.
    const copy = await stat(join(scope, "alpha/SKILL.md"));
    const original = await stat(join(library.hostPath("alpha"), "SKILL.md"));
    expect(copy.ino).not.toBe(original.ino);
    // No staging or old folders are left next to the scope.
    expect(await readdir(join(dir, "threads", "t1"))).toEqual(["skills"]);
  });

  it("does nothing when the manifest already matches", async () => {
    const skills = await library.resolve(undefined, "helper");
    await materialiseSkills(library, skills, scope);
    const before = await stat(join(scope, SKILLS_MANIFEST_FILE));
    await materialiseSkills(library, [...skills].reverse(), scope);
    const after = await stat(join(scope, SKILLS_MANIFEST_FILE));
    expect(after.ino).toBe(before.ino);
  });

  it("drops a skill that is no longer wanted and picks up changes", async () => {
    await materialiseSkills(library, await library.resolve(undefined, "helper"), scope);
    await writeFile(join(library.hostPath("alpha"), "lib/a.txt"), "changed");
    await materialiseSkills(library, await library.resolve(["alpha", "gamma"], "helper"), scope);
    expect(await readdir(scope)).toEqual(expect.arrayContaining(["alpha", "gamma"]));
    expect((await readdir(scope)).sort()).toEqual([SKILLS_MANIFEST_FILE, "alpha", "gamma"]);
    expect(await readFile(join(scope, "alpha/lib/a.txt"), "utf8")).toBe("changed");

    await materialiseSkills(library, [], scope);
    expect(await readdir(scope)).toEqual([SKILLS_MANIFEST_FILE]);
    expect(await manifest()).toEqual([]);
  });

  it("refuses a symlink planted in the library and keeps the old scope", async () => {
    const skills = await library.resolve(["alpha"], "helper");
    await materialiseSkills(library, await library.resolve(["beta"], "helper"), scope);
    await writeFile(join(dir, "secret.txt"), "secret");
    await symlink(join(dir, "secret.txt"), join(library.hostPath("alpha"), "lib", "leak.txt"));

    const error = await expectFailure(
      materialiseSkills(library, skills, scope),
      ErrorCode.InvalidSkill,
    );
    expect(error.message).toContain('"lib/leak.txt"');
    expect((await readdir(scope)).sort()).toEqual([SKILLS_MANIFEST_FILE, "beta"]);
    expect(await readdir(join(dir, "threads", "t1"))).toEqual(["skills"]);
  });

  it("reports a skill removed from the library since it was resolved", async () => {
    const skills = await library.resolve(["gamma"], "helper");
    await library.remove("gamma");
    await expectFailure(materialiseSkills(library, skills, scope), ErrorCode.UnknownSkill);
    expect(await readdir(join(dir, "threads", "t1"))).toEqual([]);
  });

  it("leaves one complete copy after concurrent calls", async () => {
    const all = await library.resolve(undefined, "helper");
    const two = await library.resolve(["alpha", "beta"], "helper");
    await Promise.all([
      materialiseSkills(library, all, scope),
      materialiseSkills(library, two, scope),
      materialiseSkills(library, all, scope),
      materialiseSkills(library, two, scope),
      materialiseSkills(library, all, scope),
    ]);
    const names = (await manifest()) as { name: string }[];
    const expected = names.length === 3 ? ["alpha", "beta", "gamma"] : ["alpha", "beta"];
    expect(names.map((entry) => entry.name)).toEqual(expected);
    const tree = await treeOf(scope);
    expect(tree).toEqual(
      [
        SKILLS_MANIFEST_FILE,
        "alpha/",
        "alpha/SKILL.md",
        "alpha/lib/",
        "alpha/lib/a.txt",
        "beta/",
        "beta/SKILL.md",
        "beta/b.txt",
        ...(expected.includes("gamma") ? ["gamma/", "gamma/SKILL.md"] : []),
      ].sort(),
    );
    expect(await readdir(join(dir, "threads", "t1"))).toEqual(["skills"]);
  });

  it("leaves one complete copy after concurrent identical calls", async () => {
    const all = await library.resolve(undefined, "helper");
    await Promise.all(Array.from({ length: 5 }, () => materialiseSkills(library, all, scope)));
    expect((await readdir(scope)).sort()).toEqual([SKILLS_MANIFEST_FILE, "alpha", "beta", "gamma"]);
    expect(await readFile(join(scope, "beta/b.txt"), "utf8")).toBe("b");
    expect(await readdir(join(dir, "threads", "t1"))).toEqual(["skills"]);
  });
});
