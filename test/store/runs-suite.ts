/**
 * The run store's contract (runs and thread leases), written once and run on every database we
 * ship. Each dialect's test file calls `runRunStoreSuite(name, openFresh)`; the opener must
 * return an empty, migrated database on every call, and the suite closes it.
 */

import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Database } from "../../store/database.js";
import { RunRepository } from "../../store/runs.js";
import type { ProcessIdentity } from "../../util/process-identity.js";

const RUNNER: ProcessIdentity = {
  instanceId: "instance-1",
  host: "box-1",
  pid: 4242,
  pidScope: "linux:boot:pid:[1]",
  pidStart: "777",
};

/** Runs the run store suite against databases made by `openDatabase`. */
export function runRunStoreSuite(name: string, openDatabase: () => Promise<Database>): void {
  describe(`RunRepository on ${name}`, () => {
    let database: Database;
    let now: Date;
    let runs: RunRepository;

    beforeEach(async () => {
      database = await openDatabase();
      now = new Date("2026-01-01T00:00:00.000Z");
      runs = new RunRepository(database.db, { now: () => now });
    });
    afterEach(async () => {
      await database.close();
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
      expect(await runs.lease("t1")).toMatchObject({ run_id: "run-a", expired: true });
      expect(await runs.acquireThread("t1", "run-b", 1_000)).toBe(true);
      expect(await runs.renewThread("t1", "run-a", 1_000)).toBe(false);
      // The old holder's release does not free the new holder's thread.
      await runs.releaseThread("t1", "run-a");
      expect(await runs.acquireThread("t1", "run-c", 1_000)).toBe(false);
      await runs.releaseThread("t1", "run-b");
      expect(await runs.lease("t1")).toBeUndefined();
      expect(await runs.acquireThread("t1", "run-c", 1_000)).toBe(true);
    });

    it("breaks a lease only as it was read: a renewed one stays", async () => {
      expect(await runs.acquireThread("t1", "run-a", 1_000)).toBe(true);
      const read = await runs.lease("t1");
      expect(read).toEqual({
        run_id: "run-a",
        lease_until: "2026-01-01T00:00:01.000Z",
        expired: false,
      });
      now = new Date(now.getTime() + 500);
      expect(await runs.renewThread("t1", "run-a", 1_000)).toBe(true);
      expect(await runs.breakLease("t1", "run-a", read?.lease_until ?? "")).toBe(false);
      expect(await runs.breakLease("t1", "run-b", "2026-01-01T00:00:01.500Z")).toBe(false);
      expect(await runs.breakLease("t1", "run-a", "2026-01-01T00:00:01.500Z")).toBe(true);
      expect(await runs.lease("t1")).toBeUndefined();
    });

    it("records runs and lets their owner ask a running one to stop", async () => {
      await runs.start({ runId: "r1", threadId: "t1", uid: "alice", agentId: "a1" });
      expect(await runs.cancelRequested("r1")).toBe(false);
      expect(await runs.requestCancel("bob", "r1")).toBe(false);
      expect(await runs.requestCancel("alice", "missing")).toBe(false);
      expect(await runs.requestCancel("alice", "r1")).toBe(true);
      expect(await runs.cancelRequested("r1")).toBe(true);

      // Stopped as asked, the run says why; a run that ended otherwise keeps no such reason.
      await runs.end("r1", "t1", "interrupted");
      expect(await runs.get("alice", "r1")).toMatchObject({
        status: "interrupted",
        thread_id: "t1",
        status_reason: "cancelled by its user",
        subagent_runs: "[]",
      });
      expect(await runs.get("bob", "r1")).toBeUndefined();
      // A finished run cannot be cancelled any more.
      expect(await runs.requestCancel("alice", "r1")).toBe(false);

      await runs.start({ runId: "r2", threadId: "t2", uid: "alice", agentId: "a1" });
      expect(await runs.requestCancel("alice", "r2", "stopped for run r3")).toBe(true);
      await runs.end("r2", "t2", "success");
      expect(await runs.get("alice", "r2")).toMatchObject({
        status: "success",
        status_reason: null,
      });
      await runs.start({ runId: "r4", threadId: "t4", uid: "alice", agentId: "a1" });
      await runs.end("r4", "t4", "interrupted");
      expect(await runs.get("alice", "r4")).toMatchObject({ status_reason: null });
    });

    it("names the process running a run, and keeps the records a run made with its end", async () => {
      await runs.start({
        runId: "r1",
        threadId: "t1",
        uid: "alice",
        agentId: "a1",
        runner: RUNNER,
      });
      expect(await runs.find("r1")).toMatchObject({
        status: "running",
        runner_instance: "instance-1",
        runner_host: "box-1",
        runner_pid: 4242,
        runner_pid_scope: "linux:boot:pid:[1]",
        runner_pid_start: "777",
      });
      const records = [{ id: "call-1", status: "completed" }];
      now = new Date(now.getTime() + 1_000);
      await runs.end("r1", "t1", "error", { subagentRuns: records });
      const row = await runs.find("r1");
      expect(row).toMatchObject({ status: "error", updated_at: "2026-01-01T00:00:01.000Z" });
      expect(JSON.parse(row?.subagent_runs ?? "")).toEqual(records);
    });

    it("lists a thread's runs newest first, by status and page, and deletes them with it", async () => {
      const at = (seconds: number) => {
        now = new Date(Date.UTC(2026, 0, 1, 0, 0, seconds));
      };
      at(1);
      await runs.start({ runId: "r-b", threadId: "t1", uid: "alice", agentId: "a1" });
      // Same start time: the run id decides, in byte order ("R" before "r").
      await runs.start({ runId: "R-a", threadId: "t1", uid: "alice", agentId: "a1" });
      at(2);
      await runs.start({
        runId: "r-c",
        threadId: "t1",
        uid: "alice",
        agentId: "a1",
        metadata: { source: "nightly", attempt: 2 },
      });
      await runs.start({ runId: "r-other", threadId: "t2", uid: "alice", agentId: "a1" });
      await runs.start({ runId: "r-bob", threadId: "t1", uid: "bob", agentId: "a1" });
      await runs.end("r-b", "t1", "success");
      await runs.end("R-a", "t1", "error");

      const ids = (rows: { run_id: string }[]) => rows.map((row) => row.run_id);
      expect(ids(await runs.listForThread("alice", "t1"))).toEqual(["r-c", "R-a", "r-b"]);
      expect(ids(await runs.listForThread("alice", "t1", { limit: 2, offset: 1 }))).toEqual([
        "R-a",
        "r-b",
      ]);
      expect(ids(await runs.listForThread("alice", "t1", { status: "success" }))).toEqual(["r-b"]);
      expect(ids(await runs.listForThread("alice", "t1", { status: "running" }))).toEqual(["r-c"]);
      expect(await runs.listForThread("carol", "t1")).toEqual([]);
      expect(await runs.listForThread("alice", "t\u0000")).toEqual([]);
      const [newest] = await runs.listForThread("alice", "t1", { limit: 1 });
      expect(JSON.parse(newest?.metadata ?? "")).toEqual({ source: "nightly", attempt: 2 });
      expect((await runs.find("r-b"))?.metadata).toBe("{}");

      await runs.deleteForThread("t1");
      expect(await runs.listForThread("alice", "t1")).toEqual([]);
      expect(await runs.find("r-bob")).toBeUndefined();
      expect(ids(await runs.listForThread("alice", "t2"))).toEqual(["r-other"]);
    });

    it("ends a run and frees its thread at once, and leaves a run taken over alone", async () => {
      const held = async (runId: string, threadId: string) => {
        await runs.start({ runId, threadId, uid: "alice", agentId: "a1", runner: RUNNER });
        expect(await runs.acquireThread(threadId, runId, 60_000)).toBe(true);
      };
      await held("r1", "t1");
      await runs.end("r1", "t1", "success", {}, { attempt: 1, runnerInstance: "instance-1" });
      expect((await runs.find("r1"))?.status).toBe("success");
      // The thread is free the moment the run reads over: the next run takes it.
      expect(await runs.lease("t1")).toBeUndefined();
      expect(await runs.acquireThread("t1", "r2", 60_000)).toBe(true);

      // A holder that no longer holds the row (another worker's attempt, same run id) changes
      // neither the row nor that attempt's lease.
      await held("r3", "t3");
      await runs.end("r3", "t3", "error", {}, { attempt: 1, runnerInstance: "someone-else" });
      expect((await runs.find("r3"))?.status).toBe("running");
      expect((await runs.lease("t3"))?.run_id).toBe("r3");
    });

    it("interrupts only a run still running, with its reason and records", async () => {
      await runs.start({ runId: "r1", threadId: "t1", uid: "alice", agentId: "a1" });
      await runs.start({ runId: "r2", threadId: "t1", uid: "alice", agentId: "a1" });
      await runs.start({ runId: "r3", threadId: "t2", uid: "bob", agentId: "a1" });
      await runs.end("r2", "t1", "success");
      expect((await runs.running()).map((row) => row.run_id)).toEqual(["r1", "r3"]);
      expect((await runs.running("t1")).map((row) => row.run_id)).toEqual(["r1"]);

      expect(await runs.interrupt("r1", "its process stopped", [{ id: "c1" }])).toBe(true);
      expect(await runs.interrupt("r2", "its process stopped", [])).toBe(false);
      expect(await runs.find("r1")).toMatchObject({
        status: "interrupted",
        status_reason: "its process stopped",
        subagent_runs: '[{"id":"c1"}]',
      });
      expect(await runs.find("r2")).toMatchObject({ status: "success", status_reason: null });
      expect((await runs.running()).map((row) => row.run_id)).toEqual(["r3"]);
    });
  });
}
