import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, inject, it } from "vitest";
import { cli } from "../support/cli.js";
import { startFakeOpenAIServer } from "../support/fake-openai-server.js";
import { createTestDatabase } from "../support/postgres-cluster.js";
import { fixture } from "./kb-client.js";

/**
 * The `kb` commands as typed (`cli/main.ts` in a child process), on a SQLite data folder and on
 * PostgreSQL (`DATABASE_URL`): create, add with per-file progress, files, search, list, rm.
 */
describe.each(["sqlite", "postgres"] as const)(
  "kb commands on %s",
  { timeout: 300_000 },
  (kind) => {
    let dataDir: string;
    let env: NodeJS.ProcessEnv;
    beforeEach(async () => {
      dataDir = await mkdtemp(join(tmpdir(), "cli-kb-"));
      env =
        kind === "postgres"
          ? { DATABASE_URL: await createTestDatabase(inject("postgresUrl"), "kb_cli") }
          : {};
    });
    afterEach(async () => {
      await rm(dataDir, { recursive: true, force: true });
    });

    const run = (...args: string[]) => cli(["kb", ...args, "--data", dataDir], { env });

    it("creates a knowledge base, adds files with progress, searches and removes it", async () => {
      const docs = join(dataDir, "docs");
      await mkdir(join(docs, "more"), { recursive: true });
      await writeFile(
        join(docs, "leave.md"),
        "# Leave\n\nVacation requests need two weeks notice.\n",
      );
      await writeFile(join(docs, "more", "检索.txt"), "信息检索系统的评价方法很多。\n");
      await writeFile(join(dataDir, "notes.pdf"), fixture("notes.pdf"));
      await writeFile(join(dataDir, "tool.exe"), "MZ");

      const created = await run("create", "handbook", "--description", "company rules");
      expect(created.stderr).toBe("");
      expect(created.stdout).toMatch(/^created knowledge base "handbook" \([0-9a-f-]{36}\)$/m);

      const added = await run(
        "add",
        "handbook",
        docs,
        join(dataDir, "notes.pdf"),
        join(dataDir, "tool.exe"),
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

      const otherUser = await cli(
        ["kb", "files", "handbook", "--uid", "mallory", "--data", dataDir],
        { env },
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
        await writeFile(join(dataDir, "paint.txt"), "Paint the fence a bright colour.\n");
        await writeFile(join(dataDir, "oil.txt"), "Change the engine oil in winter.\n");
        const added = await run(
          "add",
          "papers",
          join(dataDir, "paint.txt"),
          join(dataDir, "oil.txt"),
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
        expect(noLength.code).toBe(1);
        expect(noLength.stderr).toContain("VALIDATION_FAILED");
        expect(noLength.stderr).toContain("embedder.dimensions is missing");
        const word = await run(
          "create",
          "bad",
          "--embedding-model",
          "m",
          "--embedding-dimensions",
          "many",
        );
        expect(word.stderr).toContain('embedder.dimensions "many" is invalid');
        const misplaced = await run("list", "--embedding-model", "m");
        expect(misplaced.code).toBe(2);
      } finally {
        await fake.close();
      }
    });
  },
);
