import pg from "pg";
import { afterEach, describe, expect, inject, it } from "vitest";
import { type Database, openPostgresDatabase } from "../../store/database.js";
import { type NewQueuedRun, RunQueue } from "../../store/run-queue.js";
import { RunRepository } from "../../store/runs.js";
import { currentProcess } from "../../util/process-identity.js";
import { createTestDatabase } from "../support/postgres-cluster.js";
import { until } from "../support/until.js";

const clusterUrl = inject("postgresUrl");
const LEASE_MS = 30_000;

function queued(runId: string, threadId: string, uid = "alice"): NewQueuedRun {
  return {
    runId,
    threadId,
    uid,
    agentId: "agent",
    metadata: { n: runId },
    request: { input: `hello ${runId}`, streamModes: ["values"], subgraphs: false },
  };
}

/** Two pools on one database, as two worker processes have them. */
describe("the run queue on PostgreSQL", { timeout: 60_000 }, () => {
  const open: Database[] = [];
  afterEach(async () => {
    for (const database of open.splice(0)) await database.close();
  });

  async function twoWorkers() {
    const url = await createTestDatabase(clusterUrl, "runqueue");
    const first = await openPostgresDatabase(url);
    const second = await openPostgresDatabase(url);
    open.push(first, second);
    return {
      one: { queue: new RunQueue(first.db), runner: currentProcess("worker-one") },
      two: { queue: new RunQueue(second.db), runner: currentProcess("worker-two") },
      runs: new RunRepository(first.db),
    };
  }

  it("queues one run per thread, refusing a second while one is pending or running", async () => {
    const { one, runs } = await twoWorkers();
    expect(await one.queue.enqueue(queued("r1", "t1"))).toBe(true);
    expect(await one.queue.enqueue(queued("r2", "t1"))).toBe(false);
    expect(await one.queue.enqueue(queued("r3", "t2"))).toBe(true);
    expect(await runs.find("r1")).toMatchObject({ status: "pending", attempt: 0 });
    expect(await runs.find("r2")).toBeUndefined();
    expect(await one.queue.depth()).toMatchObject({ pending: 2 });

    // A thread held by a run outside the queue (a library run) is busy too.
    expect(await runs.acquireThread("t3", "library-run", LEASE_MS)).toBe(true);
    expect(await one.queue.enqueue(queued("r4", "t3"))).toBe(false);
  });

  it("claims the oldest run first, with the thread's lease, as attempt 1", async () => {
    const { one, runs } = await twoWorkers();
    await one.queue.enqueue(queued("old", "t1"));
    await one.queue.enqueue(queued("new", "t2"));
    const claimed = await one.queue.claim(one.runner, LEASE_MS);
    expect(claimed?.row).toMatchObject({
      run_id: "old",
      status: "running",
      attempt: 1,
      runner_instance: "worker-one",
      runner_pid: process.pid,
    });
    expect(claimed?.request).toEqual({
      input: "hello old",
      streamModes: ["values"],
      subgraphs: false,
    });
    expect(await runs.lease("t1")).toMatchObject({ run_id: "old", expired: false });
    expect((await one.queue.claim(one.runner, LEASE_MS))?.row.run_id).toBe("new");
    expect(await one.queue.claim(one.runner, LEASE_MS)).toBeUndefined();
  });

  it("claims a run at once for its enqueuer only when nothing waits and its thread is free", async () => {
    const { one, two, runs } = await twoWorkers();
    const claimer = { runner: one.runner, leaseMs: LEASE_MS };
    // A free thread and an empty queue: written running, attempt 1, with the thread's lease.
    const claimed = await one.queue.enqueueOrClaim(queued("now", "t1"), "reject", claimer);
    expect(claimed).toMatchObject({
      row: { run_id: "now", status: "running", attempt: 1, runner_instance: "worker-one" },
      request: { input: "hello now" },
    });
    const row = await runs.find("now");
    expect(row?.claimed_at).toBeTruthy();
    expect(row?.claimed_at).toBe(row?.created_at);
    expect(await runs.lease("t1")).toMatchObject({ run_id: "now", expired: false });
    // Its thread is busy now: refused, or queued behind it, never claimed.
    expect(await one.queue.enqueueOrClaim(queued("next", "t1"), "reject", claimer)).toBe("refused");
    expect(await one.queue.enqueueOrClaim(queued("next", "t1"), "enqueue", claimer)).toBe("queued");
    // A thread held outside the queue is not taken either.
    expect(await runs.acquireThread("t2", "library-run", LEASE_MS)).toBe(true);
    expect(await one.queue.enqueueOrClaim(queued("held", "t2"), "enqueue", claimer)).toBe("queued");
    expect(await runs.lease("t2")).toMatchObject({ run_id: "library-run" });
    // Nothing claimable waits ("next" and "held" wait for their threads): t3 goes at once.
    expect(await one.queue.enqueueOrClaim(queued("free", "t3"), "reject", claimer)).toMatchObject({
      row: { run_id: "free", status: "running" },
    });
    // A run a worker could claim waits (t4's): a newer one on a free thread must not pass it.
    await two.queue.enqueue(queued("waiting", "t4"));
    expect(await one.queue.enqueueOrClaim(queued("newer", "t5"), "reject", claimer)).toBe("queued");
    expect(await runs.find("newer")).toMatchObject({ status: "pending", attempt: 0 });
    expect((await two.queue.claim(two.runner, LEASE_MS))?.row.run_id).toBe("waiting");
  });

  it("never hands one run to two workers claiming at once", async () => {
    const { one, two } = await twoWorkers();
    const ids = Array.from({ length: 30 }, (_, index) => `run-${index}`);
    for (const [index, runId] of ids.entries()) {
      await one.queue.enqueue(queued(runId, `thread-${index}`));
    }
    const claimedBy = async (worker: typeof one) => {
      const mine: string[] = [];
      for (;;) {
        const claimed = await worker.queue.claim(worker.runner, LEASE_MS);
        if (!claimed) return mine;
        mine.push(claimed.row.run_id);
      }
    };
    const [first, second] = await Promise.all([claimedBy(one), claimedBy(two)]);
    expect([...first, ...second].sort()).toEqual([...ids].sort());
    expect(first.filter((runId) => second.includes(runId))).toEqual([]);
  });

  it("claims several runs in one go: the oldest of each free thread, never a held thread's", async () => {
    const { one, two, runs } = await twoWorkers();
    // t1 has two runs (only its oldest may go); t3 is held by a run outside the queue.
    await one.queue.enqueue(queued("a", "t1"));
    await one.queue.enqueue(queued("b", "t2"), "reject");
    await one.queue.enqueue(queued("c", "t1"), "enqueue");
    expect(await runs.acquireThread("t3", "library-run", LEASE_MS)).toBe(true);
    await one.queue.enqueue(queued("d", "t3"), "enqueue");
    await one.queue.enqueue(queued("e", "t4"));
    const claimed = await one.queue.claimSome(one.runner, LEASE_MS, 10);
    expect(claimed.map((run) => run.row.run_id)).toEqual(["a", "b", "e"]);
    expect(claimed.every((run) => run.row.status === "running" && run.row.attempt === 1)).toBe(
      true,
    );
    for (const [thread, runId] of [
      ["t1", "a"],
      ["t2", "b"],
      ["t4", "e"],
    ] as const) {
      expect(await runs.lease(thread)).toMatchObject({ run_id: runId, expired: false });
    }
    expect(await runs.find("c")).toMatchObject({ status: "pending", attempt: 0 });
    expect(await runs.find("d")).toMatchObject({ status: "pending", attempt: 0 });
    // Nothing else is claimable until a thread frees: not t1's second run, not the held t3's.
    expect(await two.queue.claimSome(two.runner, LEASE_MS, 10)).toEqual([]);
    await runs.releaseThread("t3", "library-run");
    expect(
      (await two.queue.claimSome(two.runner, LEASE_MS, 10)).map((run) => run.row.run_id),
    ).toEqual(["d"]);
    // At most as many as asked for.
    await one.queue.enqueue(queued("f", "t5"));
    await one.queue.enqueue(queued("g", "t6"));
    expect(
      (await one.queue.claimSome(one.runner, LEASE_MS, 1)).map((run) => run.row.run_id),
    ).toEqual(["f"]);
  });

  it("never hands one run to two workers claiming batches at once", async () => {
    const { one, two } = await twoWorkers();
    const ids = Array.from({ length: 40 }, (_, index) => `run-${index}`);
    for (const [index, runId] of ids.entries()) {
      await one.queue.enqueue(queued(runId, `thread-${index}`));
    }
    const claimedBy = async (worker: typeof one) => {
      const mine: string[] = [];
      for (;;) {
        const claimed = await worker.queue.claimSome(worker.runner, LEASE_MS, 3);
        if (claimed.length === 0) return mine;
        mine.push(...claimed.map((run) => run.row.run_id));
      }
    };
    const [first, second] = await Promise.all([claimedBy(one), claimedBy(two)]);
    expect([...first, ...second].sort()).toEqual([...ids].sort());
    expect(first.filter((runId) => second.includes(runId))).toEqual([]);
  });

  it("announces a queued run on its wake channel when it commits, a refused one not at all, and a freed thread only when a run waits for it", async () => {
    const url = await createTestDatabase(clusterUrl, "runqueue");
    const database = await openPostgresDatabase(url);
    open.push(database);
    const heard: string[] = [];
    const listener = new pg.Client({ connectionString: url });
    await listener.connect();
    try {
      listener.on("notification", (message) => heard.push(message.channel));
      await listener.query("LISTEN test_wake");
      const queue = new RunQueue(database.db, { wakeChannel: "test_wake" });
      expect(await queue.enqueue(queued("r1", "t1"))).toBe(true);
      await until(() => heard.length === 1);
      expect(await queue.enqueue(queued("r2", "t1"))).toBe(false);
      expect(await queue.enqueue(queued("r3", "t2"))).toBe(true);
      await until(() => heard.length === 2);
      // A freed thread is announced only when a run waits for it.
      await queue.announcePending("t-idle");
      expect(await queue.enqueue(queued("r4", "t2"), "enqueue")).toBe(true);
      await until(() => heard.length === 3);
      await queue.announcePending("t2");
      await until(() => heard.length === 4);
      // A round trip on the listener's connection delivers anything still on its way.
      await listener.query("SELECT 1");
      expect(heard).toEqual(["test_wake", "test_wake", "test_wake", "test_wake"]);
    } finally {
      await listener.end();
    }
  });

  it("puts a run whose worker died back in the queue, until it has been tried enough", async () => {
    const { one, two, runs } = await twoWorkers();
    await one.queue.enqueue(queued("r1", "t1"));
    await one.queue.claim(one.runner, LEASE_MS);
    expect(await one.queue.requeue("r1", "worker one died", 2)).toBe("pending");
    expect(await runs.find("r1")).toMatchObject({
      status: "pending",
      status_reason: "worker one died",
    });
    // Its thread's lease is the dead worker's until it runs out or is broken.
    await runs.releaseThread("t1", "r1");
    const again = await two.queue.claim(two.runner, LEASE_MS);
    expect(again?.row).toMatchObject({ run_id: "r1", attempt: 2, runner_instance: "worker-two" });
    expect(await two.queue.requeue("r1", "worker two died", 2)).toBe("error");
    const failed = await runs.find("r1");
    expect(failed?.status).toBe("error");
    expect(failed?.status_reason).toContain("tried 2 times");
    expect(failed?.status_reason).toContain("worker two died");
    // Not running any more: a late requeue changes nothing.
    expect(await two.queue.requeue("r1", "again", 2)).toBeUndefined();
  });

  it("rolls back to where the stopped run started, or to an empty thread after a first run", async () => {
    const { one } = await twoWorkers();
    const rollback = async (threadId: string, start: string | null) => {
      await one.queue.enqueue(queued(`${threadId}-a`, threadId));
      await one.queue.claim(one.runner, LEASE_MS);
      if (start !== null) await one.queue.setStartCheckpoint(`${threadId}-a`, start);
      await one.queue.enqueue(queued(`${threadId}-b`, threadId), "rollback");
      const db = open[0]?.db;
      const row = await db
        ?.selectFrom("runs")
        .select("request")
        .where("run_id", "=", `${threadId}-b`)
        .executeTakeFirstOrThrow();
      return JSON.parse(row?.request ?? "{}");
    };
    const branched = await rollback("t1", "checkpoint-9");
    expect(branched).toMatchObject({ rollbackOf: "t1-a", checkpointId: "checkpoint-9" });
    expect(branched.fromEmptyThread).toBeUndefined();
    // The thread had no checkpoint when the stopped run began: the new one starts empty.
    const first = await rollback("t2", "");
    expect(first).toMatchObject({ rollbackOf: "t2-a", fromEmptyThread: true });
    expect(first.checkpointId).toBeUndefined();
    // Stopped before it recorded its start: from the latest, nothing deleted.
    const unknown = await rollback("t3", null);
    expect(unknown.checkpointId).toBeUndefined();
    expect(unknown.fromEmptyThread).toBeUndefined();
  });

  it("keeps a resume's answers with its request, and never stops a run for a resume", async () => {
    const { one, two, runs } = await twoWorkers();
    const answers = { "0123456789abcdef0123456789abcdef": { decisions: [{ type: "approve" }] } };
    const resume = (runId: string): NewQueuedRun => {
      const { input: _input, ...request } = queued(runId, "t1").request;
      return { ...queued(runId, "t1"), request: { ...request, command: { resume: answers } } };
    };
    expect(await one.queue.enqueue(resume("r1"))).toBe(true);
    // Another process's worker gets the answers as they were queued.
    const claimed = await two.queue.claim(two.runner, LEASE_MS);
    expect(claimed?.request.command).toEqual({ resume: answers });

    // A second resume while it runs: refused where it would stop it, queued where it waits.
    expect(await one.queue.enqueue(resume("r2"), "interrupt")).toBe(false);
    expect(await one.queue.enqueue(resume("r3"), "rollback")).toBe(false);
    expect(await runs.find("r1")).toMatchObject({ status: "running", cancel_requested: 0 });
    expect(await one.queue.enqueue(resume("r4"), "enqueue")).toBe(true);
    expect(await runs.find("r4")).toMatchObject({ status: "pending" });
    // A new message may still stop it, as before.
    expect(await one.queue.enqueue(queued("r5", "t1"), "interrupt")).toBe(true);
    expect(await runs.find("r1")).toMatchObject({ cancel_requested: 1 });
  });

  it("does not count attempts handed back at a shutdown among those after which a run fails", async () => {
    const { one, two, runs } = await twoWorkers();
    await one.queue.enqueue(queued("r1", "t1"));
    // Two shutdowns in a row (a rolling deploy): each gives the run back, never fails it.
    for (const attempt of [1, 2]) {
      const claimed = await one.queue.claim(one.runner, LEASE_MS);
      expect(claimed?.row).toMatchObject({ run_id: "r1", attempt });
      expect(await one.queue.handBack("r1", attempt, "handed back: shutting down")).toBe(true);
      await runs.releaseThread("t1", "r1");
      expect(await runs.find("r1")).toMatchObject({ status: "pending", handed_back: attempt });
    }
    // Then a crash: with at most 2 deaths, one is not enough to fail it.
    expect((await two.queue.claim(two.runner, LEASE_MS))?.row.attempt).toBe(3);
    expect(await two.queue.requeue("r1", "worker two died", 2)).toBe("pending");
    await runs.releaseThread("t1", "r1");
    // A hand-back by an attempt that no longer holds the run changes nothing.
    expect(await one.queue.handBack("r1", 3, "late")).toBe(false);
    expect((await two.queue.claim(two.runner, LEASE_MS))?.row.attempt).toBe(4);
    expect(await one.queue.handBack("r1", 3, "late")).toBe(false);
    expect(await runs.find("r1")).toMatchObject({ status: "running", attempt: 4 });
    // The second death fails it.
    expect(await two.queue.requeue("r1", "worker two died again", 2)).toBe("error");
    expect((await runs.find("r1"))?.status_reason).toContain("tried 2 times");
  });

  it("lets only the attempt that holds a run end it, and cancels only pending runs of their owner", async () => {
    const { one, two, runs } = await twoWorkers();
    await one.queue.enqueue(queued("r1", "t1"));
    await one.queue.claim(one.runner, LEASE_MS);
    await two.queue.fail("r1", 1, two.runner, "not mine");
    expect((await runs.find("r1"))?.status).toBe("running");
    await one.queue.fail("r1", 1, one.runner, "its agent was deleted");
    expect(await runs.find("r1")).toMatchObject({
      status: "error",
      status_reason: "its agent was deleted",
    });
    expect(await runs.lease("t1")).toBeUndefined();

    await one.queue.enqueue(queued("r2", "t2"));
    expect(await one.queue.cancelPending("bob", "r2")).toBe(false);
    expect(await one.queue.cancelPending("alice", "r2")).toBe(true);
    expect((await runs.find("r2"))?.status).toBe("interrupted");
    expect(await one.queue.claim(one.runner, LEASE_MS)).toBeUndefined();
    expect(await runs.find("r1")).toMatchObject({ status: "error", attempt: 1 });
  });

  it("renews a claimed run's lease and reads its holder in one heartbeat", async () => {
    const { one, two, runs } = await twoWorkers();
    await one.queue.enqueue(queued("r1", "t1"));
    await one.queue.claim(one.runner, 50);
    const before = (await runs.lease("t1"))?.lease_until ?? "";
    expect(await one.queue.heartbeat("t1", "r1", LEASE_MS)).toEqual({
      renewed: true,
      holder: {
        status: "running",
        attempt: 1,
        runnerInstance: "worker-one",
        cancelRequested: false,
      },
    });
    expect((await runs.lease("t1"))?.lease_until ?? "").not.toBe(before);
    expect(await runs.requestCancel("alice", "r1")).toBe(true);
    expect((await one.queue.heartbeat("t1", "r1", LEASE_MS)).holder?.cancelRequested).toBe(true);

    // Taken over: the lease is the run's again, but the row names another worker's attempt.
    await one.queue.requeue("r1", "worker one stalled", 3);
    await runs.releaseThread("t1", "r1");
    await two.queue.claim(two.runner, LEASE_MS);
    expect((await one.queue.heartbeat("t1", "r1", LEASE_MS)).holder).toMatchObject({
      attempt: 2,
      runnerInstance: "worker-two",
    });
    // A lease another run holds is not renewed.
    await runs.releaseThread("t1", "r1");
    expect(await runs.acquireThread("t1", "someone-else", LEASE_MS)).toBe(true);
    expect((await one.queue.heartbeat("t1", "r1", LEASE_MS)).renewed).toBe(false);
    expect(await runs.lease("t1")).toMatchObject({ run_id: "someone-else" });
    expect(await one.queue.heartbeat("t1", "no-such-run", LEASE_MS)).toEqual({
      renewed: false,
      holder: undefined,
    });
  });
});
