import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, inject, it } from "vitest";
import { createRuntime, type Runtime } from "../../runtime.js";
import { offlineEnv } from "../support/cli.js";
import { nodeEntry } from "../support/node-entry.js";
import { createTestDatabase } from "../support/postgres-cluster.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

/** Runs `ingest-child.ts` until it says it is indexing, then kills it with SIGKILL. */
function killMidIngest(dataDir: string, database: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [...nodeEntry("test/knowledge/ingest-child.ts"), dataDir, database],
      { cwd: ROOT, env: offlineEnv(), stdio: ["ignore", "pipe", "pipe"] },
    );
    let output = "";
    child.stdout.setEncoding("utf8").on("data", (text: string) => {
      output += text;
      if (output.includes("INDEXING")) child.kill("SIGKILL");
    });
    child.stderr.setEncoding("utf8").on("data", (text: string) => {
      output += text;
    });
    child.on("error", reject);
    child.on("close", () => resolve(output));
  });
}

/**
 * A process killed while indexing leaves its file `indexing` in the store; once its lease
 * lapses, the next process takes the file over and indexes it whole. SQLite and PostgreSQL.
 */
describe.each(["sqlite", "postgres"] as const)(
  "a crash mid-ingest on %s",
  { timeout: 180_000 },
  (kind) => {
    const open: Runtime[] = [];
    const dirs: string[] = [];
    afterEach(async () => {
      for (const runtime of open.splice(0)) await runtime.close();
      for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
    });

    it("is finished by the next process once the dead one's lease lapses", async () => {
      const dataDir = mkdtempSync(join(tmpdir(), "kb-crash-"));
      dirs.push(dataDir);
      const database =
        kind === "sqlite"
          ? join(dataDir, "agents.sqlite")
          : await createTestDatabase(inject("postgresUrl"), "kb_crash");
      const output = await killMidIngest(dataDir, database);
      expect(output).toContain("INDEXING");

      const options = { dataDir, database, checkpointer: "memory" as const, env: {}, warn() {} };
      const observer = await createRuntime({ ...options, knowledgeIngest: false });
      open.push(observer);
      const [left] = await observer.kb.listFiles("alice", "big");
      expect(left?.status).toBe("indexing");
      expect(await observer.kb.search("alice", { query: "zeppelin" })).toEqual([]);

      const next = await createRuntime({ ...options, knowledgeLeaseMs: 1000 });
      open.push(next);
      const deadline = Date.now() + 120_000;
      for (;;) {
        const [file] = await next.kb.listFiles("alice", "big");
        if (file?.status === "indexed") break;
        expect(file?.status === "error" ? file.error : "").toBe("");
        if (Date.now() > deadline) throw new Error(`still ${file?.status} after 120 s`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      const [file] = await next.kb.listFiles("alice", "big");
      expect(file?.line_count).toBe(80_001);
      const hits = await next.kb.search("alice", { query: "zeppelin hangar" });
      expect(hits.map((hit) => [hit.file, hit.line_end])).toEqual([["manual.txt", 80_001]]);
    });
  },
);
