import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, inject, it } from "vitest";
import { createRuntime, type Runtime } from "../../runtime.js";
import { createTestDatabase } from "../support/postgres-cluster.js";

/**
 * The ingest queue lives in the store: files accepted by a process that stops before indexing
 * them (here: one that does not index at all) are indexed by the next process over the same
 * database, on SQLite and PostgreSQL.
 */
describe.each(["sqlite", "postgres"] as const)("the ingest queue across restarts on %s", (kind) => {
  const open: Runtime[] = [];
  const dirs: string[] = [];
  afterEach(async () => {
    for (const runtime of open.splice(0)) await runtime.close();
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  async function storeTarget(dataDir: string): Promise<string> {
    return kind === "sqlite"
      ? join(dataDir, "agents.sqlite")
      : createTestDatabase(inject("postgresUrl"), "kb_restart");
  }

  async function runtimeOn(dataDir: string, database: string, knowledgeIngest: boolean) {
    const runtime = await createRuntime({
      dataDir,
      database,
      checkpointer: "memory",
      env: {},
      warn: () => {},
      knowledgeIngest,
    });
    open.push(runtime);
    return runtime;
  }

  it("indexes in the next process what the previous one left queued", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "kb-restart-"));
    dirs.push(dataDir);
    const database = await storeTarget(dataDir);

    const first = await runtimeOn(dataDir, database, false);
    await first.kb.create("alice", { name: "queue" });
    const results = await first.kb.addFiles("alice", "queue", [
      { name: "one.txt", content: Buffer.from("first file about rivers\n") },
      { name: "two.md", content: Buffer.from("# Two\n\nsecond file about mountains\n") },
    ]);
    expect(results.map((result) => result.status)).toEqual(["accepted", "accepted"]);
    const queued = await first.kb.listFiles("alice", "queue");
    expect(queued.map((file) => file.status)).toEqual(["queued", "queued"]);
    expect(await first.kb.search("alice", { query: "rivers" })).toEqual([]);
    await first.close();
    open.splice(open.indexOf(first), 1);

    const second = await runtimeOn(dataDir, database, true);
    await second.kb.idle();
    const files = await second.kb.listFiles("alice", "queue");
    expect(files.map((file) => [file.name, file.status, file.chunk_count])).toEqual(
      expect.arrayContaining([
        ["one.txt", "indexed", 1],
        ["two.md", "indexed", 1],
      ]),
    );
    const hits = await second.kb.search("alice", { query: "mountains" });
    expect(hits.map((hit) => hit.file)).toEqual(["two.md"]);
  });
});
