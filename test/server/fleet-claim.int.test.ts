import { afterEach, describe, expect, inject, it } from "vitest";
import { human, startTestFleet, type TestFleet } from "../support/fleet.js";

/**
 * Where a queued run starts, through the official SDK: a process that is also a worker starts
 * the run it was asked for itself when it has a free slot, and queues it for the fleet when not.
 */
describe("a run's start in a fleet", { timeout: 120_000 }, () => {
  let fleet: TestFleet | undefined;
  afterEach(async () => {
    await fleet?.close();
    fleet = undefined;
  });

  it("starts at once where it was asked while that process has room, else on another worker", async () => {
    fleet = await startTestFleet(inject("postgresUrl"), "claim");
    const { sdk, bossId, admin } = fleet;
    // One slot on A (API and worker), four on the worker-only B.
    const a = await fleet.start("all", { SUBAGENT_WORKERS: "1" });
    const b = await fleet.start("worker");
    const api = sdk(a);
    fleet.childDelayMs = 1500;

    const first = await api.runs.create((await api.threads.create()).thread_id, bossId, {
      input: human("one"),
    });
    // Claimed by A in the request itself: running already, no wait in the queue.
    expect(first.status).toBe("running");
    expect(await fleet.runner(first.run_id)).toBe(a.child.pid);
    const record = await admin.runInfo("alice", first.run_id);
    expect(record?.claimed_at).toBe(record?.created_at);
    expect(record?.attempt).toBe(1);

    // A's slot is taken: the next run is queued, and B claims it.
    const second = await api.runs.create((await api.threads.create()).thread_id, bossId, {
      input: human("two"),
    });
    let runner = await fleet.runner(second.run_id);
    for (let tries = 0; runner == null && tries < 200; tries += 1) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      runner = await fleet.runner(second.run_id);
    }
    expect(runner).toBe(b.child.pid);

    await api.runs.join(first.thread_id, first.run_id);
    await api.runs.join(second.thread_id, second.run_id);
    expect((await api.runs.get(first.thread_id, first.run_id)).status).toBe("success");
    expect((await api.runs.get(second.thread_id, second.run_id)).status).toBe("success");
    // A's slot is free again: a third run starts on A at once.
    const third = await api.runs.create((await api.threads.create()).thread_id, bossId, {
      input: human("three"),
    });
    expect(third.status).toBe("running");
    expect(await fleet.runner(third.run_id)).toBe(a.child.pid);
    await api.runs.join(third.thread_id, third.run_id);
  });
});
