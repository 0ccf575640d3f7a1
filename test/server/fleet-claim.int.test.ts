import { afterEach, describe, expect, inject, it } from "vitest";
import { collect, human, startTestFleet, type TestFleet } from "../support/fleet.js";
import { until } from "../support/until.js";

/**
 * Where a queued run runs, through the official SDK and real processes: a process that is also a
 * worker starts the run it was asked for itself when it has a free slot, and queues it for the
 * fleet when not; a run given back at a worker's shutdown goes on elsewhere without that
 * counting as a failure.
 */
describe("where a queued run runs in a fleet", { timeout: 120_000 }, () => {
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
    // A's slot is free again (its metrics say so once the run's end is fully recorded): a third
    // run starts on A at once.
    const activeOnA = async () =>
      /subagent_graph_queue_runs_active (\d+)/.exec(
        await (await fetch(`${a.base()}/metrics`)).text(),
      )?.[1];
    let active = await activeOnA();
    for (let tries = 0; active !== "0" && tries < 200; tries += 1) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      active = await activeOnA();
    }
    expect(active).toBe("0");
    const third = await api.runs.create((await api.threads.create()).thread_id, bossId, {
      input: human("three"),
    });
    expect(third.status).toBe("running");
    expect(await fleet.runner(third.run_id)).toBe(a.child.pid);
    await api.runs.join(third.thread_id, third.run_id);

    // A streamed run started in its request streams whole, from its first event, subagent's
    // included, with no event written before the stream began missing.
    const streamed = await collect(
      api.runs.stream((await api.threads.create()).thread_id, bossId, {
        input: human("four"),
        streamMode: ["values", "updates"],
        streamSubgraphs: true,
      }),
    );
    expect(streamed[0]).toMatchObject({ event: "metadata", data: { attempt: 1 } });
    const runId = String((streamed[0]?.data as { run_id?: string } | undefined)?.run_id);
    expect(await fleet.runner(runId)).toBe(a.child.pid);
    expect(streamed.some((part) => part.event.startsWith("updates|tools:"))).toBe(true);
    const last = streamed.filter((part) => part.event === "values").at(-1)?.data as {
      messages: { content: string }[];
    };
    expect(last.messages.at(-1)?.content).toBe("final answer");
  });

  it("does not count a run's hand-backs at shutdowns among the deaths that fail it", async () => {
    fleet = await startTestFleet(inject("postgresUrl"), "handback");
    const { sdk, bossId, admin, slowCalls } = fleet;
    // A run fails once its worker has died twice; a shutdown gives its runs back at once.
    const env = { SUBAGENT_RUN_MAX_ATTEMPTS: "2", SUBAGENT_DRAIN_MS: "100" };
    const api = sdk(await fleet.start("api", env));
    fleet.childDelayMs = 60_000;
    const first = await fleet.start("worker", env);
    const run = await api.runs.create((await api.threads.create()).thread_id, bossId, {
      input: human("one"),
    });
    await until(() => slowCalls() === 1, 20_000);
    // A rolling deploy: the first worker drains (SIGTERM), handing the run back.
    first.child.kill("SIGTERM");
    await first.exited;
    expect(await admin.runInfo("alice", run.run_id)).toMatchObject({
      status: "pending",
      handed_back: 1,
    });
    // The next worker resumes it, and dies (SIGKILL): one death of the two allowed.
    const second = await fleet.start("worker", env);
    await until(() => slowCalls() === 2, 20_000);
    second.child.kill("SIGKILL");
    await second.exited;
    fleet.childDelayMs = 0;
    const third = await fleet.start("worker", env);
    await api.runs.join(run.thread_id, run.run_id);
    const record = await admin.runInfo("alice", run.run_id);
    expect(record).toMatchObject({ status: "success", attempt: 3, handed_back: 1 });
    expect(await fleet.runner(run.run_id)).toBe(third.child.pid);
  });
});
