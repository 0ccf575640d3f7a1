import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MemorySaver } from "@langchain/langgraph";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openRunStore } from "../../runs/run-store.js";
import { SandboxLayout } from "../../sandbox/layout.js";
import { type Database, openDatabase } from "../../store/database.js";
import { RunRepository } from "../../store/runs.js";
import { ThreadRepository } from "../../store/threads.js";

/** A process of another machine: only its lease tells whether it lives. */
const ELSEWHERE = {
  instanceId: "remote-instance",
  host: "worker-7",
  pid: 31337,
  pidScope: "linux:another-boot:pid:[4026531836]",
  pidStart: "12345",
};

describe("openRunStore", () => {
  let dataDir: string;
  let database: Database;
  beforeEach(async () => {
    dataDir = mkdtempSync(join(tmpdir(), "run-store-"));
    database = await openDatabase(":memory:");
  });
  afterEach(async () => {
    await database.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const open = (hosted: boolean, env: NodeJS.ProcessEnv = {}, threadLeaseMs?: number) =>
    openRunStore({
      database,
      saver: new MemorySaver(),
      layout: new SandboxLayout(dataDir),
      env,
      threadLeaseMs,
      hosted,
      warn: () => undefined,
    });

  /** What a process elsewhere left: a run still `running` whose lease ran out, a live one, and a deletion cut short. */
  async function leftBehind() {
    const runs = new RunRepository(database.db);
    const threads = new ThreadRepository(database.db);
    for (const [runId, threadId, leaseMs] of [
      ["dead-run", "t-dead", -60_000],
      ["live-run", "t-live", 60_000],
    ] as const) {
      await threads.claim("alice", threadId, "agent-1");
      await runs.start({ runId, threadId, uid: "alice", agentId: "agent-1", runner: ELSEWHERE });
      expect(await runs.acquireThread(threadId, runId, leaseMs)).toBe(true);
    }
    await threads.claim("alice", "t-gone", "agent-1");
    expect(await threads.beginDeletion("alice", "t-gone")).toBeDefined();
    return { runs, threads };
  }

  it("records runs of stopped processes interrupted and finishes cut-short deletions", async () => {
    const { runs, threads } = await leftBehind();
    const store = await open(false);

    const dead = await runs.find("dead-run");
    expect(dead?.status).toBe("interrupted");
    expect(dead?.status_reason).toContain("worker-7");
    expect(await runs.lease("t-dead")).toBeUndefined();
    // A run whose lease still holds may be alive: left alone.
    expect((await runs.find("live-run"))?.status).toBe("running");
    expect((await runs.lease("t-live"))?.run_id).toBe("live-run");
    // The deletion is finished: not even a deleting row is left.
    expect(await threads.get("alice", "t-gone", { deleting: true })).toBeUndefined();

    expect(store.running.isBusy("t-live")).toBe(false);
    expect(store.runner.pid).toBe(process.pid);
  });

  it("a hosted store recovers nothing", async () => {
    const { runs, threads } = await leftBehind();
    await open(true);
    expect((await runs.find("dead-run"))?.status).toBe("running");
    expect(await threads.get("alice", "t-gone", { deleting: true })).toBeDefined();
  });

  it("takes the lease length from the option, else SUBAGENT_THREAD_LEASE_MS, else 30 s", async () => {
    expect((await open(true, {}, 1234)).threadLeaseMs).toBe(1234);
    expect((await open(true, { SUBAGENT_THREAD_LEASE_MS: " 5000 " })).threadLeaseMs).toBe(5000);
    expect((await open(true, { SUBAGENT_THREAD_LEASE_MS: "soon" })).threadLeaseMs).toBe(30_000);
    expect((await open(true)).threadLeaseMs).toBe(30_000);
  });
});
