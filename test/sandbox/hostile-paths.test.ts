/**
 * Hostile paths against every file tool. Each case plants what it needs in a fresh data dir,
 * runs one tool call, and checks three things: the call is refused by the expected rule (or, where
 * the call is legitimately allowed, succeeds), no ToolMessage carries a secret planted outside
 * alice's scope, and nothing outside her scope changed (recursive snapshots with sizes and
 * mtimes, before and after) nor was left behind as a temp file.
 */
import { execFileSync } from "node:child_process";
import {
  closeSync,
  constants,
  existsSync,
  linkSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ToolMessage } from "@langchain/core/messages";
import type { StructuredToolInterface } from "@langchain/core/tools";
import { afterEach, describe, expect, test } from "vitest";
import { SandboxLayout } from "../../sandbox/layout.js";
import { PathRule } from "../../sandbox/refusal.js";
import { TEMP_PREFIX } from "../../sandbox/safe-fs.js";
import { createFileTools } from "../../sandbox/tools/file-tools.js";
import { VirtualRoot } from "../../sandbox/virtual-paths.js";

/** Planted in every file outside alice's scope; no tool output may ever contain it. */
const SECRET = "SENTINEL-9f27c1-not-for-alice";
const CONTEXT = { uid: "alice", thread_id: "t1" };
/** The first line of the host's /etc/passwd: no tool output may contain it either. */
const PASSWD_HEAD = readFileSync("/etc/passwd", "utf8").split("\n")[0] ?? "root:x:0:0";

interface Fixture {
  /** Everything of the test lives below this temp folder (real path). */
  root: string;
  dataDir: string;
  /** A folder outside the data dir. */
  outside: string;
  workspace: string;
  uploads: string;
  outputs: string;
  skills: string;
  bobHome: string;
  bobWorkspace: string;
  /** Another thread of alice's (not her scope in these calls). */
  otherThread: string;
  otherOutputs: string;
  tools: Record<string, StructuredToolInterface>;
}

let fixtures: Fixture[] = [];

function write(path: string, content: string): void {
  mkdirSync(join(path, ".."), { recursive: true });
  writeFileSync(path, content);
}

function makeFixture(): Fixture {
  const root = realpathSync(mkdtempSync(join(tmpdir(), "sg-hostile-")));
  const dataDir = join(root, "data");
  const outside = join(root, "outside");
  const fx: Fixture = {
    root,
    dataDir,
    outside,
    workspace: join(dataDir, "users", "alice", "workspace"),
    uploads: join(dataDir, "threads", "t1", "uploads"),
    outputs: join(dataDir, "threads", "t1", "outputs"),
    skills: join(dataDir, "threads", "t1", "skills"),
    bobHome: join(dataDir, "users", "bob"),
    bobWorkspace: join(dataDir, "users", "bob", "workspace"),
    otherThread: join(dataDir, "threads", "t2"),
    otherOutputs: join(dataDir, "threads", "t2", "outputs"),
    tools: Object.fromEntries(
      createFileTools(new SandboxLayout(dataDir)).map((tool) => [tool.name, tool]),
    ),
  };
  // Alice's scope, created up front so opening it changes nothing outside it.
  write(join(fx.workspace, "notes.txt"), "alice's notes\n");
  write(join(fx.workspace, "sub", "file.txt"), "alice's sub file\n");
  write(join(fx.uploads, "in.txt"), "an upload\n");
  write(join(fx.outputs, "out.txt"), "an output\n");
  write(join(fx.skills, "demo", "SKILL.md"), "---\nname: demo\n---\n");
  // Outside her scope: every file holds the secret.
  write(join(outside, "secret.txt"), `${SECRET}\n`);
  write(join(outside, "sub", "file.txt"), `${SECRET}\n`);
  write(join(fx.bobWorkspace, "secret.txt"), `${SECRET}\n`);
  write(join(fx.otherOutputs, "secret.txt"), `${SECRET}\n`);
  write(join(fx.otherThread, "uploads", "secret.txt"), `${SECRET}\n`);
  write(join(dataDir, "skills", "library-skill", "SKILL.md"), `${SECRET}\n`);
  fixtures.push(fx);
  return fx;
}

afterEach(() => {
  for (const fx of fixtures) {
    unblockFifos(fx.workspace);
    rmSync(fx.root, { recursive: true, force: true });
  }
  fixtures = [];
});

/**
 * A blocking open of a FIFO would wait for a writer forever; opening the writing end releases
 * such a reader, so a regression fails its test instead of freezing the worker.
 */
function unblockFifos(folder: string): void {
  if (!existsSync(folder)) return;
  for (const name of readdirSync(folder)) {
    const path = join(folder, name);
    if (!lstatSync(path).isFIFO()) continue;
    try {
      closeSync(openSync(path, constants.O_WRONLY | constants.O_NONBLOCK));
    } catch {
      // ENXIO: nobody is reading it, nothing to release.
    }
  }
}

/** Recursive listing (not following links): relative path → kind, size, mtime (and link target). */
function snapshot(folder: string, exclude: readonly string[] = []): Record<string, string> {
  const entries: Record<string, string> = {};
  const walk = (path: string, relative: string) => {
    if (exclude.includes(path)) return;
    const stat = lstatSync(path);
    const kind = stat.isDirectory()
      ? "dir"
      : stat.isSymbolicLink()
        ? `link->${readlinkSync(path)}`
        : stat.isFile()
          ? "file"
          : "other";
    entries[relative] = `${kind} ${stat.size} ${stat.mtimeMs}`;
    if (stat.isDirectory()) {
      for (const name of readdirSync(path).sort()) walk(join(path, name), `${relative}/${name}`);
    }
  };
  walk(folder, ".");
  return entries;
}

/** Everything outside alice's scope that a tool call must leave untouched. */
function outsideState(fx: Fixture) {
  const passwd = lstatSync("/etc/passwd");
  return {
    outside: snapshot(fx.outside),
    bob: snapshot(fx.bobHome),
    otherThread: snapshot(fx.otherThread),
    dataDirWithoutAlicesScope: snapshot(fx.dataDir, [
      fx.workspace,
      fx.uploads,
      fx.outputs,
      fx.skills,
    ]),
    etcPasswd: `${passwd.size} ${passwd.mtimeMs}`,
  };
}

/** Temp files of atomic writes left anywhere below `folder` (links are not followed). */
function tempFilesUnder(folder: string): string[] {
  const found: string[] = [];
  const walk = (path: string) => {
    for (const name of readdirSync(path)) {
      const child = join(path, name);
      if (name.startsWith(TEMP_PREFIX)) found.push(child);
      if (lstatSync(child).isDirectory()) walk(child);
    }
  };
  walk(folder);
  return found;
}

async function call(
  fx: Fixture,
  name: string,
  args: Record<string, unknown>,
  context: Record<string, string> = CONTEXT,
): Promise<ToolMessage> {
  const tool = fx.tools[name];
  if (!tool) throw new Error(`no tool ${name}`);
  return (await tool.invoke(
    { type: "tool_call", id: "c1", name, args },
    { context },
  )) as ToolMessage;
}

function textOf(message: ToolMessage): string {
  return typeof message.content === "string" ? message.content : JSON.stringify(message.content);
}

/** Asserts a message leaks nothing: no secret, no /etc/passwd, no host path it was not given. */
function expectNoLeak(fx: Fixture, message: ToolMessage, input: string): void {
  const text = textOf(message);
  expect(text).not.toContain(SECRET);
  expect(text).not.toContain(PASSWD_HEAD);
  // A refusal quotes the caller's own input (which may be a host path); nothing else may hold one.
  expect(text.split(JSON.stringify(input)).join("<input>")).not.toContain(fx.root);
}

function expectRefused(message: ToolMessage, tool: string, rule: PathRule): void {
  expect(message.status).toBe("error");
  expect(textOf(message)).toContain(`${tool} failed: path refused (${rule}):`);
  expect(message.artifact).toBeUndefined();
}

// ---------------------------------------------------------------------------------------------
// The table

/** How one tool call must end: refused by a rule, or (for a call that is fine) a success. */
type Outcome = PathRule | "success";

type Variant =
  | "ls"
  | "read_file"
  | "write_file"
  | "edit_file"
  | "glob path"
  | "glob pattern"
  | "grep path";

const VARIANTS: readonly {
  variant: Variant;
  tool: string;
  args: (input: string) => Record<string, unknown>;
}[] = [
  { variant: "ls", tool: "ls", args: (path) => ({ path }) },
  { variant: "read_file", tool: "read_file", args: (path) => ({ path }) },
  { variant: "write_file", tool: "write_file", args: (path) => ({ path, content: "PWNED\n" }) },
  {
    variant: "edit_file",
    tool: "edit_file",
    args: (path) => ({ path, old_string: SECRET, new_string: "PWNED" }),
  },
  { variant: "glob path", tool: "glob", args: (path) => ({ path, pattern: "**/*" }) },
  { variant: "glob pattern", tool: "glob", args: (pattern) => ({ pattern }) },
  { variant: "grep path", tool: "grep", args: (path) => ({ path, pattern: "." }) },
];

interface HostileCase {
  name: string;
  path: string | ((fx: Fixture) => string);
  /** Plants links, FIFOs... in alice's workspace (idempotent, so all cases can share a tree). */
  setup?: (fx: Fixture) => void;
  /** The rule every tool refuses the path with. */
  rule: PathRule;
  /** The outcome of the value fed as a glob `pattern`; `null` where that makes no sense. */
  pattern?: Outcome | null;
  /** Tools whose outcome differs from `rule`. */
  outcomes?: Partial<Record<Variant, Outcome>>;
  /** Extra checks after the call. */
  after?: (fx: Fixture) => void;
}

function link(target: string | ((fx: Fixture) => string), name: string) {
  return (fx: Fixture) => {
    const path = join(fx.workspace, name);
    if (!lstatExists(path)) symlinkSync(typeof target === "string" ? target : target(fx), path);
  };
}

function lstatExists(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

const plantFifo = (fx: Fixture) => {
  const path = join(fx.workspace, "fifo");
  if (!lstatExists(path)) execFileSync("mkfifo", [path]);
};
const plantHardLink = (fx: Fixture) => {
  const path = join(fx.workspace, "hard.txt");
  if (!lstatExists(path)) linkSync(join(fx.bobWorkspace, "secret.txt"), path);
};
const plantCycle = (fx: Fixture) => {
  link("c2", "c1")(fx);
  link("c1", "c2")(fx);
};

const LONG_PATH = `${`${"d".repeat(200)}/`.repeat(21)}x.txt`;

const CASES: readonly HostileCase[] = [
  // Lexical: refused before any file system call.
  {
    name: "relative .. traversal",
    path: "../../etc/passwd",
    rule: PathRule.ParentSegment,
    pattern: PathRule.BadPattern,
  },
  {
    name: "absolute .. traversal out of the workspace",
    path: "/home/gem/user-data/workspace/../../../../etc/passwd",
    rule: PathRule.ParentSegment,
    pattern: PathRule.BadPattern,
  },
  {
    name: "the workspace's parent",
    path: "/home/gem/user-data/workspace/..",
    rule: PathRule.ParentSegment,
    pattern: PathRule.BadPattern,
  },
  { name: "a bare ..", path: "..", rule: PathRule.ParentSegment, pattern: PathRule.BadPattern },
  {
    name: "/etc/passwd",
    path: "/etc/passwd",
    rule: PathRule.OutsideRoots,
    pattern: PathRule.BadPattern,
  },
  {
    name: "/proc/self/root",
    path: "/proc/self/root/etc/passwd",
    rule: PathRule.OutsideRoots,
    pattern: PathRule.BadPattern,
  },
  {
    name: "percent-encoded dots",
    path: "%2e%2e/%2e%2e/etc/passwd",
    rule: PathRule.DisguisedSeparator,
    pattern: PathRule.DisguisedSeparator,
  },
  {
    name: "percent-encoded slashes",
    path: "..%2f..%2fetc",
    rule: PathRule.DisguisedSeparator,
    pattern: PathRule.BadPattern,
  },
  {
    name: "U+2025 two dot leader",
    path: "\u2025/etc/passwd",
    rule: PathRule.DisguisedSeparator,
    pattern: PathRule.DisguisedSeparator,
  },
  {
    name: "U+FF0E fullwidth full stops",
    path: "\uff0e\uff0e/\uff0e\uff0e/etc/passwd",
    rule: PathRule.DisguisedSeparator,
    pattern: PathRule.DisguisedSeparator,
  },
  {
    name: "U+FF0F fullwidth solidus",
    path: "\uff0e\uff0e\uff0f\uff0e\uff0e\uff0fetc\uff0fpasswd",
    rule: PathRule.DisguisedSeparator,
    pattern: PathRule.DisguisedSeparator,
  },
  {
    name: "backslash traversal",
    path: "..\\..\\etc\\passwd",
    rule: PathRule.DisguisedSeparator,
    pattern: PathRule.BadPattern,
  },
  {
    name: "a Windows drive path",
    path: "C:\\Windows\\win.ini",
    rule: PathRule.DisguisedSeparator,
    pattern: PathRule.BadPattern,
  },
  { name: "a NUL byte", path: "a\u0000.txt", rule: PathRule.NulByte, pattern: PathRule.NulByte },
  {
    name: "a lone surrogate",
    path: "s\uD800.txt",
    rule: PathRule.MalformedUnicode,
    pattern: PathRule.MalformedUnicode,
  },
  {
    name: "a newline",
    path: "a\nb",
    rule: PathRule.ControlCharacter,
    pattern: PathRule.ControlCharacter,
  },
  {
    name: "a 256-byte name",
    path: "a".repeat(256),
    rule: PathRule.NameTooLong,
    pattern: PathRule.NameTooLong,
  },
  {
    name: "a name of 100 × € (300 bytes)",
    path: "€".repeat(100),
    rule: PathRule.NameTooLong,
    pattern: PathRule.NameTooLong,
  },
  {
    name: "a path over 4096 bytes",
    path: LONG_PATH,
    rule: PathRule.PathTooLong,
    pattern: PathRule.PathTooLong,
  },
  // The schema refuses an empty pattern before the tool runs (it throws, as for any bad argument).
  { name: "an empty path", path: "", rule: PathRule.Empty, pattern: null },
  {
    name: "a prefix of the workspace",
    path: "/home/gem/user-data/workspace-evil/x",
    rule: PathRule.OutsideRoots,
    pattern: PathRule.BadPattern,
  },
  {
    name: "a prefix of the skills",
    path: "/home/gem/skillsx/x",
    rule: PathRule.OutsideRoots,
    pattern: PathRule.BadPattern,
  },
  {
    name: "the host path of alice's own workspace",
    path: (fx) => join(fx.workspace, "notes.txt"),
    rule: PathRule.HostPath,
    pattern: PathRule.BadPattern,
  },
  {
    name: "the host path of bob's workspace",
    path: (fx) => join(fx.dataDir, "users", "bob", "workspace", "secret.txt"),
    rule: PathRule.HostPath,
    pattern: PathRule.BadPattern,
  },
  {
    name: "a host path outside the data dir",
    path: (fx) => join(fx.outside, "secret.txt"),
    rule: PathRule.OutsideRoots,
    pattern: PathRule.BadPattern,
  },

  // Symbolic links planted on the host inside alice's workspace.
  {
    name: "a link to /etc",
    path: "etc/passwd",
    setup: link("/etc", "etc"),
    rule: PathRule.SymlinkEscape,
  },
  {
    name: "the link to /etc itself",
    path: "etc",
    setup: link("/etc", "etc"),
    rule: PathRule.SymlinkEscape,
  },
  {
    name: "a link to /etc/passwd",
    path: "passwd",
    setup: link("/etc/passwd", "passwd"),
    rule: PathRule.SymlinkEscape,
  },
  {
    name: "a link to a folder outside the data dir",
    path: "outlink/secret.txt",
    setup: link((fx) => fx.outside, "outlink"),
    rule: PathRule.SymlinkEscape,
  },
  {
    name: "a new file through a link to an outside folder",
    path: "outlink/new.txt",
    setup: link((fx) => fx.outside, "outlink"),
    rule: PathRule.SymlinkEscape,
    after: (fx) => expect(lstatExists(join(fx.outside, "new.txt"))).toBe(false),
  },
  {
    name: "a link to bob's workspace",
    path: "bob/secret.txt",
    setup: link((fx) => fx.bobWorkspace, "bob"),
    rule: PathRule.SymlinkEscape,
  },
  {
    name: "a link to another thread's outputs",
    path: "t2out/secret.txt",
    setup: link((fx) => fx.otherOutputs, "t2out"),
    rule: PathRule.SymlinkEscape,
  },
  {
    name: "a link to the data dir",
    path: "data/users/bob/workspace/secret.txt",
    setup: link((fx) => fx.dataDir, "data"),
    rule: PathRule.SymlinkEscape,
  },
  {
    name: "a link to /proc/self/root",
    path: "procroot/etc/passwd",
    setup: link("/proc/self/root", "procroot"),
    rule: PathRule.SymlinkEscape,
  },
  {
    name: "a relative link up -> ..",
    path: "up",
    setup: link("..", "up"),
    rule: PathRule.SymlinkEscape,
  },
  {
    name: "a new file below up -> ..",
    path: "up/escape.txt",
    setup: link("..", "up"),
    rule: PathRule.SymlinkEscape,
    after: (fx) =>
      expect(lstatExists(join(fx.dataDir, "users", "alice", "escape.txt"))).toBe(false),
  },
  {
    name: "bob's file below upup -> ../..",
    path: "upup/bob/workspace/secret.txt",
    setup: link("../..", "upup"),
    rule: PathRule.SymlinkEscape,
  },
  {
    name: "a link in the middle of a path",
    path: "linkdir/sub/file.txt",
    setup: link((fx) => fx.outside, "linkdir"),
    rule: PathRule.SymlinkEscape,
  },
  {
    name: "an absolute virtual path through a link",
    path: "/home/gem/user-data/workspace/linkdir/sub/file.txt",
    setup: link((fx) => fx.outside, "linkdir"),
    rule: PathRule.SymlinkEscape,
    pattern: PathRule.BadPattern,
  },
  {
    name: "a link to a sibling folder named like the workspace plus a suffix",
    path: "evil/secret.txt",
    setup: (fx) => {
      write(join(fx.workspace, "..", "workspace-evil", "secret.txt"), `${SECRET}\n`);
      link("../workspace-evil", "evil")(fx);
    },
    rule: PathRule.SymlinkEscape,
  },
  { name: "a self loop", path: "loop", setup: link("loop", "loop"), rule: PathRule.BrokenSymlink },
  {
    name: "a path below a self loop",
    path: "loop/x.txt",
    setup: link("loop", "loop"),
    rule: PathRule.BrokenSymlink,
  },
  { name: "a two-link cycle", path: "c1", setup: plantCycle, rule: PathRule.BrokenSymlink },
  {
    name: "a path below a two-link cycle",
    path: "c1/x.txt",
    setup: plantCycle,
    rule: PathRule.BrokenSymlink,
  },
  {
    name: "a dangling link to a new file outside",
    path: "dangling",
    setup: link((fx) => join(fx.outside, "new.txt"), "dangling"),
    rule: PathRule.BrokenSymlink,
    after: (fx) => expect(lstatExists(join(fx.outside, "new.txt"))).toBe(false),
  },
  {
    name: "a new file below a dangling folder link",
    path: "danglingdir/new.txt",
    setup: link((fx) => join(fx.outside, "newdir"), "danglingdir"),
    rule: PathRule.BrokenSymlink,
    after: (fx) => expect(lstatExists(join(fx.outside, "newdir"))).toBe(false),
  },
  {
    name: "a link whose target goes through a file",
    path: "throughfile",
    setup: link("notes.txt/x", "throughfile"),
    rule: PathRule.BrokenSymlink,
  },

  // Special files.
  {
    name: "a FIFO",
    path: "fifo",
    setup: plantFifo,
    rule: PathRule.NotRegularFile,
    // A pattern naming a FIFO matches no file (glob lists regular files only).
    pattern: "success",
    outcomes: { ls: PathRule.NotADirectory, "glob path": PathRule.NotADirectory },
  },
  { name: "a path below a FIFO", path: "fifo/x", setup: plantFifo, rule: PathRule.NotADirectory },
  {
    name: "a hard link to bob's secret",
    path: "hard.txt",
    setup: plantHardLink,
    rule: PathRule.HardLink,
    // Listing its name is harmless; writing replaces alice's name only (rename), never bob's file.
    pattern: "success",
    outcomes: {
      ls: PathRule.NotADirectory,
      "glob path": PathRule.NotADirectory,
      write_file: "success",
    },
    after: (fx) => {
      expect(readFileSync(join(fx.bobWorkspace, "secret.txt"), "utf8")).toBe(`${SECRET}\n`);
    },
  },
];

function outcomeOf(entry: HostileCase, variant: Variant): Outcome | null {
  if (variant === "glob pattern") return entry.pattern === undefined ? entry.rule : entry.pattern;
  return entry.outcomes?.[variant] ?? entry.rule;
}

const TABLE = CASES.flatMap((entry) =>
  VARIANTS.flatMap(({ variant, tool, args }) => {
    const outcome = outcomeOf(entry, variant);
    return outcome === null
      ? []
      : [{ label: `${variant} ${entry.name}`, entry, tool, args, outcome }];
  }),
);

describe("hostile paths", () => {
  test("the table is large enough", () => {
    expect(CASES.length).toBeGreaterThanOrEqual(30);
    expect(new Set(CASES.map((entry) => entry.name)).size).toBe(CASES.length);
    // Every case runs against every tool (only the empty pattern, which the schema rejects, is left out).
    expect(TABLE.length).toBe(CASES.length * VARIANTS.length - 1);
  });

  test.each(TABLE)("$label", async ({ entry, tool, args, outcome }) => {
    const fx = makeFixture();
    entry.setup?.(fx);
    const input = typeof entry.path === "string" ? entry.path : entry.path(fx);
    const before = outsideState(fx);

    const message = await call(fx, tool, args(input));

    if (outcome === "success") {
      expect(message.status).toBe("success");
    } else {
      expectRefused(message, tool, outcome);
    }
    expectNoLeak(fx, message, input);
    expect(outsideState(fx)).toEqual(before);
    expect(tempFilesUnder(fx.root)).toEqual([]);
    expect(readdirSync("/etc").filter((name) => name.startsWith(TEMP_PREFIX))).toEqual([]);
    entry.after?.(fx);
  });
});

// ---------------------------------------------------------------------------------------------
// Glob patterns and whole-workspace walks, with every link of the table planted at once.

function plantAll(fx: Fixture): void {
  for (const entry of CASES) entry.setup?.(fx);
}

/** Real host paths of alice's scope, for checking where a listed virtual path really lies. */
function inAlicesScope(fx: Fixture, virtual: string): boolean {
  const mounts = [
    [VirtualRoot.workspace, fx.workspace],
    [VirtualRoot.uploads, fx.uploads],
    [VirtualRoot.outputs, fx.outputs],
    [VirtualRoot.skills, fx.skills],
  ] as const;
  const mount = mounts.find(([root]) => virtual.startsWith(`${root}/`));
  if (!mount) return false;
  const real = realpathSync(mount[1] + virtual.slice(mount[0].length));
  return mounts.some(([, host]) => real.startsWith(`${host}/`));
}

/** The virtual paths a glob reply lists (every line but notes). */
function listedPaths(message: ToolMessage): string[] {
  return textOf(message)
    .split("\n")
    .filter((line) => line.startsWith("/"));
}

/** The virtual paths of a grep reply's `path:line: text` lines. */
function grepPaths(message: ToolMessage): string[] {
  return textOf(message)
    .split("\n")
    .filter((line) => line.startsWith("/"))
    .map((line) => line.slice(0, line.search(/:\d+: /)));
}

const HOSTILE_PATTERNS: readonly { pattern: string; outcome: Outcome }[] = [
  { pattern: "../*", outcome: PathRule.BadPattern },
  { pattern: "../../etc/passwd", outcome: PathRule.BadPattern },
  { pattern: "..", outcome: PathRule.BadPattern },
  { pattern: "**/../../**", outcome: PathRule.BadPattern },
  { pattern: "*/../*", outcome: PathRule.BadPattern },
  { pattern: "/etc/*", outcome: PathRule.BadPattern },
  { pattern: "/home/gem/user-data/workspace/**", outcome: PathRule.BadPattern },
  { pattern: "..%2f*", outcome: PathRule.BadPattern },
  { pattern: "..\\*", outcome: PathRule.BadPattern },
  { pattern: "\\etc\\*", outcome: PathRule.BadPattern },
  { pattern: "C:\\*", outcome: PathRule.BadPattern },
  { pattern: "%2e%2e/*", outcome: PathRule.DisguisedSeparator },
  { pattern: "\u2025/*", outcome: PathRule.DisguisedSeparator },
  { pattern: "\uff0e\uff0e/*", outcome: PathRule.DisguisedSeparator },
  { pattern: "*\u0000", outcome: PathRule.NulByte },
  { pattern: "*\uD800", outcome: PathRule.MalformedUnicode },
  { pattern: "*\n*", outcome: PathRule.ControlCharacter },
  { pattern: `${"a".repeat(256)}/*`, outcome: PathRule.NameTooLong },
  { pattern: `${LONG_PATH}*`, outcome: PathRule.PathTooLong },
  { pattern: "etc/*", outcome: PathRule.SymlinkEscape },
  { pattern: "linkdir/**", outcome: PathRule.SymlinkEscape },
  { pattern: "bob/*", outcome: PathRule.SymlinkEscape },
  { pattern: "up/**", outcome: PathRule.SymlinkEscape },
  { pattern: "procroot/etc/*", outcome: PathRule.SymlinkEscape },
  { pattern: "loop/*", outcome: PathRule.BrokenSymlink },
  { pattern: "c1/**", outcome: PathRule.BrokenSymlink },
  { pattern: "danglingdir/*", outcome: PathRule.BrokenSymlink },
  // Not refused, but harmless: brace and class tricks never move the crawl out of its folder,
  // and wildcards never descend through links. They must find nothing outside.
  { pattern: "{x,/etc}/passwd", outcome: "success" },
  { pattern: ".{.,}/.{.,}/etc/passwd", outcome: "success" },
  { pattern: "[.][.]/*", outcome: "success" },
  { pattern: "{etc,linkdir,bob,t2out,data,up,upup}/**", outcome: "success" },
  { pattern: "*/secret.txt", outcome: "success" },
  { pattern: "**/secret.txt", outcome: "success" },
  { pattern: "!(notes.txt)", outcome: "success" },
  // Below a file or a FIFO there is nothing to find (the FIFO is never opened).
  { pattern: "fifo/*", outcome: "success" },
  { pattern: "hard.txt/**", outcome: "success" },
];

describe("hostile glob patterns", () => {
  const table = HOSTILE_PATTERNS.flatMap(({ pattern, outcome }) => [
    {
      label: `glob pattern ${JSON.stringify(pattern).slice(0, 60)}`,
      tool: "glob",
      pattern,
      outcome,
    },
    { label: `grep glob ${JSON.stringify(pattern).slice(0, 60)}`, tool: "grep", pattern, outcome },
  ]);

  test.each(table)("$label", async ({ tool, pattern, outcome }) => {
    const fx = makeFixture();
    plantAll(fx);
    const before = outsideState(fx);

    const message = await call(
      fx,
      tool,
      tool === "glob" ? { pattern } : { pattern: ".", glob: pattern },
    );

    if (outcome === "success") {
      expect(message.status).toBe("success");
      const paths = tool === "glob" ? listedPaths(message) : grepPaths(message);
      for (const path of paths) expect(inAlicesScope(fx, path), path).toBe(true);
    } else {
      expectRefused(message, tool, outcome);
    }
    expectNoLeak(fx, message, pattern);
    expect(outsideState(fx)).toEqual(before);
    expect(tempFilesUnder(fx.root)).toEqual([]);
  });
});

describe("walking alice's folders with every hostile link present", () => {
  test("glob, grep and ls report only what lies in her scope", async () => {
    const fx = makeFixture();
    plantAll(fx);
    const before = outsideState(fx);

    const globbed = await call(fx, "glob", { pattern: "**/*" });
    expect(globbed.status).toBe("success");
    const globPaths = listedPaths(globbed);
    // Positive control: the walk works (and lists the hard link by name only).
    expect(globPaths).toEqual([
      `${VirtualRoot.workspace}/hard.txt`,
      `${VirtualRoot.workspace}/notes.txt`,
      `${VirtualRoot.workspace}/sub/file.txt`,
    ]);
    for (const path of globPaths) expect(inAlicesScope(fx, path), path).toBe(true);

    const globbedAll = await call(fx, "glob", { pattern: "**" });
    expect(listedPaths(globbedAll)).toEqual(globPaths);

    for (const folder of [VirtualRoot.outputs, VirtualRoot.uploads, VirtualRoot.skills]) {
      const found = await call(fx, "glob", { pattern: "**/*", path: folder });
      expect(found.status).toBe("success");
      for (const path of listedPaths(found)) expect(inAlicesScope(fx, path), path).toBe(true);
      expectNoLeak(fx, found, "");
    }

    const grepped = await call(fx, "grep", { pattern: "." });
    expect(grepped.status).toBe("success");
    expect(grepPaths(grepped).sort()).toEqual([
      `${VirtualRoot.workspace}/notes.txt`,
      `${VirtualRoot.workspace}/sub/file.txt`,
    ]);

    // A class around the last letter, so the reply's echo of the pattern is not the secret itself.
    const secretSearch = await call(fx, "grep", {
      pattern: `${SECRET.slice(0, -1)}[${SECRET.at(-1)}]`,
    });
    expect(secretSearch.status).toBe("success");
    expect(textOf(secretSearch)).toMatch(/^no matches for /);

    const listed = await call(fx, "ls", { path: VirtualRoot.workspace });
    expect(listed.status).toBe("success");
    const lines = textOf(listed).split("\n");
    for (const name of [
      "evil",
      "etc",
      "passwd",
      "outlink",
      "bob",
      "t2out",
      "data",
      "procroot",
      "up",
      "upup",
      "linkdir",
      "loop",
      "c1",
      "c2",
      "dangling",
      "danglingdir",
      "throughfile",
    ]) {
      expect(lines).toContain(
        `link  ${VirtualRoot.workspace}/${name}  (refused: leads outside the agent's folders or is broken)`,
      );
    }
    expect(lines).toContain(`other ${VirtualRoot.workspace}/fifo  (not a regular file)`);

    for (const message of [globbed, globbedAll, grepped, secretSearch, listed]) {
      expectNoLeak(fx, message, "");
    }
    expect(outsideState(fx)).toEqual(before);
    expect(tempFilesUnder(fx.root)).toEqual([]);
  });
});
