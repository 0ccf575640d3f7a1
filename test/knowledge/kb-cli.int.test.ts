import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, inject, it } from "vitest";
import { startFakeOpenAIServer } from "../support/fake-openai-server.js";
import { cliInProcess } from "../support/in-process-cli.js";
import { createTestDatabase } from "../support/postgres-cluster.js";
import { fixture } from "./kb-client.js";

/** A data folder per test and `kb` as typed in it, on SQLite or on PostgreSQL (`DATABASE_URL`). */
function kbFolder(kind: "sqlite" | "postgres") {
  const folder = { dataDir: "", env: {} as NodeJS.ProcessEnv };
  beforeEach(async () => {
    folder.dataDir = await mkdtemp(join(tmpdir(), "cli-kb-"));
    folder.env =
      kind === "postgres"
        ? { DATABASE_URL: await createTestDatabase(inject("postgresUrl"), "kb_cli") }
        : {};
  });
  afterEach(async () => {
    await rm(folder.dataDir, { recursive: true, force: true });
  });
  return folder;
}

/**
 * The `kb` commands as typed (`runCli`, what the bin runs, in this process: the real-process door
 * is `test/cli/main.int.test.ts`'s), on a SQLite data folder and on PostgreSQL: create, add with
 * per-file progress, files, search, list, rm.
 */
describe.each(["sqlite", "postgres"] as const)(
  "kb commands on %s",
  { timeout: 300_000 },
  (kind) => {
    const folder = kbFolder(kind);
    const run = (...args: string[]) =>
      cliInProcess(["kb", ...args, "--data", folder.dataDir], { env: folder.env });

    it("creates a knowledge base, adds files with progress, searches and removes it", async () => {
      const docs = join(folder.dataDir, "docs");
      await mkdir(join(docs, "more"), { recursive: true });
      await writeFile(
        join(docs, "leave.md"),
        "# Leave\n\nVacation requests need two weeks notice.\n",
      );
      await writeFile(join(docs, "more", "检索.txt"), "信息检索系统的评价方法很多。\n");
      await writeFile(join(folder.dataDir, "notes.pdf"), fixture("notes.pdf"));
      await writeFile(join(folder.dataDir, "tool.exe"), "MZ");

      const created = await run("create", "handbook", "--description", "company rules");
      expect(created.stderr).toBe("");
      expect(created.stdout).toMatch(/^created knowledge base "handbook" \([0-9a-f-]{36}\)$/m);

      const added = await run(
        "add",
        "handbook",
        docs,
        join(folder.dataDir, "notes.pdf"),
        join(folder.dataDir, "tool.exe"),
      );
      expect(added.code).toBe(1);
      expect(added.stdout).toContain("  tool.exe: refused (UNSUPPORTED_FILE_TYPE)");
      expect(added.stdout).toMatch(/^ {2}leave\.md: indexed \(1 chunk, 3 lines\)$/m);
      expect(added.stdout).toMatch(/^ {2}检索\.txt: indexed \(1 chunk, 1 line\)$/m);
      expect(added.stdout).toMatch(/^ {2}notes\.pdf: indexed \(1 chunk, 2 lines\)$/m);
      expect(added.stdout).toContain("handbook: 3 files ready, 1 failed");

      const files = await run("files", "handbook");
      expect(files.code).toBe(0);
      expect(files.stdout).toMatch(/^notes\.pdf\s+indexed\s+1\s+2\s+[0-9a-f-]{36}$/m);

      const found = await run("search", "检索");
      expect(found.code).toBe(0);
      expect(found.stdout).toContain("[1] handbook / 检索.txt, lines 1-1");
      expect(found.stdout).toContain("    信息检索系统的评价方法很多。");
      const listed = await run("list");
      expect(listed.stdout).toMatch(/^handbook\s+3\/3\s+private\s+company rules$/m);

      const otherUser = await cliInProcess(
        ["kb", "files", "handbook", "--uid", "mallory", "--data", folder.dataDir],
        { env: folder.env },
      );
      expect(otherUser.code).toBe(1);
      expect(otherUser.stderr).toContain("NOT_FOUND");

      expect((await run("rm", "handbook")).stdout).toContain('deleted knowledge base "handbook"');
      const gone = await run("search", "vacation", "--kb", "handbook");
      expect(gone.code).toBe(1);
      expect(gone.stderr).toContain('knowledge base "handbook" not found');

      const usage = await run("create");
      expect(usage.code).toBe(2);
      expect(usage.stderr).toContain('"kb create" needs a name');
    });
  },
);

/**
 * The embedder options of `kb create` and `kb update` as typed. On SQLite only: what they
 * print is the same on both stores, and the vectors' own behaviour on PostgreSQL is
 * `test/knowledge/kb-vectors.test.ts`'s.
 */
describe("kb embedder commands", { timeout: 300_000 }, () => {
  const folder = kbFolder("sqlite");
  const run = (...args: string[]) =>
    cliInProcess(["kb", ...args, "--data", folder.dataDir], { env: folder.env });

  it("creates a knowledge base with an embedder, and refuses bad embedder options", async () => {
    const fake = await startFakeOpenAIServer(() => {
      throw new Error("no chat completions expected");
    });
    try {
      const created = await run(
        "create",
        "papers",
        "--embedding-model",
        "hash-64",
        "--embedding-dimensions",
        "64",
        "--embedding-base-url",
        fake.url,
      );
      expect(created.stderr).toBe("");
      expect(created.stdout).toContain("hybrid search with hash-64 (64 dimensions)");
      await writeFile(join(folder.dataDir, "paint.txt"), "Paint the fence a bright colour.\n");
      await writeFile(join(folder.dataDir, "oil.txt"), "Change the engine oil in winter.\n");
      const added = await run(
        "add",
        "papers",
        join(folder.dataDir, "paint.txt"),
        join(folder.dataDir, "oil.txt"),
      );
      expect(added.code, added.stdout + added.stderr).toBe(0);
      const files = await run("files", "papers");
      expect(files.stdout).toMatch(/^paint\.txt\s+indexed\s+ready\s+1\s+1\s+[0-9a-f-]{36}$/m);
      // No file has the word "color": only the vectors find it.
      const found = await run("search", "color", "--kb", "papers");
      expect(found.code).toBe(0);
      expect(found.stdout).toContain("[1] papers / paint.txt, lines 1-1");
      expect(fake.embeddingRequests.length).toBeGreaterThan(0);

      const noLength = await run("create", "bad", "--embedding-model", "m");
      expect(noLength.code).toBe(2);
      expect(noLength.stderr).toContain("error: option --embedding-dimensions is missing");
      const word = await run(
        "create",
        "bad",
        "--embedding-model",
        "m",
        "--embedding-dimensions",
        "many",
      );
      expect(word.code).toBe(2);
      expect(word.stderr).toContain(
        'error: option --embedding-dimensions "many" is not a whole number above 0',
      );
      // What only the schema judges names the option as well as the field.
      const tooLong = await run(
        "create",
        "bad",
        "--embedding-model",
        "m",
        "--embedding-dimensions",
        "9000",
      );
      expect(tooLong.code).toBe(1);
      expect(tooLong.stderr).toContain(
        "error [VALIDATION_FAILED]: option --embedding-dimensions: embedder.dimensions 9000 is invalid",
      );
      const misplaced = await run("list", "--embedding-model", "m", "--embedding-dimensions", "8");
      expect(misplaced.code).toBe(2);
      expect((await run("list")).stdout).not.toMatch(/^bad\s/m);
    } finally {
      await fake.close();
    }
  });

  it("updates a knowledge base's embedder, following each file's vectors, and drops them", async () => {
    const fake = await startFakeOpenAIServer(() => {
      throw new Error("no chat completions expected");
    });
    try {
      // The key is read from the variable the settings name; the fake server takes any.
      const withKey = { ...folder.env, CLI_EMBED_KEY: "sk-cli-secret" };
      const typed = (...args: string[]) =>
        cliInProcess(["kb", ...args, "--data", folder.dataDir], { env: withKey });
      await writeFile(join(folder.dataDir, "paint.txt"), "Paint the fence a bright colour.\n");
      await writeFile(join(folder.dataDir, "oil.txt"), "Change the engine oil in winter.\n");
      expect((await typed("create", "garage")).code).toBe(0);
      const added = await typed(
        "add",
        "garage",
        join(folder.dataDir, "paint.txt"),
        join(folder.dataDir, "oil.txt"),
      );
      expect(added.code, added.stdout + added.stderr).toBe(0);

      // No vectors yet: a search for a word no file has finds nothing.
      expect((await typed("search", "color", "--kb", "garage")).stdout).toContain(
        'no matches for "color"',
      );

      const updated = await typed(
        "update",
        "garage",
        "--embedding-model",
        "hash-16",
        "--embedding-dimensions",
        "16",
        "--embedding-base-url",
        fake.url,
        "--embedding-key-env",
        "CLI_EMBED_KEY",
      );
      expect(updated.stderr).toBe("");
      expect(updated.code).toBe(0);
      const lines = updated.stdout.split("\n");
      expect(lines[0]).toBe(
        'updated knowledge base "garage" (version 2): hybrid search with hash-16 (16 dimensions)',
      );
      expect(lines[1]).toBe("reindexing 2 files with hash-16:");
      for (const name of ["paint.txt", "oil.txt"]) {
        const progress = lines.filter((line) => line.startsWith(`  ${name}: `));
        // One line per change, ending ready; whatever it passed through came in order.
        expect(progress.at(-1)).toBe(`  ${name}: vectors ready`);
        expect(new Set(progress).size).toBe(progress.length);
        const order = ["pending", "embedding", "ready"];
        const seen = progress.map((line) => order.indexOf(line.split("vectors ")[1] ?? ""));
        expect(seen).toEqual([...seen].sort());
        expect(seen).not.toContain(-1);
      }
      expect(lines).toContain("garage: 2 files ready, 0 failed");
      expect(fake.embeddingRequests.some((request) => request.model === "hash-16")).toBe(true);
      expect(updated.stdout).not.toContain("sk-cli-secret");

      const files = await typed("files", "garage");
      expect(files.stdout).toMatch(/^paint\.txt\s+indexed\s+ready\s+1\s+1\s+[0-9a-f-]{36}$/m);
      // Only the vectors find "color" (the file says "colour").
      const found = await typed("search", "color", "--kb", "garage");
      expect(found.stdout).toContain("[1] garage / paint.txt, lines 1-1");

      // A model the endpoint does not serve: every file's vectors fail, exit 1.
      const broken = await typed(
        "update",
        "garage",
        "--embedding-model",
        "no-such-model",
        "--embedding-dimensions",
        "16",
        "--embedding-base-url",
        fake.url,
      );
      expect(broken.code, broken.stdout + broken.stderr).toBe(1);
      expect(broken.stdout).toMatch(/^ {2}paint\.txt: vectors failed: .*no-such-model/m);
      expect(broken.stdout).toContain("garage: 0 files ready, 2 failed");

      const dropped = await typed("update", "garage", "--no-embedding");
      expect(dropped.code).toBe(0);
      expect(dropped.stdout).toBe(
        'updated knowledge base "garage" (version 4): full-text search only (no vectors)\n',
      );
      const after = await typed("files", "garage");
      expect(after.stdout).not.toContain("VECTORS");
      expect((await typed("search", "color", "--kb", "garage")).stdout).toContain(
        'no matches for "color"',
      );

      // A description alone: no reindex, nothing followed.
      const described = await typed("update", "garage", "--description", "car and house");
      expect(described.stdout).toBe('updated knowledge base "garage" (version 5)\n');

      // Bad flags: refused before anything changes, naming the option, value and fix.
      const both = await typed(
        "update",
        "garage",
        "--no-embedding",
        "--embedding-model",
        "hash-16",
      );
      expect(both.code).toBe(2);
      expect(both.stderr).toContain(
        "error: option --no-embedding turns vectors off, so it cannot go with --embedding-model",
      );
      const zero = await typed(
        "update",
        "garage",
        "--embedding-model",
        "hash-16",
        "--embedding-dimensions",
        "0",
      );
      expect(zero.code).toBe(2);
      expect(zero.stderr).toContain(
        'error: option --embedding-dimensions "0" is not a whole number above 0: give the length of the model\'s vectors, e.g. --embedding-dimensions 1536',
      );
      const badUrl = await typed(
        "update",
        "garage",
        "--embedding-model",
        "hash-16",
        "--embedding-dimensions",
        "16",
        "--embedding-base-url",
        "ftp://example.com",
      );
      expect(badUrl.code).toBe(1);
      expect(badUrl.stderr).toContain(
        'error [VALIDATION_FAILED]: option --embedding-base-url: embedder.base_url "ftp://example.com" is invalid',
      );
      const nothing = await typed("update", "garage");
      expect(nothing.code).toBe(2);
      expect(nothing.stderr).toContain('"kb update <kb>" needs something to change');
      expect((await typed("update", "nowhere", "--no-embedding")).stderr).toContain(
        'knowledge base "nowhere" not found',
      );
      // None of the refusals changed it.
      const list = await typed("list");
      expect(list.stdout).toMatch(/^garage\s+2\/2\s+private\s+car and house$/m);
    } finally {
      await fake.close();
    }
  });
});
