import { afterEach, describe, expect, inject, it } from "vitest";
import { human, startTestFleet, type TestFleet } from "../support/fleet.js";
import { until } from "../support/until.js";

interface Values {
  messages: { type: string; content: string }[];
}

/**
 * The multitask strategies across processes, through the official SDK: an API-only process
 * takes the requests, a worker-only process runs them.
 */
describe("multitask strategies in a fleet", { timeout: 180_000 }, () => {
  let fleet: TestFleet | undefined;
  afterEach(async () => {
    await fleet?.close();
    fleet = undefined;
  });

  it("enqueues behind a run, interrupts it keeping its turn, or rolls it back", async () => {
    fleet = await startTestFleet(inject("postgresUrl"), "multitask");
    const { sdk, slowCalls, bossId } = fleet;
    const api = sdk(await fleet.start("api"));
    const worker = await fleet.start("worker");
    const thread = await api.threads.create();
    const humans = async () =>
      ((await api.threads.getState(thread.thread_id)).values as unknown as Values).messages
        .filter((message) => message.type === "human")
        .map((message) => message.content);

    // enqueue: the second run waits for the first, then runs on what it left.
    fleet.childDelayMs = 1500;
    const first = await api.runs.create(thread.thread_id, bossId, { input: human("one") });
    await until(() => slowCalls() === 1, 20_000);
    const queued = await api.runs.create(thread.thread_id, bossId, {
      input: human("two"),
      multitaskStrategy: "enqueue",
    });
    expect(queued).toMatchObject({ status: "pending", multitask_strategy: "enqueue" });
    // Queued with nothing to say: once "two" has run, its turn is complete, so the worker
    // refuses it at its start and it ends `error`.
    const empty = await api.runs.create(thread.thread_id, bossId, {
      multitaskStrategy: "enqueue",
    });
    expect(empty.status).toBe("pending");
    // The API process runs nothing itself, yet it sees the thread busy (run on the worker).
    expect((await api.threads.get(thread.thread_id)).status).toBe("busy");
    expect(
      (await api.threads.search({ limit: 10 })).find((t) => t.thread_id === thread.thread_id)
        ?.status,
    ).toBe("busy");
    // reject (the default) still refuses while the thread is busy.
    await expect(
      api.runs.create(thread.thread_id, bossId, { input: human("no") }),
    ).rejects.toMatchObject({ status: 409 });
    await api.runs.join(thread.thread_id, queued.run_id);
    expect((await api.runs.get(thread.thread_id, first.run_id)).status).toBe("success");
    expect((await api.runs.get(thread.thread_id, queued.run_id)).status).toBe("success");
    // Once its join has answered, its record says how it ended.
    await api.runs.join(thread.thread_id, empty.run_id);
    const emptyEnded = await api.runs.get(thread.thread_id, empty.run_id);
    expect(emptyEnded, JSON.stringify(emptyEnded)).toMatchObject({ status: "error" });
    expect(await humans()).toEqual(["one", "two"]);
    // As LangGraph's threads do, the thread shows how its last run ended.
    expect((await api.threads.get(thread.thread_id)).status).toBe("error");
    // The worker's metrics count it among the runs it ended in error, as its queue figures do.
    const metrics = await (await fetch(`${worker.base()}/metrics`)).text();
    expect(metrics).toContain("subagent_graph_queue_runs_failed_total 1\n");
    expect(metrics).toContain('subagent_graph_runs_finished_total{status="error"} 1\n');
    expect(metrics).toContain("subagent_graph_queue_runs_claimed_total 3\n");
    expect(metrics).toContain("subagent_graph_runs_started_total 3\n");

    // interrupt: the running run stops (its turn is kept, repaired), the new one runs next.
    fleet.childDelayMs = 60_000;
    const stopped = await api.runs.create(thread.thread_id, bossId, { input: human("three") });
    await until(() => slowCalls() === 3, 20_000);
    fleet.childDelayMs = 0;
    const interrupting = await api.runs.create(thread.thread_id, bossId, {
      input: human("four"),
      multitaskStrategy: "interrupt",
    });
    await api.runs.join(thread.thread_id, interrupting.run_id);
    // Stopped on another's request, it says which, as the pending runs it stopped do.
    expect(await api.runs.get(thread.thread_id, stopped.run_id)).toMatchObject({
      status: "interrupted",
      status_reason: `stopped for run ${interrupting.run_id} (multitask_strategy "interrupt")`,
    });
    expect((await api.runs.get(thread.thread_id, interrupting.run_id)).status).toBe("success");
    expect(await humans()).toEqual(["one", "two", "three", "four"]);

    // rollback: the running run stops and is deleted, the new one runs from where it started.
    fleet.childDelayMs = 60_000;
    const rolledBack = await api.runs.create(thread.thread_id, bossId, { input: human("five") });
    await until(() => slowCalls() === 5, 20_000);
    fleet.childDelayMs = 0;
    const rollingBack = await api.runs.create(thread.thread_id, bossId, {
      input: human("six"),
      multitaskStrategy: "rollback",
    });
    const values = (await api.runs.join(thread.thread_id, rollingBack.run_id)) as unknown as Values;
    expect(values.messages.at(-1)?.content).toBe("final answer");
    await expect(api.runs.get(thread.thread_id, rolledBack.run_id)).rejects.toMatchObject({
      status: 404,
    });
    expect(await humans()).toEqual(["one", "two", "three", "four", "six"]);
    const runs = await api.runs.list(thread.thread_id, { limit: 20 });
    expect(runs.map((run) => run.run_id)).not.toContain(rolledBack.run_id);
    expect(runs).toHaveLength(6);

    // An unknown checkpoint is refused by the API process before anything is queued, as on one
    // process: a run a worker found it could not start would leave the thread in error.
    await expect(
      api.runs.create(thread.thread_id, bossId, { input: human("lost"), checkpointId: "nope" }),
    ).rejects.toMatchObject({ status: 404 });
    expect(await api.runs.list(thread.thread_id, { limit: 20 })).toHaveLength(6);
    expect((await api.threads.get(thread.thread_id)).status).toBe("idle");

    // rollback of a thread's first run: nothing older to branch from, so the thread starts
    // empty again (the stopped run's checkpoints are deleted, as the SDK's rollback does).
    const fresh = await api.threads.create();
    fleet.childDelayMs = 60_000;
    const firstRun = await api.runs.create(fresh.thread_id, bossId, { input: human("seven") });
    await until(() => slowCalls() === 7, 20_000);
    fleet.childDelayMs = 0;
    const replacing = await api.runs.create(fresh.thread_id, bossId, {
      input: human("eight"),
      multitaskStrategy: "rollback",
    });
    const freshValues = (await api.runs.join(
      fresh.thread_id,
      replacing.run_id,
    )) as unknown as Values;
    expect(freshValues.messages.filter((m) => m.type === "human").map((m) => m.content)).toEqual([
      "eight",
    ]);
    await expect(api.runs.get(fresh.thread_id, firstRun.run_id)).rejects.toMatchObject({
      status: 404,
    });
    // No checkpoint of the stopped run is left in the thread's history.
    const history = await api.threads.getHistory(fresh.thread_id, { limit: 100 });
    const seen = history.flatMap((state) =>
      ((state.values as unknown as Values | undefined)?.messages ?? []).map((m) => m.content),
    );
    expect(seen).not.toContain("seven");
  });
});
