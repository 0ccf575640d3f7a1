import { Client } from "@langchain/langgraph-sdk";
import { afterEach, describe, expect, it } from "vitest";
import { ScriptedChatModel, type ScriptStep } from "../../models/scripted.js";
import { createServer, type SubagentGraphServer } from "../../server/app.js";
import { runIdOf } from "../support/http-server.js";
import {
  mainAgentPayload,
  makeRuntime,
  type RuntimeFixture,
  subagentPayload,
} from "../support/runtime-fixture.js";
import { namespacesByChildThread, subagentNamespaces } from "../support/subagent-stream.js";
import { until } from "../support/until.js";

const human = (content: string) => ({ messages: [{ type: "human", content }] });

interface Running {
  fixture: RuntimeFixture;
  server: SubagentGraphServer;
  base: string;
  token: string;
  client: Client;
}

/**
 * The official SDK `Client` against our server on an ephemeral port, with the token as its API
 * key (sent as `x-api-key`, as the SDK does).
 */
describe("the LangGraph SDK Client against our server", { timeout: 30_000 }, () => {
  let running: Running | undefined;
  afterEach(async () => {
    if (!running) return;
    await running.server.runs.cancelAll();
    await running.server.app.close();
    await running.fixture.dispose();
    running = undefined;
  });

  async function start(models: Record<string, ScriptedChatModel> = {}): Promise<Running> {
    const fixture = await makeRuntime({ saver: "sqlite", models });
    const server = await createServer(fixture.runtime);
    const base = await server.app.listen({ host: "127.0.0.1", port: 0 });
    await fixture.runtime.users.add("alice");
    const { token } = await fixture.runtime.users.issueToken("alice");
    const client = new Client({ apiUrl: base, apiKey: token, defaultHeaders: {} });
    running = { fixture, server, base, token, client };
    return running;
  }

  /** Alice's "boss" (offline model) with two offline subagents. */
  async function offlineBoss(runtime: RuntimeFixture["runtime"]) {
    await runtime.agents.create("alice", subagentPayload("researcher", "offline"));
    await runtime.agents.create("alice", subagentPayload("reviewer", "offline"));
    return runtime.agents.create(
      "alice",
      mainAgentPayload("boss", "offline", ["researcher", "reviewer"]),
    );
  }

  /** Alice's "boss" that delegates to a subagent whose model answers after 30 s (or an abort). */
  async function slowBoss() {
    const main = new ScriptedChatModel("main", [
      {
        reply: {
          toolCalls: [
            { name: "task", args: { description: "take your time", subagent_type: "slow" } },
          ],
        },
      },
      { reply: { text: "after the cancel" } },
    ] satisfies ScriptStep[]);
    const slow = new ScriptedChatModel("slow", [{ reply: { text: "never" }, delayMs: 30_000 }]);
    const { fixture, client } = await start({ "scripted:main": main, "scripted:slow": slow });
    await fixture.runtime.agents.create("alice", subagentPayload("slow", "scripted:slow"));
    const boss = await fixture.runtime.agents.create(
      "alice",
      mainAgentPayload("boss", "scripted:main", ["slow"]),
    );
    return { client, boss, slow, fixture };
  }

  it("lists assistants, creates a thread, waits for a run and reads state and history", async () => {
    const { fixture, client } = await start();
    const boss = await offlineBoss(fixture.runtime);

    const assistants = await client.assistants.search({ limit: 10 });
    expect(assistants.map((a) => [a.assistant_id, a.graph_id])).toEqual([[boss.id, "boss"]]);
    expect((await client.assistants.get("boss")).assistant_id).toBe(boss.id);

    const thread = await client.threads.create({ metadata: { topic: "tides" } });
    expect(thread.status).toBe("idle");
    const values = (await client.runs.wait(thread.thread_id, boss.id, {
      input: human("Why are there tides?"),
    })) as { messages: { type: string; content: string }[]; subagent_runs: unknown[] };

    expect(values.messages.map((m) => m.type)).toEqual(["human", "ai", "tool", "tool", "ai"]);
    expect(values.messages.at(-1)?.content).toContain("[offline model]");
    expect(values.subagent_runs).toHaveLength(2);

    const state = await client.threads.getState(thread.thread_id);
    expect(state.next).toEqual([]);
    expect(state.checkpoint.thread_id).toBe(thread.thread_id);
    expect(state.values).toEqual(values);
    const history = await client.threads.getHistory(thread.thread_id, { limit: 50 });
    expect(history[0]?.checkpoint.checkpoint_id).toBe(state.checkpoint.checkpoint_id);
    expect(history.length).toBeGreaterThan(3);
    // Newest first: each entry's parent is the next one.
    expect(history[0]?.parent_checkpoint?.checkpoint_id).toBe(history[1]?.checkpoint.checkpoint_id);
    const searched = await client.threads.search({ metadata: { topic: "tides" } });
    expect(searched.map((t) => t.thread_id)).toEqual([thread.thread_id]);
    expect(searched[0]?.values).toEqual(values);
    // `select` answers with those fields only (and reads no state without values or status).
    const selected = await client.threads.search({
      metadata: { topic: "tides" },
      select: ["thread_id", "metadata", "status"],
    });
    expect(selected).toEqual([
      {
        thread_id: thread.thread_id,
        metadata: expect.objectContaining({ topic: "tides" }),
        status: "idle",
      },
    ]);
    const light = await client.threads.search({ select: ["thread_id", "updated_at"] });
    expect(light).toEqual([{ thread_id: thread.thread_id, updated_at: expect.any(String) }]);
    await expect(client.threads.search({ select: ["context"] })).rejects.toThrow(/select/);
  });

  it("streams values, updates and messages, with each subagent's events under the tools:<task id> namespace LangGraph gives it", async () => {
    const { fixture, client } = await start();
    const boss = await offlineBoss(fixture.runtime);
    const thread = await client.threads.create();
    let created: { run_id: string; thread_id?: string } | undefined;

    const events: { event: string; data: unknown }[] = [];
    for await (const part of client.runs.stream(thread.thread_id, boss.id, {
      input: human("Compare solar and wind"),
      streamMode: ["values", "updates", "messages-tuple"],
      streamSubgraphs: true,
      onRunCreated: (meta) => {
        created = meta;
      },
    })) {
      events.push(part);
    }

    expect(events[0]?.event).toBe("metadata");
    expect(created?.run_id).toBe((events[0]?.data as { run_id?: string } | undefined)?.run_id);
    const last = events.at(-1);
    expect(last?.event).toBe("values");
    const finalValues = last?.data as { subagent_runs: { child_thread_id: string }[] };
    const children = finalValues.subagent_runs.map((run) => run.child_thread_id);
    expect(children).toHaveLength(2);
    // Each child streams under one namespace of its own, `tools:<task id>` (the parent's tools
    // task that called it, as LangGraph streams a graph run inside a tool), where its node
    // updates and its tokens arrive; its tokens' metadata names its thread.
    const byChild = namespacesByChildThread(events);
    const namespaces = children.map((child) => byChild.get(child) ?? []);
    for (const seen of namespaces) {
      expect(seen).toEqual([expect.stringMatching(/^tools:[0-9a-f-]{36}$/)]);
      expect(events.some((e) => e.event === `updates|${seen[0]}`)).toBe(true);
    }
    expect(new Set(namespaces.flat()).size).toBe(2);
    expect(subagentNamespaces(events).sort()).toEqual(namespaces.flat().sort());
    // No child token is streamed as the main agent's.
    for (const e of events.filter((e) => e.event === "messages")) {
      const [, metadata] = e.data as [unknown, { thread_id?: string }?];
      expect(children).not.toContain(metadata?.thread_id);
    }
    // The parent's own tokens come at the root, one message id per streamed message.
    const rootTokens = events.filter((e) => e.event === "messages");
    expect(rootTokens.length).toBeGreaterThan(0);
    for (const token of rootTokens) {
      expect((token.data as [{ id?: string }])[0].id).toEqual(expect.any(String));
    }

    // Without subgraphs nothing from inside a child is streamed.
    const flat: string[] = [];
    for await (const part of client.runs.stream(thread.thread_id, boss.id, {
      input: human("And hydro?"),
      streamMode: ["updates", "messages-tuple"],
    })) {
      flat.push(part.event);
    }
    expect(flat.filter((name) => name.includes("|"))).toEqual([]);
    expect(flat).toContain("messages");
  });

  it("replays from a checkpoint, forks with an edited message, and reads a child's history", async () => {
    const { fixture, client, base, token } = await start();
    const boss = await offlineBoss(fixture.runtime);
    const thread = await client.threads.create();
    const first = (await client.runs.wait(thread.thread_id, boss.id, {
      input: human("Compare solar and wind"),
    })) as { subagent_runs: { child_thread_id: string }[] };
    const oldChildren = first.subagent_runs.map((run) => run.child_thread_id);
    const history = await client.threads.getHistory(thread.thread_id, { limit: 100 });
    // The oldest state holding just the question: before the model's first turn.
    const start_ = [...history]
      .reverse()
      .find((state) => (state.values as { messages?: unknown[] }).messages?.length === 1);
    const startId = start_?.checkpoint.checkpoint_id ?? "";
    // Each state of the history carries the subagent runs recorded at that point.
    const latest = history[0]?.values as { subagent_runs?: unknown[] } | undefined;
    expect(latest?.subagent_runs).toHaveLength(2);

    const replayed = (await client.runs.wait(thread.thread_id, boss.id, {
      checkpointId: startId,
    })) as { subagent_runs: { child_thread_id: string }[]; messages: { content: string }[] };
    const newChildren = replayed.subagent_runs.map((run) => run.child_thread_id);
    expect(newChildren).toHaveLength(2);
    expect(newChildren.filter((id) => oldChildren.includes(id))).toEqual([]);
    // The old children stay readable, history included.
    const oldChild = oldChildren[0] ?? "";
    const childHistory = await fetch(
      `${base}/threads/${thread.thread_id}/subagents/${oldChild}/history`,
      { headers: { "x-api-key": token } },
    );
    expect(childHistory.status).toBe(200);
    const childStates = (await childHistory.json()) as { values: { messages: unknown[] } }[];
    expect(childStates[0]?.values.messages).toHaveLength(2);

    // Fork: the same question id with new text, then run from the fork.
    const startValues = start_?.values as { messages?: { id: string }[] } | undefined;
    const question = startValues?.messages?.[0];
    // The reference server answers { checkpoint }, although the SDK's type says otherwise.
    const fork = (await client.threads.updateState(thread.thread_id, {
      values: {
        messages: [{ type: "human", content: "Compare tea and coffee", id: question?.id }],
      },
      checkpointId: startId,
    })) as unknown as { checkpoint: { checkpoint_id: string } };
    const forked = (await client.runs.wait(thread.thread_id, boss.id, {
      checkpointId: fork.checkpoint.checkpoint_id,
    })) as { messages: { content: string }[] };
    expect(forked.messages[0]?.content).toBe("Compare tea and coffee");
    expect(forked.messages.at(-1)?.content).toContain('"Compare tea and coffee"');

    // A finished turn with no input has nothing to run.
    await expect(client.runs.wait(thread.thread_id, boss.id, {})).rejects.toMatchObject({
      status: 422,
    });
  });

  it("joins a finished run's stream from the start, and its result", async () => {
    const { fixture, client } = await start();
    const boss = await offlineBoss(fixture.runtime);
    const thread = await client.threads.create();
    const run = await client.runs.create(thread.thread_id, boss.id, {
      input: human("Plan a picnic"),
      streamMode: ["values"],
    });
    expect(run.status).toMatch(/pending|running/);
    const joined = (await client.runs.join(thread.thread_id, run.run_id)) as {
      messages: unknown[];
    };
    expect(joined.messages).toHaveLength(5);
    expect((await client.runs.get(thread.thread_id, run.run_id)).status).toBe("success");

    const replay: string[] = [];
    for await (const part of client.runs.joinStream(thread.thread_id, run.run_id, {
      lastEventId: "-1",
    })) {
      replay.push(part.event);
    }
    expect(replay[0]).toBe("metadata");
    expect(replay.at(-1)).toBe("values");
  });

  it("cancels a run and its subagents, answers 409 while the thread is busy, and keeps the thread usable", async () => {
    const { client, boss, slow, fixture } = await slowBoss();
    const thread = await client.threads.create();
    const run = await client.runs.create(thread.thread_id, boss.id, { input: human("go") });
    await until(() => slow.calls.length > 0);

    await expect(
      client.runs.create(thread.thread_id, boss.id, { input: human("again") }),
    ).rejects.toMatchObject({ status: 409 });
    expect((await client.threads.get(thread.thread_id)).status).toBe("busy");

    await client.runs.cancel(thread.thread_id, run.run_id, true);

    expect((await client.runs.get(thread.thread_id, run.run_id)).status).toBe("interrupted");
    expect(slow.calls[0]?.finishedAt).toBeUndefined();
    const state = await client.threads.getState(thread.thread_id);
    const records = (state.values as { subagent_runs: { status: string }[] }).subagent_runs;
    expect(records.map((record) => record.status)).toEqual(["cancelled"]);
    expect((await client.threads.get(thread.thread_id)).status).toBe("idle");
    // The repaired thread takes the next message.
    const next = (await client.runs.wait(thread.thread_id, boss.id, {
      input: human("are you there?"),
    })) as { messages: { content: string }[] };
    expect(next.messages.at(-1)?.content).toBe("after the cancel");
    void fixture;
  });

  it("finishes a streamed run whose client disconnects, unless it asked to cancel", async () => {
    const { fixture, client, base, token } = await start();
    const boss = await offlineBoss(fixture.runtime);
    const thread = await client.threads.create();

    const disconnectAfterFirstEvent = async (extra: Record<string, unknown>) => {
      const controller = new AbortController();
      const response = await fetch(`${base}/threads/${thread.thread_id}/runs/stream`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-api-key": token },
        body: JSON.stringify({
          assistant_id: boss.id,
          input: human("Compare tea and coffee"),
          stream_mode: ["values"],
          ...extra,
        }),
        signal: controller.signal,
      });
      const location = response.headers.get("content-location") ?? "";
      const reader = response.body?.getReader();
      await reader?.read();
      controller.abort();
      return location.split("/").pop() ?? "";
    };

    const kept = await disconnectAfterFirstEvent({});
    const keptRun = await waitForEnd(client, thread.thread_id, kept);
    expect(keptRun.status).toBe("success");
    const state = await client.threads.getState(thread.thread_id);
    expect((state.values as { messages: unknown[] }).messages).toHaveLength(5);
    void keptRun;
  });

  it("cancels a streamed run on disconnect when on_disconnect is cancel", async () => {
    const { client, boss, slow, base, token } = await slowBossWithBase();
    const thread = await client.threads.create();
    const controller = new AbortController();
    const response = await fetch(`${base}/threads/${thread.thread_id}/runs/stream`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": token },
      body: JSON.stringify({
        assistant_id: boss.id,
        input: human("go"),
        stream_mode: ["updates"],
        on_disconnect: "cancel",
      }),
      signal: controller.signal,
    });
    const runId = runIdOf(response);
    await response.body?.getReader().read();
    await until(() => slow.calls.length > 0);
    controller.abort();

    const run = await waitForEnd(client, thread.thread_id, runId);
    expect(run.status).toBe("interrupted");
    expect(slow.calls[0]?.finishedAt).toBeUndefined();
  });

  it("refuses what it cannot honour with a 4xx naming the field", async () => {
    const { fixture, client } = await start();
    const boss = await offlineBoss(fixture.runtime);
    const thread = await client.threads.create();
    const attempts: [Record<string, unknown>, string][] = [
      [{ input: human("x"), streamMode: "events" }, "stream_mode"],
      [{ input: human("x"), multitaskStrategy: "enqueue" }, "multitask_strategy"],
      [{ command: { resume: "yes" } }, "command"],
      [{ input: { messages: [] } }, "input"],
      [{ input: human("x"), interruptBefore: ["tools"] }, "interrupt_before"],
      [{ input: human("x"), config: { configurable: { uid: "bob" } } }, "config.configurable"],
      [{ input: human("x"), context: { uid: "bob" } }, "context"],
    ];
    for (const [payload, field] of attempts) {
      const failure = await client.runs.create(thread.thread_id, boss.id, payload).then(
        () => undefined,
        (error: { status?: number; message?: string }) => error,
      );
      expect(failure?.status, field).toBe(422);
      expect(failure?.message, field).toContain(field);
    }
    await expect(client.threads.get("00000000-0000-4000-8000-000000000000")).rejects.toMatchObject({
      status: 404,
    });
    await expect(
      client.runs.wait("no-such-thread", boss.id, { input: human("x") }),
    ).rejects.toMatchObject({ status: 404 });
    // if_not_exists "create" makes the thread.
    const made = (await client.runs.wait("made-by-run", boss.id, {
      input: human("x"),
      ifNotExists: "create",
    })) as { messages: unknown[] };
    expect(made.messages.length).toBeGreaterThan(0);
  });

  it("uploads a file a run's subagent can read, and lists and downloads the outputs", async () => {
    const { fixture, base, token } = await start();
    await offlineBoss(fixture.runtime);
    const thread = await fixture.runtime.threads.create("alice");
    const form = new FormData();
    form.append("file", new Blob(["tides are caused by the moon\n"]), "brief.txt");
    const uploaded = await fetch(`${base}/threads/${thread.threadId}/files`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}` },
      body: form,
    });
    expect(uploaded.status).toBe(201);
    expect(await uploaded.json()).toMatchObject({
      path: "/home/gem/user-data/uploads/brief.txt",
      size: 29,
    });
    const listed = await fetch(
      `${base}/threads/${thread.threadId}/files?folder=/home/gem/user-data/uploads`,
      { headers: { authorization: `Bearer ${token}` } },
    );
    expect(
      ((await listed.json()) as { files: { path: string }[] }).files.map((f) => f.path),
    ).toEqual(["/home/gem/user-data/uploads/brief.txt"]);
    const content = await fetch(
      `${base}/threads/${thread.threadId}/files/content?path=${encodeURIComponent("/home/gem/user-data/uploads/brief.txt")}`,
      { headers: { authorization: `Bearer ${token}` } },
    );
    expect(await content.text()).toBe("tides are caused by the moon\n");
    const outside = await fetch(
      `${base}/threads/${thread.threadId}/files/content?path=${encodeURIComponent("/etc/passwd")}`,
      { headers: { authorization: `Bearer ${token}` } },
    );
    expect(outside.status).toBe(422);
    expect(((await outside.json()) as { error: { code: string } }).error.code).toBe("PATH_REFUSED");
  });

  async function slowBossWithBase() {
    const made = await slowBoss();
    const current = running as Running;
    return { ...made, base: current.base, token: current.token };
  }
});

async function waitForEnd(client: Client, threadId: string, runId: string) {
  let run = await client.runs.get(threadId, runId);
  const deadline = Date.now() + 15_000;
  while (["pending", "running"].includes(run.status) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    run = await client.runs.get(threadId, runId);
  }
  return run;
}
