import { afterEach, describe, expect, inject, it } from "vitest";
import { human, startTestFleet, type TestFleet } from "../support/fleet.js";
import { isRootEnd, openEvents, sendCommand, type WireEvent } from "../support/protocol-v2.js";

const ALL = ["values", "updates", "messages", "tools", "lifecycle", "input", "custom"];

/**
 * The thread protocol on a fleet (PostgreSQL): a thread's events are followed from an API-only
 * process while the run executes on a worker process, read from the shared event log.
 */
describe("the thread protocol on a fleet", { timeout: 180_000 }, () => {
  let fleet: TestFleet | undefined;
  afterEach(async () => {
    await fleet?.close();
    fleet = undefined;
  });

  it("streams a thread on B (API only) while its run executes on A (worker), SDK and raw SSE", async () => {
    fleet = await startTestFleet(inject("postgresUrl"), "fleetprotocol");
    const a = await fleet.start("worker");
    const b = await fleet.start("api");
    const thread = fleet.sdk(b).threads.stream({ assistantId: fleet.bossId });
    const raw = await openEvents(b.base(), fleet.token, thread.threadId, { channels: ALL });
    const subagents: { name: string; namespace: string[] }[] = [];
    void (async () => {
      for await (const handle of thread.subagents)
        subagents.push({ name: handle.name, namespace: handle.namespace });
    })();
    const started = (await thread.run.start({ input: human("go") })) as { run_id: string };
    const output = (await thread.output) as { messages: { content: unknown }[] };
    const end = await raw.until(isRootEnd, 60_000);
    raw.close();
    await thread.close();

    expect(await fleet.runner(started.run_id)).toBe(a.child.pid);
    expect(end.params.data.event).toBe("completed");
    expect(JSON.stringify(output.messages.at(-1)?.content)).toContain("final answer");
    expect(subagents).toEqual([{ name: "slow", namespace: [expect.stringMatching(/^tools:/)] }]);
    const events: WireEvent[] = raw.events;
    expect(events.map((event) => event.seq)).toEqual(events.map((_, index) => index + 1));
    const child = events.filter((event) => event.params.namespace[0]?.startsWith("tools:"));
    expect(child.some((event) => event.method === "values")).toBe(true);
    expect(
      child.some(
        (event) => event.method === "tools" && event.params.data.event === "tool-finished",
      ),
    ).toBe(true);

    // A third process follows the thread too: a run started through B (queued, run by A) is
    // found by C, which was never asked to start it, and streamed from the shared log.
    const c = await fleet.start("api");
    const onC = await openEvents(c.base(), fleet.token, thread.threadId, {
      channels: ["lifecycle", "values"],
      namespaces: [[]],
      depth: 0,
    });
    const again = await sendCommand(b.base(), fleet.token, thread.threadId, {
      id: 2,
      method: "run.start",
      params: { assistant_id: fleet.bossId, input: human("again") },
    });
    expect(again.body).toMatchObject({ type: "success", id: 2 });
    const second = await onC.until(isRootEnd, 60_000);
    onC.close();
    expect(await fleet.runner((again.body.result as { run_id: string }).run_id)).toBe(a.child.pid);
    expect(second.params.data.event).toBe("completed");
    expect(onC.events[0]?.params.data).toMatchObject({ event: "running" });
    const values = onC.events.filter((event) => event.method === "values").at(-1)?.params.data as {
      messages: { content: unknown }[];
    };
    expect(values.messages.map((message) => message.content)).toContain("again");
  });
});
