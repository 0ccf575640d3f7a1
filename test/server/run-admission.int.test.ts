/**
 * Runs admitted in arrival order (`server/live-runs/run-admission.ts`), seen through the official
 * SDK: with one place and a loop that never has time to spare, a second run waits `pending`
 * while the first runs, starts when it ends, and answers; a waiting run that is cancelled stops
 * at once, without waiting for its turn; and the thread it was on runs again afterwards.
 */
import { Client } from "@langchain/langgraph-sdk";
import { afterEach, describe, expect, it } from "vitest";
import { ScriptedChatModel } from "../../models/scripted.js";
import { createServer } from "../../server/app.js";
import { Gate } from "../support/gate.js";
import { mainAgentPayload, makeRuntime } from "../support/runtime-fixture.js";
import { until } from "../support/until.js";

const human = (content: string) => ({ messages: [{ type: "human", content }] });

describe("runs admitted in arrival order", { timeout: 30_000 }, () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it("holds a run pending while the loop is full, runs it next, and stops a cancelled one at once", async () => {
    const gate = new Gate();
    const model = new ScriptedChatModel("main", [
      { reply: { text: "first answer" }, hold: (_call, signal) => gate.pass(signal) },
      { reply: { text: "second answer" } },
      { reply: { text: "third answer" } },
    ]);
    const fixture = await makeRuntime({ saver: "sqlite", models: { "scripted:main": model } });
    cleanups.push(() => fixture.dispose());
    // One place, and a loop that never reads as having time to spare: the floor alone admits.
    const server = await createServer(fixture.runtime, {
      admission: { floor: 1, busyAbove: -1, sampleMs: 10 },
    });
    cleanups.push(async () => {
      await server.runs.cancelAll();
      await server.app.close();
    });
    const base = await server.app.listen({ host: "127.0.0.1", port: 0 });
    await fixture.runtime.users.add("alice");
    const { token } = await fixture.runtime.users.issueToken("alice");
    await fixture.runtime.agents.create("alice", {
      ...mainAgentPayload("boss", "scripted:main", []),
      is_default: true,
    });
    const client = new Client({ apiUrl: base, apiKey: token });

    const [one, two, three] = await Promise.all([1, 2, 3].map(() => client.threads.create()));
    if (!one || !two || !three) throw new Error("threads not created");
    const first = await client.runs.create(one.thread_id, "boss", { input: human("one") });
    await until(() => gate.reached);
    const second = await client.runs.create(two.thread_id, "boss", { input: human("two") });
    const third = await client.runs.create(three.thread_id, "boss", { input: human("three") });
    expect((await client.runs.get(two.thread_id, second.run_id)).status).toBe("pending");
    expect((await client.runs.get(three.thread_id, third.run_id)).status).toBe("pending");
    // The second thread is held by its waiting run: another run there is refused, as on any
    // busy thread.
    await expect(
      client.runs.create(two.thread_id, "boss", { input: human("again") }),
    ).rejects.toMatchObject({ status: 409 });

    // Cancelled while it waits: it ends now, the first run still holding the only place.
    await client.runs.cancel(three.thread_id, third.run_id);
    const cancelled = await client.runs.join(three.thread_id, third.run_id);
    expect(cancelled).not.toHaveProperty("messages.0");
    expect((await client.runs.get(three.thread_id, third.run_id)).status).toBe("interrupted");
    expect((await client.runs.get(two.thread_id, second.run_id)).status).toBe("pending");
    expect((await client.runs.get(one.thread_id, first.run_id)).status).toBe("running");
    expect(model.calls).toHaveLength(1);

    gate.release();
    const answered = (await client.runs.join(two.thread_id, second.run_id)) as {
      messages: { content: string }[];
    };
    expect(answered.messages.at(-1)?.content).toBe("second answer");
    expect((await client.runs.get(one.thread_id, first.run_id)).status).toBe("success");
    // The cancelled run's thread is free again, and runs.
    const again = (await client.runs.wait(three.thread_id, "boss", {
      input: human("three, again"),
    })) as { messages: { content: string }[] };
    expect(again.messages.at(-1)?.content).toBe("third answer");
  });
});
