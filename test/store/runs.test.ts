import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type Database, openSqliteDatabase } from "../../store/database.js";
import { RunRepository } from "../../store/runs.js";

describe("runs and thread leases", () => {
  let dir: string;
  let database: Database;
  let now: Date;
  let runs: RunRepository;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), "runs-"));
    database = await openSqliteDatabase(join(dir, "agents.sqlite"));
    now = new Date("2026-01-01T00:00:00.000Z");
    runs = new RunRepository(database.db, { now: () => now });
  });
  afterEach(async () => {
    await database.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("lets one run hold a thread until it releases it or its lease expires", async () => {
    expect(await runs.acquireThread("t1", "run-a", 1_000)).toBe(true);
    expect(await runs.acquireThread("t1", "run-b", 1_000)).toBe(false);
    // Another thread is independent.
    expect(await runs.acquireThread("t2", "run-b", 1_000)).toBe(true);

    // Renewed in time, the lease holds past its first expiry.
    now = new Date(now.getTime() + 900);
    expect(await runs.renewThread("t1", "run-a", 1_000)).toBe(true);
    now = new Date(now.getTime() + 900);
    expect(await runs.acquireThread("t1", "run-b", 1_000)).toBe(false);

    // Not renewed (its process died), it expires and another run takes the thread over.
    now = new Date(now.getTime() + 1_001);
    expect(await runs.acquireThread("t1", "run-b", 1_000)).toBe(true);
    expect(await runs.renewThread("t1", "run-a", 1_000)).toBe(false);
    // The old holder's release does not free the new holder's thread.
    await runs.releaseThread("t1", "run-a");
    expect(await runs.acquireThread("t1", "run-c", 1_000)).toBe(false);
    await runs.releaseThread("t1", "run-b");
    expect(await runs.acquireThread("t1", "run-c", 1_000)).toBe(true);
  });

  it("records runs and lets their owner ask a running one to stop", async () => {
    await runs.start({ runId: "r1", threadId: "t1", uid: "alice", agentId: "a1" });
    expect(await runs.cancelRequested("r1")).toBe(false);
    expect(await runs.requestCancel("bob", "r1")).toBe(false);
    expect(await runs.requestCancel("alice", "missing")).toBe(false);
    expect(await runs.requestCancel("alice", "r1")).toBe(true);
    expect(await runs.cancelRequested("r1")).toBe(true);

    await runs.finish("r1", "interrupted");
    expect(await runs.get("alice", "r1")).toMatchObject({ status: "interrupted", thread_id: "t1" });
    expect(await runs.get("bob", "r1")).toBeUndefined();
    // A finished run cannot be cancelled any more.
    expect(await runs.requestCancel("alice", "r1")).toBe(false);
  });
});
