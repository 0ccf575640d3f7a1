/**
 * A run's record (`GET /threads/:id/runs/:run_id`, `runtime.runInfo`) shows the children the run
 * made whatever its end: a failed run and a cancelled one too, on the process that ran it and
 * on another process reading the shared store.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { SubagentRun } from "../../middleware/subagent-runs.js";
import { ScriptedChatModel, type ScriptStep } from "../../models/scripted.js";
import { createRuntime, type Runtime } from "../../runtime.js";
import { createServer, type SubagentGraphServer } from "../../server/app.js";
import {
  mainAgentPayload,
  makeRuntime,
  type RuntimeFixture,
  subagentPayload,
} from "../support/runtime-fixture.js";

interface Running {
  fixture: RuntimeFixture;
  server: SubagentGraphServer;
  base: string;
  token: string;
}

const task = (subagent: string, description: string) => ({
  name: "task",
  args: { description, subagent_type: subagent },
});

describe("run records show the children a run made", { timeout: 30_000 }, () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  /** A server over a SQLite runtime with alice's boss (scripted) and its two subagents. */
  async function start(main: ScriptStep[], first: ScriptStep[], second: ScriptStep[]) {
    const fixture = await makeRuntime({
      saver: "sqlite",
      models: {
        "scripted:main": new ScriptedChatModel("main", main),
        "scripted:first": new ScriptedChatModel("first", first),
        "scripted:second": new ScriptedChatModel("second", second),
      },
    });
    cleanups.push(() => fixture.dispose());
    const server = await createServer(fixture.runtime);
    cleanups.push(async () => {
      await server.runs.cancelAll();
      await server.app.close();
    });
    const base = await server.app.listen({ host: "127.0.0.1", port: 0 });
    await fixture.runtime.users.add("alice");
    const { token } = await fixture.runtime.users.issueToken("alice");
    await fixture.runtime.agents.create("alice", subagentPayload("first", "scripted:first"));
    await fixture.runtime.agents.create("alice", subagentPayload("second", "scripted:second"));
    const boss = await fixture.runtime.agents.create(
      "alice",
      mainAgentPayload("boss", "scripted:main", ["first", "second"]),
    );
    const running: Running = { fixture, server, base, token };
    const thread = (await call(running, "POST", "/threads", {})).body as { thread_id: string };
    return { running, boss, threadId: thread.thread_id };
  }

  /** Another server process's view: a second runtime and server on the same data dir. */
  async function another(running: Running): Promise<{ base: string; runtime: Runtime }> {
    const runtime = await createRuntime({
      dataDir: running.fixture.dataDir,
      checkpointer: "sqlite",
      env: {},
      warn: () => undefined,
    });
    cleanups.push(() => runtime.close());
    const server = await createServer(runtime);
    cleanups.push(() => server.app.close());
    return { base: await server.app.listen({ host: "127.0.0.1", port: 0 }), runtime };
  }

  async function call(
    running: Pick<Running, "base" | "token">,
    method: string,
    path: string,
    body?: unknown,
  ) {
    const response = await fetch(`${running.base}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${running.token}`,
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    return {
      status: response.status,
      body: text ? JSON.parse(text) : undefined,
      location: response.headers.get("content-location") ?? "",
    };
  }

  const summary = (records: SubagentRun[]) =>
    records.map((record) => [record.subagent_type, record.status]);

  it("a failed run shows its two completed children", async () => {
    const { running, boss, threadId } = await start(
      [
        { reply: { toolCalls: [task("first", "look here"), task("second", "look there")] } },
        { reply: new Error("the model broke after its children finished") },
      ],
      [{ reply: { text: "first done" } }],
      [{ reply: { text: "second done" } }],
    );
    const waited = await call(running, "POST", `/threads/${threadId}/runs/wait`, {
      assistant_id: boss.id,
      input: { messages: [{ type: "human", content: "dig" }] },
    });
    expect(waited.body).toMatchObject({ __error__: { message: expect.stringContaining("broke") } });
    const runId = waited.location.split("/").at(-1) ?? "";

    const local = (await call(running, "GET", waited.location)).body as {
      status: string;
      subagent_runs: SubagentRun[];
    };
    expect(local.status).toBe("error");
    expect(summary(local.subagent_runs)).toEqual([
      ["first", "completed"],
      ["second", "completed"],
    ]);
    const info = await running.fixture.runtime.runInfo("alice", runId);
    expect(info?.subagent_runs).toEqual(local.subagent_runs);

    // Another process answers from the shared store with the same records.
    const other = await another(running);
    const remote = await call({ base: other.base, token: running.token }, "GET", waited.location);
    expect(remote.body).toMatchObject({
      status: "error",
      status_reason: null,
      subagent_runs: local.subagent_runs,
    });
  });

  it("a cancelled run shows its finished child and its cancelled one", async () => {
    let slowStarted = false;
    const { running, boss, threadId } = await start(
      [{ reply: { toolCalls: [task("first", "quick"), task("second", "slow")] } }],
      [{ reply: { text: "first done" } }],
      [
        {
          reply: { text: "never" },
          hold: async (_call, signal) => {
            slowStarted = true;
            await new Promise((resolve) => signal?.addEventListener("abort", resolve));
          },
        },
      ],
    );
    const started = await call(running, "POST", `/threads/${threadId}/runs`, {
      assistant_id: boss.id,
      input: { messages: [{ type: "human", content: "dig" }] },
    });
    expect(started.status, JSON.stringify(started.body)).toBe(200);
    const runId = (started.body as { run_id: string }).run_id;
    // The first child's record is durable (a pending write of the unfinished step) before the
    // cancel, and the second child is waiting on its model.
    const saver = running.fixture.runtime.checkpointer;
    const firstIsDurable = async () => {
      const tuple = await saver.getTuple({
        configurable: { thread_id: threadId, checkpoint_ns: "" },
      });
      return (tuple?.pendingWrites ?? []).some(
        ([, channel, value]) =>
          channel === "subagent_runs" &&
          Array.isArray(value) &&
          value.some((record: SubagentRun) => record.subagent_type === "first"),
      );
    };
    const deadline = Date.now() + 10_000;
    while (!(slowStarted && (await firstIsDurable())) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(slowStarted && (await firstIsDurable())).toBe(true);

    const cancelled = await call(
      running,
      "POST",
      `/threads/${threadId}/runs/${runId}/cancel?wait=1`,
    );
    expect(cancelled.status).toBe(204);
    const record = (await call(running, "GET", `/threads/${threadId}/runs/${runId}`)).body as {
      status: string;
      status_reason: string | null;
      subagent_runs: SubagentRun[];
    };
    expect(record.status).toBe("interrupted");
    expect(record.status_reason).toBe("cancelled by its user");
    expect(summary(record.subagent_runs)).toEqual([
      ["first", "completed"],
      ["second", "cancelled"],
    ]);
    const other = await another(running);
    expect((await other.runtime.runInfo("alice", runId))?.subagent_runs).toEqual(
      record.subagent_runs,
    );
  });
});
