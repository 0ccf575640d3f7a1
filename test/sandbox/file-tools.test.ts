/**
 * The six file tools as a model uses them: what each returns for ordinary calls, the windows and
 * caps they apply, their refusals of read-only folders, which folders each context shares, and
 * writes racing each other.
 */
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ToolMessage } from "@langchain/core/messages";
import type { StructuredToolInterface } from "@langchain/core/tools";
import { afterEach, describe, expect, it } from "vitest";
import { SandboxLayout } from "../../sandbox/layout.js";
import { DEFAULT_FILE_TOOL_LIMITS, type FileToolLimits } from "../../sandbox/limits.js";
import { PathRule } from "../../sandbox/refusal.js";
import { TEMP_PREFIX } from "../../sandbox/safe-fs.js";
import { createFileTools } from "../../sandbox/tools/file-tools.js";
import { VirtualRoot } from "../../sandbox/virtual-paths.js";

const ALICE = { uid: "alice", thread_id: "t1" };
const WS = VirtualRoot.workspace;

let roots: string[] = [];

afterEach(() => {
  for (const root of roots) rmSync(root, { recursive: true, force: true });
  roots = [];
});

interface Sandbox {
  dataDir: string;
  layout: SandboxLayout;
  /** Host folders of alice's scope in thread t1. */
  workspace: string;
  uploads: string;
  outputs: string;
  skills: string;
  call(name: string, args: Record<string, unknown>, context?: object): Promise<ToolMessage>;
}

function sandbox(limits: Partial<FileToolLimits> = {}): Sandbox {
  const dataDir = realpathSync(mkdtempSync(join(tmpdir(), "sg-file-tools-")));
  roots.push(dataDir);
  const layout = new SandboxLayout(dataDir);
  const tools = new Map<string, StructuredToolInterface>(
    createFileTools(layout, { ...DEFAULT_FILE_TOOL_LIMITS, ...limits }).map((t) => [t.name, t]),
  );
  return {
    dataDir,
    layout,
    workspace: layout.workspace("alice"),
    uploads: layout.uploads("t1"),
    outputs: layout.outputs("t1"),
    skills: layout.skillsScope("t1"),
    async call(name, args, context = ALICE) {
      const tool = tools.get(name);
      if (!tool) throw new Error(`no tool ${name}`);
      return (await tool.invoke(
        { type: "tool_call", id: "call-1", name, args },
        { context },
      )) as ToolMessage;
    },
  };
}

/** Writes a host file, creating its folders. */
function put(path: string, content: string | Uint8Array): void {
  mkdirSync(join(path, ".."), { recursive: true });
  writeFileSync(path, content);
}

function text(message: ToolMessage): string {
  return typeof message.content === "string" ? message.content : JSON.stringify(message.content);
}

function expectOk(message: ToolMessage): string {
  expect(message.status, text(message)).toBe("success");
  return text(message);
}

function expectError(message: ToolMessage, tool: string, fragment: string): void {
  expect(message.status).toBe("error");
  expect(text(message).startsWith(`${tool} failed: `), text(message)).toBe(true);
  expect(text(message)).toContain(fragment);
  expect(message.artifact).toBeUndefined();
}

function expectRefused(message: ToolMessage, tool: string, rule: PathRule): void {
  expectError(message, tool, `${tool} failed: path refused (${rule}):`);
}

describe("ls", () => {
  it("lists the virtual folders above the mounts, by default /home/gem/user-data", async () => {
    const box = sandbox();
    const userData = [
      "/home/gem/user-data (3 entries)",
      "dir   /home/gem/user-data/outputs/",
      "dir   /home/gem/user-data/uploads/",
      "dir   /home/gem/user-data/workspace/",
    ].join("\n");
    expect(expectOk(await box.call("ls", { path: "/home/gem/user-data" }))).toBe(userData);
    expect(expectOk(await box.call("ls", {}))).toBe(userData);
    expect(expectOk(await box.call("ls", { path: "/home/gem" }))).toBe(
      "/home/gem (2 entries)\ndir   /home/gem/skills/\ndir   /home/gem/user-data/",
    );
    expect(expectOk(await box.call("ls", { path: "/" }))).toBe("/ (1 entries)\ndir   /home/");
  });

  it("lists a folder: folders first, sizes, in-scope links with their target, temp files hidden", async () => {
    const box = sandbox();
    put(join(box.workspace, "b.txt"), "abc");
    put(join(box.workspace, "big.txt"), "x".repeat(2048));
    put(join(box.workspace, ".hidden"), "");
    mkdirSync(join(box.workspace, "a-dir"));
    mkdirSync(join(box.workspace, "z-dir"));
    symlinkSync("b.txt", join(box.workspace, "link-file"));
    symlinkSync("a-dir", join(box.workspace, "link-dir"));
    put(join(box.outputs, "out.txt"), "12345");
    symlinkSync(join(box.outputs, "out.txt"), join(box.workspace, "link-out"));
    put(join(box.workspace, `${TEMP_PREFIX}0123456789abcdef`), "half-written");

    const lines = expectOk(await box.call("ls", { path: WS })).split("\n");
    expect(lines[0]).toBe(`${WS} (8 entries)`);
    expect(lines.slice(1, 4)).toEqual([
      `dir   ${WS}/a-dir/`,
      `dir   ${WS}/link-dir/  (link to ${WS}/a-dir)`,
      `dir   ${WS}/z-dir/`,
    ]);
    expect(lines.slice(4).sort()).toEqual(
      [
        `file  ${WS}/.hidden  (0 B)`,
        `file  ${WS}/b.txt  (3 B)`,
        `file  ${WS}/big.txt  (2.0 KiB)`,
        `file  ${WS}/link-file  (link to ${WS}/b.txt, 3 B)`,
        `file  ${WS}/link-out  (link to ${VirtualRoot.outputs}/out.txt, 5 B)`,
      ].sort(),
    );
    expect(lines.join("\n")).not.toContain(TEMP_PREFIX);
  });

  it("reports an empty folder, refuses a file, and reports a missing folder", async () => {
    const box = sandbox();
    mkdirSync(join(box.workspace, "empty"), { recursive: true });
    put(join(box.workspace, "f.txt"), "x");
    expect(expectOk(await box.call("ls", { path: "empty" }))).toBe(
      `${WS}/empty (0 entries): empty`,
    );
    expectRefused(await box.call("ls", { path: "f.txt" }), "ls", PathRule.NotADirectory);
    expectError(
      await box.call("ls", { path: "nope" }),
      "ls",
      `no such file or folder: "${WS}/nope"`,
    );
  });
});

describe("read_file", () => {
  it("returns numbered lines (LF and CRLF)", async () => {
    const box = sandbox();
    put(join(box.workspace, "a.txt"), "alpha\nbeta\r\ngamma\n");
    expect(expectOk(await box.call("read_file", { path: "a.txt" }))).toBe(
      "     1\talpha\n     2\tbeta\n     3\tgamma",
    );
    // The same file by its absolute virtual path.
    expect(expectOk(await box.call("read_file", { path: `${WS}/a.txt` }))).toContain(
      "     3\tgamma",
    );
  });

  it("returns a window with offset and limit, and says how to read on", async () => {
    const box = sandbox();
    const ten = Array.from({ length: 10 }, (_, i) => `line ${i + 1}`).join("\n");
    put(join(box.workspace, "ten.txt"), `${ten}\n`);
    expect(expectOk(await box.call("read_file", { path: "ten.txt", offset: 3, limit: 2 }))).toBe(
      "     3\tline 3\n     4\tline 4\n(lines 3-4 of 10; read on with offset=5)",
    );
    // A window reaching the end has no footer.
    expect(expectOk(await box.call("read_file", { path: "ten.txt", offset: 9, limit: 5 }))).toBe(
      "     9\tline 9\n    10\tline 10",
    );
    expectError(
      await box.call("read_file", { path: "ten.txt", offset: 11 }),
      "read_file",
      `offset 11 is past the end of "${WS}/ten.txt", which has 10 lines`,
    );
  });

  it("returns at most readLines lines when no limit is given", async () => {
    const box = sandbox({ readLines: 3 });
    put(join(box.workspace, "five.txt"), "1\n2\n3\n4\n5\n");
    expect(expectOk(await box.call("read_file", { path: "five.txt" }))).toBe(
      "     1\t1\n     2\t2\n     3\t3\n(lines 1-3 of 5; read on with offset=4)",
    );
  });

  it("says a file is empty", async () => {
    const box = sandbox();
    put(join(box.workspace, "empty.txt"), "");
    expect(expectOk(await box.call("read_file", { path: "empty.txt" }))).toBe(
      `${WS}/empty.txt is empty.`,
    );
  });

  it("refuses binary files: a NUL byte, or bytes that are not UTF-8", async () => {
    const box = sandbox();
    put(join(box.workspace, "nul.bin"), Buffer.from("text\u0000more"));
    put(join(box.workspace, "latin1.txt"), Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a]));
    for (const name of ["nul.bin", "latin1.txt"]) {
      expectError(
        await box.call("read_file", { path: name }),
        "read_file",
        `"${WS}/${name}" is a binary file`,
      );
    }
  });

  it("refuses a file over maxReadBytes", async () => {
    const box = sandbox({ maxReadBytes: 100 });
    put(join(box.workspace, "ok.txt"), "x".repeat(100));
    put(join(box.workspace, "big.txt"), "x".repeat(101));
    expectOk(await box.call("read_file", { path: "ok.txt" }));
    expectError(
      await box.call("read_file", { path: "big.txt" }),
      "read_file",
      `"${WS}/big.txt" is 101 B, over the 100 B limit`,
    );
  });

  it("cuts a long line with a marker", async () => {
    const box = sandbox();
    put(join(box.workspace, "long.txt"), `${"x".repeat(2500)}\nshort\n`);
    expect(expectOk(await box.call("read_file", { path: "long.txt" }))).toBe(
      `     1\t${"x".repeat(2000)}… [500 more characters]\n     2\tshort`,
    );
  });

  it("reads uploads and skills, and reports a missing file", async () => {
    const box = sandbox();
    put(join(box.uploads, "in.csv"), "a,b\n");
    put(join(box.skills, "demo", "SKILL.md"), "# Demo\n");
    expect(expectOk(await box.call("read_file", { path: `${VirtualRoot.uploads}/in.csv` }))).toBe(
      "     1\ta,b",
    );
    expect(
      expectOk(await box.call("read_file", { path: `${VirtualRoot.skills}/demo/SKILL.md` })),
    ).toBe("     1\t# Demo");
    expectError(
      await box.call("read_file", { path: "missing.txt" }),
      "read_file",
      `no such file or folder: "${WS}/missing.txt"`,
    );
  });
});

describe("write_file", () => {
  it("creates nested folders, then replaces, with a file_write artifact", async () => {
    const box = sandbox();
    const created = await box.call("write_file", { path: "deep/er/x.txt", content: "hello" });
    expect(expectOk(created)).toBe(`created ${WS}/deep/er/x.txt (5 bytes)`);
    expect(created.artifact).toEqual({ kind: "file_write", path: `${WS}/deep/er/x.txt` });
    expect(readFileSync(join(box.workspace, "deep", "er", "x.txt"), "utf8")).toBe("hello");

    const replaced = await box.call("write_file", { path: `${WS}/deep/er/x.txt`, content: "€" });
    expect(expectOk(replaced)).toBe(`replaced ${WS}/deep/er/x.txt (3 bytes)`);
    expect(replaced.artifact).toEqual({ kind: "file_write", path: `${WS}/deep/er/x.txt` });
    expect(readFileSync(join(box.workspace, "deep", "er", "x.txt"), "utf8")).toBe("€");

    const output = await box.call("write_file", {
      path: `${VirtualRoot.outputs}/report.md`,
      content: "# Report\n",
    });
    expect(output.artifact).toEqual({
      kind: "file_write",
      path: `${VirtualRoot.outputs}/report.md`,
    });
    expect(readFileSync(join(box.outputs, "report.md"), "utf8")).toBe("# Report\n");
  });

  it("refuses uploads and skills (read-only), also through an in-scope link", async () => {
    const box = sandbox();
    put(join(box.uploads, "in.txt"), "original");
    put(join(box.skills, "demo", "SKILL.md"), "original");
    mkdirSync(box.workspace, { recursive: true });
    symlinkSync(box.uploads, join(box.workspace, "to-uploads"));
    for (const path of [
      `${VirtualRoot.uploads}/in.txt`,
      `${VirtualRoot.uploads}/new.txt`,
      `${VirtualRoot.skills}/demo/SKILL.md`,
      `${VirtualRoot.skills}/new/SKILL.md`,
      "to-uploads/in.txt",
      "to-uploads/new.txt",
      VirtualRoot.userData,
    ]) {
      expectRefused(
        await box.call("write_file", { path, content: "changed" }),
        "write_file",
        PathRule.ReadOnly,
      );
    }
    expect(readFileSync(join(box.uploads, "in.txt"), "utf8")).toBe("original");
    expect(readFileSync(join(box.skills, "demo", "SKILL.md"), "utf8")).toBe("original");
    expect(readdirSync(box.uploads)).toEqual(["in.txt"]);
    expect(readdirSync(box.skills)).toEqual(["demo"]);
  });

  it("refuses to write onto a folder", async () => {
    const box = sandbox();
    mkdirSync(join(box.workspace, "sub"), { recursive: true });
    expectRefused(
      await box.call("write_file", { path: "sub", content: "x" }),
      "write_file",
      PathRule.NotRegularFile,
    );
    expectRefused(
      await box.call("write_file", { path: WS, content: "x" }),
      "write_file",
      PathRule.NotRegularFile,
    );
    expect(readdirSync(join(box.workspace, "sub"))).toEqual([]);
  });

  it("refuses content over maxWriteBytes, counted in UTF-8 bytes", async () => {
    const box = sandbox({ maxWriteBytes: 100 });
    expectOk(await box.call("write_file", { path: "ok.txt", content: "x".repeat(100) }));
    expectError(
      await box.call("write_file", { path: "big.txt", content: "x".repeat(101) }),
      "write_file",
      "is 101 B, over the 100 B limit",
    );
    // 34 characters, 102 bytes.
    expectError(
      await box.call("write_file", { path: "euro.txt", content: "€".repeat(34) }),
      "write_file",
      "is 102 B, over the 100 B limit",
    );
    expect(readdirSync(box.workspace)).toEqual(["ok.txt"]);
  });
});

describe("edit_file", () => {
  it("replaces one exact occurrence, with a file_write artifact", async () => {
    const box = sandbox();
    put(join(box.workspace, "a.txt"), "one two three\n");
    const edited = await box.call("edit_file", {
      path: "a.txt",
      old_string: "two",
      new_string: "2",
    });
    expect(expectOk(edited)).toBe(`replaced 1 occurrence in ${WS}/a.txt`);
    expect(edited.artifact).toEqual({ kind: "file_write", path: `${WS}/a.txt` });
    expect(readFileSync(join(box.workspace, "a.txt"), "utf8")).toBe("one 2 three\n");
  });

  it("refuses text that is not found, or not unique without replace_all", async () => {
    const box = sandbox();
    put(join(box.workspace, "a.txt"), "x = 1\nx = 1\n");
    expectError(
      await box.call("edit_file", { path: "a.txt", old_string: "y = 1", new_string: "y = 2" }),
      "edit_file",
      `old_string was not found in "${WS}/a.txt"`,
    );
    expectError(
      await box.call("edit_file", { path: "a.txt", old_string: "x = 1", new_string: "x = 2" }),
      "edit_file",
      `old_string occurs 2 times in "${WS}/a.txt"`,
    );
    expect(readFileSync(join(box.workspace, "a.txt"), "utf8")).toBe("x = 1\nx = 1\n");

    const all = await box.call("edit_file", {
      path: "a.txt",
      old_string: "x = 1",
      new_string: "x = 2",
      replace_all: true,
    });
    expect(expectOk(all)).toBe(`replaced 2 occurrences in ${WS}/a.txt`);
    expect(readFileSync(join(box.workspace, "a.txt"), "utf8")).toBe("x = 2\nx = 2\n");
  });

  it("refuses an empty old_string and identical strings", async () => {
    const box = sandbox();
    put(join(box.workspace, "a.txt"), "abc\n");
    expectError(
      await box.call("edit_file", { path: "a.txt", old_string: "", new_string: "x" }),
      "edit_file",
      "old_string is empty",
    );
    expectError(
      await box.call("edit_file", { path: "a.txt", old_string: "abc", new_string: "abc" }),
      "edit_file",
      "old_string and new_string are the same",
    );
    expect(readFileSync(join(box.workspace, "a.txt"), "utf8")).toBe("abc\n");
  });

  it("refuses uploads (read-only) and binary files", async () => {
    const box = sandbox();
    put(join(box.uploads, "in.txt"), "abc\n");
    put(join(box.workspace, "bin.dat"), Buffer.from("abc\u0000"));
    expectRefused(
      await box.call("edit_file", {
        path: `${VirtualRoot.uploads}/in.txt`,
        old_string: "abc",
        new_string: "x",
      }),
      "edit_file",
      PathRule.ReadOnly,
    );
    expect(readFileSync(join(box.uploads, "in.txt"), "utf8")).toBe("abc\n");
    expectError(
      await box.call("edit_file", { path: "bin.dat", old_string: "abc", new_string: "x" }),
      "edit_file",
      "is a binary file",
    );
  });
});

describe("glob", () => {
  function seed(box: Sandbox): void {
    for (const path of ["a.md", ".notes.md", "x.txt", "docs/b.md", "docs/sub/c.md", "docs/d.txt"]) {
      put(join(box.workspace, path), path);
    }
    put(join(box.workspace, "docs", `${TEMP_PREFIX}0123456789abcdef`), "half");
  }

  it("matches **/*.md at any depth, dot files included, temp files hidden", async () => {
    const box = sandbox();
    seed(box);
    expect(expectOk(await box.call("glob", { pattern: "**/*.md" })).split("\n")).toEqual([
      `${WS}/.notes.md`,
      `${WS}/a.md`,
      `${WS}/docs/b.md`,
      `${WS}/docs/sub/c.md`,
    ]);
    expect(expectOk(await box.call("glob", { pattern: "**/*" }))).not.toContain(TEMP_PREFIX);
  });

  it("starts from a static prefix, or from path", async () => {
    const box = sandbox();
    seed(box);
    expect(expectOk(await box.call("glob", { pattern: "docs/*.md" }))).toBe(`${WS}/docs/b.md`);
    expect(expectOk(await box.call("glob", { pattern: "*.md", path: `${WS}/docs` }))).toBe(
      `${WS}/docs/b.md`,
    );
    put(join(box.uploads, "in.csv"), "a");
    expect(
      expectOk(await box.call("glob", { pattern: "**/*.csv", path: VirtualRoot.uploads })),
    ).toBe(`${VirtualRoot.uploads}/in.csv`);
  });

  it("treats a pattern without wildcards as one file name", async () => {
    const box = sandbox();
    seed(box);
    expect(expectOk(await box.call("glob", { pattern: "docs/sub/c.md" }))).toBe(
      `${WS}/docs/sub/c.md`,
    );
    expect(expectOk(await box.call("glob", { pattern: "docs/nope.md" }))).toBe(
      `no files under ${WS} match "docs/nope.md"`,
    );
  });

  it("caps the results and says how many more matched", async () => {
    const box = sandbox({ globResults: 3 });
    for (const n of [1, 2, 3, 4, 5]) put(join(box.workspace, `f${n}.txt`), "x");
    expect(expectOk(await box.call("glob", { pattern: "*.txt" })).split("\n")).toEqual([
      `${WS}/f1.txt`,
      `${WS}/f2.txt`,
      `${WS}/f3.txt`,
      "… 2 more matches not shown (limit 3): narrow the pattern",
    ]);
  });

  it("refuses a file as path", async () => {
    const box = sandbox();
    seed(box);
    expectRefused(
      await box.call("glob", { pattern: "*", path: "a.md" }),
      "glob",
      PathRule.NotADirectory,
    );
  });
});

describe("grep", () => {
  it("returns matching lines as path:line: text, with a summary", async () => {
    const box = sandbox();
    put(join(box.workspace, "a.txt"), "foo\nfoooo\nbar\nFOO\n");
    put(join(box.workspace, "b.txt"), "xfoo\n");
    expect(expectOk(await box.call("grep", { pattern: "^fo+$" })).split("\n")).toEqual([
      `${WS}/a.txt:1: foo`,
      `${WS}/a.txt:2: foooo`,
      "(2 matching lines in 2 files searched)",
    ]);
    expect(
      expectOk(await box.call("grep", { pattern: "^foo$", ignore_case: true })).split("\n"),
    ).toEqual([
      `${WS}/a.txt:1: foo`,
      `${WS}/a.txt:4: FOO`,
      "(2 matching lines in 2 files searched)",
    ]);
    expect(expectOk(await box.call("grep", { pattern: "nothing-like-this" }))).toBe(
      'no matches for "nothing-like-this" (0 matching lines in 2 files searched)',
    );
  });

  it("searches literal text with fixed_strings, regex metacharacters included", async () => {
    const box = sandbox();
    put(join(box.workspace, "c.txt"), "call a.b(c)* here\naXb\na-bccc\n");
    expect(
      expectOk(await box.call("grep", { pattern: "a.b(c)*", fixed_strings: true })).split("\n"),
    ).toEqual([`${WS}/c.txt:1: call a.b(c)* here`, "(1 matching lines in 1 files searched)"]);
    // As a regular expression the same text matches all three lines.
    expect(expectOk(await box.call("grep", { pattern: "a.b(c)*" }))).toContain(
      "(3 matching lines in 1 files searched)",
    );
  });

  it("reports an invalid regular expression", async () => {
    const box = sandbox();
    expectError(
      await box.call("grep", { pattern: "(unclosed" }),
      "grep",
      'pattern "(unclosed" is not a valid RE2 regular expression',
    );
  });

  it("filters files with glob, and searches one file named as path", async () => {
    const box = sandbox();
    put(join(box.workspace, "src", "a.ts"), "const hit = 1;\n");
    put(join(box.workspace, "src", "deep", "b.ts"), "hit();\n");
    put(join(box.workspace, "src", "c.js"), "hit();\n");
    put(join(box.workspace, "notes.md"), "hit\n");
    expect(
      expectOk(await box.call("grep", { pattern: "hit", glob: "**/*.ts" })).split("\n"),
    ).toEqual([
      `${WS}/src/a.ts:1: const hit = 1;`,
      `${WS}/src/deep/b.ts:1: hit();`,
      "(2 matching lines in 2 files searched)",
    ]);
    expect(
      expectOk(await box.call("grep", { pattern: "hit", path: `${WS}/notes.md` })).split("\n"),
    ).toEqual([`${WS}/notes.md:1: hit`, "(1 matching lines in 1 files searched)"]);
    expect(
      expectOk(await box.call("grep", { pattern: "hit", path: "src", glob: "*.js" })).split("\n"),
    ).toEqual([`${WS}/src/c.js:1: hit();`, "(1 matching lines in 1 files searched)"]);
  });

  it("skips and counts binary files and files over grepFileBytes", async () => {
    const box = sandbox({ grepFileBytes: 50 });
    put(join(box.workspace, "small.txt"), "needle\n");
    put(join(box.workspace, "large.txt"), `needle\n${"x".repeat(60)}\n`);
    put(join(box.workspace, "nul.bin"), Buffer.from("needle\u0000\n"));
    put(join(box.workspace, "latin1.txt"), Buffer.from([0x6e, 0x65, 0x65, 0x64, 0x6c, 0x65, 0xe9]));
    expect(expectOk(await box.call("grep", { pattern: "needle" })).split("\n")).toEqual([
      `${WS}/small.txt:1: needle`,
      "(1 matching lines in 4 files searched; 1 files over the size limit skipped; 2 binary files skipped)",
    ]);
  });

  it("stops at grepMatches", async () => {
    const box = sandbox({ grepMatches: 3 });
    put(join(box.workspace, "many.txt"), "hit 1\nhit 2\nhit 3\nhit 4\nhit 5\n");
    expect(expectOk(await box.call("grep", { pattern: "hit" })).split("\n")).toEqual([
      `${WS}/many.txt:1: hit 1`,
      `${WS}/many.txt:2: hit 2`,
      `${WS}/many.txt:3: hit 3`,
      "(3 matching lines in 1 files searched; stopped at 3 matches: narrow the pattern or path)",
    ]);
  });
});

describe("run context", () => {
  it("answers a call without uid (or with a bad id) with an error ToolMessage", async () => {
    const box = sandbox();
    for (const context of [{ thread_id: "t1" }, { uid: "alice" }, {}]) {
      for (const [name, args] of [
        ["ls", {}],
        ["read_file", { path: "a.txt" }],
        ["write_file", { path: "a.txt", content: "x" }],
        ["glob", { pattern: "*" }],
        ["grep", { pattern: "x" }],
      ] as const) {
        const message = await box.call(name, args, context);
        expectError(message, name, "file tools need the run's context { uid, thread_id }");
        expect(message.tool_call_id).toBe("call-1");
      }
    }
    for (const context of [
      { uid: "../bob", thread_id: "t1" },
      { uid: "alice", thread_id: ".." },
      { uid: "alice", thread_id: "t1", file_thread_id: "a/b" },
    ]) {
      const message = await box.call("write_file", { path: "a.txt", content: "x" }, context);
      expect(message.status).toBe("error");
      expect(text(message)).toMatch(/^write_file failed: (uid|thread_id) ".*" (is empty|contains)/);
    }
    // Nothing was created for any of those calls.
    expect(existsSync(join(box.dataDir, "users"))).toBe(false);
    expect(existsSync(join(box.dataDir, "threads"))).toBe(false);
  });

  it("shares uploads and outputs across threads with one file_thread_id; workspaces are per uid", async () => {
    const box = sandbox();
    const parent = { uid: "alice", thread_id: "main" };
    const child = { uid: "alice", thread_id: "child-1", file_thread_id: "main" };
    const other = { uid: "alice", thread_id: "other" };
    put(join(box.layout.uploads("main"), "in.txt"), "uploaded\n");

    expectOk(
      await box.call(
        "write_file",
        { path: `${VirtualRoot.outputs}/r.txt`, content: "done\n" },
        child,
      ),
    );
    expect(readFileSync(join(box.layout.outputs("main"), "r.txt"), "utf8")).toBe("done\n");
    expect(
      expectOk(await box.call("read_file", { path: `${VirtualRoot.outputs}/r.txt` }, parent)),
    ).toBe("     1\tdone");
    expect(
      expectOk(await box.call("read_file", { path: `${VirtualRoot.uploads}/in.txt` }, child)),
    ).toBe("     1\tuploaded");
    // Another thread without file_thread_id has its own uploads and outputs...
    expectError(
      await box.call("read_file", { path: `${VirtualRoot.outputs}/r.txt` }, other),
      "read_file",
      "no such file or folder",
    );
    expectError(
      await box.call("read_file", { path: `${VirtualRoot.uploads}/in.txt` }, other),
      "read_file",
      "no such file or folder",
    );
    // ...but the same workspace, which belongs to the user.
    expectOk(await box.call("write_file", { path: "mine.txt", content: "alice's\n" }, parent));
    expect(expectOk(await box.call("read_file", { path: "mine.txt" }, other))).toBe(
      "     1\talice's",
    );
    // skills_thread_id picks the skills scope.
    put(join(box.layout.skillsScope("skills-of-child"), "s", "SKILL.md"), "child skill\n");
    expect(
      expectOk(
        await box.call(
          "read_file",
          { path: `${VirtualRoot.skills}/s/SKILL.md` },
          { ...child, skills_thread_id: "skills-of-child" },
        ),
      ),
    ).toBe("     1\tchild skill");
    expectError(
      await box.call("read_file", { path: `${VirtualRoot.skills}/s/SKILL.md` }, child),
      "read_file",
      "no such file or folder",
    );
  });

  it("keeps bob out of alice's workspace through every tool, even on a shared file thread", async () => {
    const box = sandbox();
    const alice = { uid: "alice", thread_id: "main" };
    const bob = { uid: "bob", thread_id: "bob-1", file_thread_id: "main" };
    const secret = "alice-private-7c41";
    expectOk(await box.call("write_file", { path: "private.txt", content: `${secret}\n` }, alice));
    const alicesFile = join(box.layout.workspace("alice"), "private.txt");

    const replies = [
      await box.call("ls", { path: WS }, bob),
      await box.call("read_file", { path: "private.txt" }, bob),
      await box.call("read_file", { path: `${WS}/private.txt` }, bob),
      await box.call(
        "edit_file",
        { path: "private.txt", old_string: "alice", new_string: "bob" },
        bob,
      ),
      await box.call("glob", { pattern: "**/*" }, bob),
      await box.call("glob", { pattern: "private.txt" }, bob),
      await box.call("grep", { pattern: "alice-private" }, bob),
      await box.call("read_file", { path: alicesFile }, bob),
      await box.call("ls", { path: join(box.layout.workspace("alice")) }, bob),
    ];
    for (const reply of replies) expect(text(reply)).not.toContain(secret);
    expect(text(replies[0] as ToolMessage)).toBe(`${WS} (0 entries): empty`);
    expectError(replies[1] as ToolMessage, "read_file", "no such file or folder");
    expectError(replies[3] as ToolMessage, "edit_file", "no such file or folder");
    expect(text(replies[4] as ToolMessage)).toBe(`no files under ${WS} match "**/*"`);
    expect(text(replies[5] as ToolMessage)).toBe(`no files under ${WS} match "private.txt"`);
    expect(text(replies[6] as ToolMessage)).toMatch(/^no matches for /);
    expectRefused(replies[7] as ToolMessage, "read_file", PathRule.HostPath);
    expectRefused(replies[8] as ToolMessage, "ls", PathRule.HostPath);

    // Bob writing the same virtual path makes his own file; alice's is untouched.
    expectOk(await box.call("write_file", { path: "private.txt", content: "bob's\n" }, bob));
    expect(readFileSync(alicesFile, "utf8")).toBe(`${secret}\n`);
    expect(readFileSync(join(box.layout.workspace("bob"), "private.txt"), "utf8")).toBe("bob's\n");
    expect(expectOk(await box.call("read_file", { path: "private.txt" }, alice))).toBe(
      `     1\t${secret}`,
    );
  });
});

describe("concurrent writes", () => {
  it("keeps every one of 8 parallel writes to distinct files", async () => {
    const box = sandbox();
    const replies = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        box.call("write_file", { path: `par/f${i}.txt`, content: `content ${i}\n` }),
      ),
    );
    for (const reply of replies) expectOk(reply);
    for (let i = 0; i < 8; i += 1) {
      expect(readFileSync(join(box.workspace, "par", `f${i}.txt`), "utf8")).toBe(`content ${i}\n`);
    }
    expect(readdirSync(join(box.workspace, "par")).sort()).toEqual(
      Array.from({ length: 8 }, (_, i) => `f${i}.txt`),
    );
  });

  it("leaves exactly one complete version after 8 parallel 1 MiB writes to one file", async () => {
    const box = sandbox();
    const versions = "abcdefgh".split("").map((char) => char.repeat(1024 * 1024));
    const replies = await Promise.all(
      versions.map((content) => box.call("write_file", { path: "race/one.txt", content })),
    );
    for (const reply of replies) expectOk(reply);
    const result = readFileSync(join(box.workspace, "race", "one.txt"), "utf8");
    expect(result.length).toBe(1024 * 1024);
    expect(versions.filter((version) => version === result)).toHaveLength(1);
    expect(readdirSync(join(box.workspace, "race"))).toEqual(["one.txt"]);
    expect(readdirSync(box.workspace)).toEqual(["race"]);
  });
});
