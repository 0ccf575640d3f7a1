import { afterEach, describe, expect, inject, it } from "vitest";
import { collect, human, startTestFleet, type TestFleet } from "../support/fleet.js";
import { until } from "../support/until.js";

/**
 * A fleet of real server processes on one PostgreSQL database, driven by the official SDK only:
 * API-only processes queue runs, worker-only processes claim and run them; any process streams,
 * replays and joins any run (the events go through the database), a cancel sent anywhere
 * reaches it, and a worker killed mid-run has its run resumed by another as attempt 2.
 */
describe("a fleet: queued runs, streams from any process, takeover", { timeout: 180_000 }, () => {
  let fleet: TestFleet | undefined;
  afterEach(async () => {
    await fleet?.close();
    fleet = undefined;
  });

  it("queues on A, runs on B, streams from C, cancels from A, and resumes after a kill", async () => {
    fleet = await startTestFleet(inject("postgresUrl"), "fleetstreams");
    const { token, sdk, slowCalls, runner, fake } = fleet;
    const boss = { id: fleet.bossId };
    const a = await fleet.start("api");
    const b = await fleet.start("worker");
    const c = await fleet.start("api");
    const onA = sdk(a);
    const onC = sdk(c);

    // A worker serves no API, only its health and metrics.
    expect((await fetch(`${b.base()}/ok`)).status).toBe(200);
    const onWorker = await fetch(`${b.base()}/threads`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: "{}",
    });
    expect(onWorker.status).toBe(404);
    // Nor does its banner point at an API it does not serve.
    expect(b.output()).toContain("worker only:");
    expect(b.output()).not.toContain("/openapi.json");
    expect(a.output()).toContain(`API docs: ${a.base()}/openapi.json`);

    // Queued on A (an API-only process), run by B (the only worker), followed live from C.
    const thread = await onA.threads.create();
    const run = await onA.runs.create(thread.thread_id, boss.id, {
      input: human("go"),
      streamMode: ["values", "updates"],
      streamSubgraphs: true,
    });
    expect(run.status).toMatch(/pending|running/);
    const live = await collect(onC.runs.joinStream(thread.thread_id, run.run_id));
    expect(await runner(run.run_id)).toBe(b.child.pid);
    expect(slowCalls()).toBe(1);
    expect(live[0]).toMatchObject({ event: "metadata", data: { run_id: run.run_id, attempt: 1 } });
    // The subagent's own events came too, under its namespace.
    expect(live.some((part) => part.event.startsWith("updates|tools:"))).toBe(true);
    const lastValues = live.filter((part) => part.event === "values").at(-1)?.data as {
      messages: { content: string }[];
    };
    expect(lastValues.messages.at(-1)?.content).toBe("final answer");
    // A replays the finished run from the start, and from any event on; C joins it.
    expect(
      await collect(onA.runs.joinStream(thread.thread_id, run.run_id, { lastEventId: "-1" })),
    ).toEqual(live);
    expect(
      await collect(onA.runs.joinStream(thread.thread_id, run.run_id, { lastEventId: "2" })),
    ).toEqual(live.slice(3));
    // A browser on another origin reads the stream of another process's run too (CORS).
    const raw = await fetch(`${c.base()}/threads/${thread.thread_id}/runs/${run.run_id}/stream`, {
      headers: {
        authorization: `Bearer ${token}`,
        origin: "http://app.test",
        "last-event-id": "-1",
      },
    });
    expect(raw.headers.get("access-control-allow-origin")).toBe("http://app.test");
    expect(raw.headers.get("content-location")).toBe(
      `/threads/${thread.thread_id}/runs/${run.run_id}`,
    );
    expect(await raw.text()).toContain("event: metadata");
    const joined = (await onC.runs.join(thread.thread_id, run.run_id)) as {
      messages: { content: string }[];
    };
    expect(joined.messages.at(-1)?.content).toBe("final answer");
    expect(await onA.runs.get(thread.thread_id, run.run_id)).toMatchObject({
      status: "success",
      attempt: 1,
    });

    // A run whose child hangs, followed from C and cancelled from A.
    fleet.childDelayMs = 60_000;
    const hanging = await onA.runs.create(thread.thread_id, boss.id, {
      input: human("again"),
      streamMode: ["values"],
    });
    const followed = collect(onC.runs.joinStream(thread.thread_id, hanging.run_id));
    await until(() => slowCalls() === 2, 20_000);
    await onA.runs.cancel(thread.thread_id, hanging.run_id);
    expect((await followed)[0]).toMatchObject({ event: "metadata" });
    expect((await onC.runs.get(thread.thread_id, hanging.run_id)).status).toBe("interrupted");
    await until(() => fake.aborted.length === 1);

    // A second worker joins; the worker running the next run is killed mid-child: the other
    // resumes it as attempt 2, the child going on on its own thread, and C's stream goes on to
    // the end of the run.
    const d = await fleet.start("worker");
    fleet.childDelayMs = 2000;
    const doomed = await onA.runs.create(thread.thread_id, boss.id, {
      input: human("once more"),
      streamMode: ["values"],
    });
    const resumed = collect(onC.runs.joinStream(thread.thread_id, doomed.run_id));
    await until(() => slowCalls() === 3, 20_000);
    const victim = (await runner(doomed.run_id)) === b.child.pid ? b : d;
    victim.child.kill("SIGKILL");
    await victim.exited;
    const parts = await resumed;
    expect(parts.filter((part) => part.event === "metadata").map((part) => part.data)).toEqual([
      { run_id: doomed.run_id, thread_id: expect.any(String), attempt: 1 },
      { run_id: doomed.run_id, thread_id: expect.any(String), attempt: 2 },
    ]);
    const finalValues = parts.filter((part) => part.event === "values").at(-1)?.data as {
      messages: { content: string }[];
      subagent_runs: { status: string }[];
    };
    expect(finalValues.messages.at(-1)?.content).toBe("final answer");
    expect(await onC.runs.get(thread.thread_id, doomed.run_id)).toMatchObject({
      status: "success",
      attempt: 2,
    });
    const survivor = victim === b ? d : b;
    expect(await runner(doomed.run_id)).toBe(survivor.child.pid);
    // The child's call in flight at the kill was made again, once; nothing else ran twice.
    expect(slowCalls()).toBe(4);
    expect(finalValues.subagent_runs.map((record) => record.status)).toEqual([
      "completed",
      "cancelled",
      "completed",
    ]);
    // The resumed child went on on its own thread: its question, then its one answer.
    const resumedChild = finalValues.subagent_runs.at(-1) as unknown as { child_thread_id: string };
    const childView = await fleet.admin.childThread("alice", resumedChild.child_thread_id);
    expect(childView.messages.map((message) => message.getType())).toEqual(["human", "ai"]);

    // A wait through an API-only process answers with the run's final state (which its log's
    // end marker carries from the worker); a join of a run over long since answers with the
    // thread's values now, as the API's join does.
    fleet.childDelayMs = 10;
    const waited = await onC.runs.wait(thread.thread_id, boss.id, { input: human("last one") });
    const state = await onA.threads.getState(thread.thread_id);
    const messages = (state.values as { messages: { content: string }[] }).messages;
    expect(messages.at(-1)?.content).toBe("final answer");
    expect(messages.some((message) => message.content === "last one")).toBe(true);
    expect(waited).toEqual(state.values);
    expect(await onC.runs.join(thread.thread_id, run.run_id)).toEqual(state.values);
  });
});
