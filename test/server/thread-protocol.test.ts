import { randomUUID } from "node:crypto";
import { readFile } from "node:fs/promises";
import { Client } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { ScriptedChatModel } from "../../models/scripted.js";
import { type HttpServer, startHttpServer } from "../support/http-server.js";
import { isRootEnd, openEvents, sendCommand, type WireEvent } from "../support/protocol-v2.js";
import { addOfflineBoss, mainAgentPayload } from "../support/runtime-fixture.js";
import { until } from "../support/until.js";

const ALL = ["values", "updates", "messages", "tools", "lifecycle", "input", "custom"];
const human = (content: string) => ({ messages: [{ type: "human", content }] });

/** What the official dev server sent for our graph (`test/support/capture-protocol-v2.ts`). */
interface Fixture {
  frames: { id: string; event: string; data: WireEvent }[];
  commands: Record<string, { status: number; body: Record<string, unknown> }>;
}
const fixture = JSON.parse(
  await readFile(new URL("../fixtures/protocol-v2/dev-server.json", import.meta.url), "utf8"),
) as Fixture;
const reference = fixture.frames.map((frame) => frame.data);

/** The keys of an event's `data` for each kind (`method` plus `data.event`), sorted. */
function shapes(events: WireEvent[]): Map<string, string> {
  const kinds = new Map<string, string>();
  for (const event of events) {
    const kind = `${event.method}:${event.params.data.event ?? ""}`;
    // The dev server adds the model call's `run_id` to message events; we have no such id.
    const keys = Object.keys(event.params.data).filter((key) => key !== "run_id" && key !== "role");
    kinds.set(kind, keys.sort().join(","));
  }
  return kinds;
}

describe("the thread protocol (v2) with the SDK's client.threads.stream", {
  timeout: 60_000,
}, () => {
  let server: HttpServer;
  const writer = new ScriptedChatModel("writer", [
    {
      reply: {
        toolCalls: [
          {
            name: "write_file",
            args: { path: "/home/gem/user-data/outputs/plan.md", content: "# Plan" },
          },
        ],
      },
    },
    { reply: { text: "The plan is written." } },
  ]);

  beforeAll(async () => {
    server = await startHttpServer({
      users: ["alice", "bob"],
      runtime: { models: { "scripted:writer": writer } },
    });
    await addOfflineBoss(server.fixture.runtime, "alice");
    await addOfflineBoss(server.fixture.runtime, "bob");
    await server.fixture.runtime.agents.create(
      "alice",
      mainAgentPayload("careful", "scripted:writer", undefined, {
        interrupt_on: { write_file: true },
      }),
    );
  });
  afterAll(async () => server?.stop());

  const clientOf = (uid: string) =>
    new Client({ apiUrl: server.base, apiKey: server.tokenOf(uid) });

  it("runs a turn over SSE: the SDK finds the subagent on its task call, with its own message, and the main answer", async () => {
    const thread = clientOf("alice").threads.stream({ assistantId: "boss" });
    const raw = await thread.subscribe(ALL as never);
    const events: WireEvent[] = [];
    const reading = (async () => {
      for await (const event of raw) {
        events.push(event as unknown as WireEvent);
        if (isRootEnd(event as unknown as WireEvent)) break;
      }
    })();
    const subagents: { name: string; callId: string; namespace: string[]; texts: string[] }[] = [];
    void (async () => {
      for await (const handle of thread.subagents) {
        const seen = {
          name: handle.name,
          callId: handle.callId,
          namespace: handle.namespace,
          texts: [] as string[],
        };
        subagents.push(seen);
        for await (const message of handle.messages) seen.texts.push(await message.text);
      }
    })();
    const started = await thread.run.start({ input: human("Plan a small launch") });
    expect(started).toMatchObject({ run_id: expect.any(String) });
    const output = (await thread.output) as { messages: { content: unknown }[] };
    await reading;
    await until(() => (subagents[0]?.texts.length ?? 0) > 0, 5_000);
    await thread.close();

    // One sequence from 1, the root running first and completed last.
    expect(events.map((event) => event.seq)).toEqual(events.map((_, index) => index + 1));
    expect(events[0]).toMatchObject({
      method: "lifecycle",
      params: { namespace: [], data: { event: "running", graph_name: "boss" } },
    });
    expect(events.at(-1)?.params.data).toEqual({ event: "completed", graph_name: "boss" });
    // The task call the main model made is the subagent the SDK shows, under tools:<task id>.
    const taskCall = events.find(
      (event) =>
        event.method === "messages" &&
        event.params.data.event === "content-block-finish" &&
        (event.params.data.content as { name?: string }).name === "task",
    );
    const callId = (taskCall?.params.data.content as { id?: string } | undefined)?.id;
    expect(callId).toEqual(expect.any(String));
    expect(subagents).toEqual([
      {
        name: "researcher",
        callId,
        namespace: [expect.stringMatching(/^tools:/)],
        texts: [expect.stringContaining("Speaking as: You are researcher")],
      },
    ]);
    // Its message streams under its namespace only: never at the root, whose conversation it is not.
    const childIds = events
      .filter(
        (event) =>
          event.method === "messages" &&
          event.params.data.event === "message-start" &&
          event.params.namespace[0]?.startsWith("tools:"),
      )
      .map((event) => event.params.data.id);
    expect(childIds).toHaveLength(1);
    const rootIds = events
      .filter(
        (event) =>
          event.method === "messages" &&
          event.params.data.event === "message-start" &&
          event.params.namespace.length === 1,
      )
      .map((event) => event.params.data.id);
    expect(rootIds).toHaveLength(2);
    expect(rootIds).not.toContain(childIds[0]);
    const last = output.messages.at(-1);
    expect(JSON.stringify(last?.content)).toContain("Here is what my subagents found");
    // The same kinds of events, with the same fields, as the official dev server sends.
    const ours = shapes(events);
    const theirs = shapes(reference.filter((event) => event.method !== "tasks"));
    for (const [kind, keys] of ours) {
      if (theirs.has(kind)) expect(`${kind} ${keys}`).toBe(`${kind} ${theirs.get(kind)}`);
    }
    for (const kind of theirs.keys()) {
      if (kind !== "messages:usage") expect(ours.has(kind), kind).toBe(true);
    }
  });

  /** Starts a run of `uid`'s boss on a new thread and returns every event up to its end. */
  async function finishedRun(uid: string): Promise<{ threadId: string; events: WireEvent[] }> {
    const threadId = randomUUID();
    const token = server.tokenOf(uid);
    const stream = await openEvents(server.base, token, threadId, { channels: ALL });
    const answer = await sendCommand(server.base, token, threadId, {
      id: 1,
      method: "run.start",
      params: { assistant_id: "boss", input: human("Plan a small launch") },
    });
    expect(answer.body).toMatchObject({
      type: "success",
      id: 1,
      result: { run_id: expect.any(String) },
      meta: { thread_id: threadId },
    });
    await stream.until(isRootEnd);
    stream.close();
    return { threadId, events: [...stream.events] };
  }

  it("filters by channel, namespace and depth on the server's side", async () => {
    const { threadId, events } = await finishedRun("alice");
    const token = server.tokenOf("alice");
    const cases: [unknown, (event: WireEvent) => boolean][] = [
      [{ channels: ["lifecycle"] }, (event) => event.method === "lifecycle"],
      [
        { channels: ["messages"], namespaces: [["tools"]] },
        (event) =>
          event.method === "messages" && event.params.namespace[0]?.startsWith("tools:") === true,
      ],
      [
        { channels: ["lifecycle", "values"], namespaces: [[]], depth: 0 },
        (event) =>
          ["lifecycle", "values"].includes(event.method) && event.params.namespace.length === 0,
      ],
      [
        { channels: ["input", "tools"] },
        (event) => ["input.requested", "tools"].includes(event.method),
      ],
    ];
    for (const [filter, wanted] of cases) {
      const expected = events.filter(wanted);
      expect(expected.length, JSON.stringify(filter)).toBeGreaterThan(0);
      const stream = await openEvents(server.base, token, threadId, filter);
      await stream.until((event) => event.seq === expected.at(-1)?.seq);
      stream.close();
      expect(
        stream.events.map((event) => event.seq),
        JSON.stringify(filter),
      ).toEqual(expected.map((event) => event.seq));
    }
  });

  it("replays after `since`, and a second run goes on with the thread's sequence", async () => {
    const { threadId, events } = await finishedRun("alice");
    const token = server.tokenOf("alice");
    const middle = events[Math.floor(events.length / 2)]?.seq ?? 0;
    const replay = await openEvents(server.base, token, threadId, { channels: ALL, since: middle });
    expect(replay.contentType).toContain("text/event-stream");
    await replay.until((event) => event.seq === events.at(-1)?.seq);
    expect(replay.events).toEqual(events.filter((event) => event.seq > middle));
    expect(replay.frames[0]).toEqual({
      id: String(middle + 1),
      event: events.find((e) => e.seq === middle + 1)?.method,
    });

    // The replay stream stays open: the next run's events follow on it, numbered on.
    const again = await sendCommand(server.base, token, threadId, {
      id: 2,
      method: "run.start",
      params: { assistant_id: "boss", input: human("And the budget?") },
    });
    expect(again.body.type).toBe("success");
    const end = await replay.until(
      (event) => isRootEnd(event) && event.seq > (events.at(-1)?.seq ?? 0),
    );
    replay.close();
    const second = replay.events.filter((event) => event.seq > (events.at(-1)?.seq ?? 0));
    expect(second[0]?.seq).toBe((events.at(-1)?.seq ?? 0) + 1);
    expect(second[0]?.params.data).toEqual({ event: "running", graph_name: "boss" });
    expect(end.params.data.event).toBe("completed");

    const state = await sendCommand(server.base, token, threadId, {
      id: 3,
      method: "state.get",
      params: { keys: ["messages"] },
    });
    expect(state.body).toMatchObject({
      type: "success",
      id: 3,
      meta: { thread_id: threadId, applied_through_seq: end.seq },
    });
    const result = state.body.result as {
      values: Record<string, unknown>;
      checkpoint: { id: string };
    };
    expect(Object.keys(result.values)).toEqual(["messages"]);
    expect(result.checkpoint.id).toEqual(expect.any(String));
    expect(Object.keys(result)).toEqual(
      Object.keys((fixture.commands["state.get"]?.body.result ?? {}) as object),
    );

    const tree = await sendCommand(server.base, token, threadId, {
      id: 4,
      method: "agent.getTree",
      params: {},
    });
    const root = (
      tree.body.result as {
        tree: { status: string; graph_name: string; children: { namespace: string[] }[] };
      }
    ).tree;
    expect(root).toMatchObject({ namespace: [], status: "completed", graph_name: "boss" });
    expect(root.children.some((child) => child.namespace[0]?.startsWith("tools:"))).toBe(true);
  });

  it("asks for approval with input.requested and input.respond answers it", async () => {
    const thread = clientOf("alice").threads.stream({ assistantId: "careful" });
    const stream = await openEvents(server.base, server.tokenOf("alice"), thread.threadId, {
      channels: ["input", "lifecycle"],
    });
    await thread.run.start({ input: human("Write the plan") });
    const paused = await stream.until(isRootEnd);
    expect(paused.params.data.event).toBe("interrupted");
    const asked = stream.events.find((event) => event.method === "input.requested");
    const interruptId = asked?.params.data.interrupt_id as string;
    expect(asked?.params.data.payload).toMatchObject({ actionRequests: [{ name: "write_file" }] });
    await until(() => thread.interrupts.length > 0, 5_000);
    expect(thread.interrupts.map((entry) => entry.interruptId)).toEqual([interruptId]);

    await thread.input.respond({
      namespace: [],
      interrupt_id: interruptId,
      response: { decisions: [{ type: "approve" }] },
    });
    await stream.until((event) => isRootEnd(event) && event.seq > paused.seq);
    stream.close();
    await thread.close();
    expect(stream.events.filter(isRootEnd).map((event) => event.params.data.event)).toEqual([
      "interrupted",
      "completed",
    ]);
    expect(stream.events.filter((event) => event.method === "input.requested")).toHaveLength(1);
    const [stored] = await server.fixture.runtime.threads
      .search("alice")
      .then((all) => all.filter((info) => info.threadId.startsWith(thread.threadId)));
    const files = await server.fixture.runtime.files.list("alice", stored?.threadId ?? "");
    expect(JSON.stringify(files)).toContain("plan.md");
    writer.assertComplete();
  });

  it("speaks the WebSocket transport (token in the upgrade's headers)", async () => {
    const token = server.tokenOf("alice");
    const client = new Client({ apiUrl: server.base, apiKey: null });
    const thread = client.threads.stream({
      assistantId: "boss",
      transport: "websocket",
      webSocketFactory: (url: string) =>
        new WebSocket(url, { headers: { authorization: `Bearer ${token}` } }) as never,
    });
    const messages: { namespace: string[]; text: string }[] = [];
    const reading = (async () => {
      for await (const message of thread.messages)
        messages.push({ namespace: message.namespace, text: await message.text });
    })();
    await thread.run.start({ input: human("Plan a small launch") });
    const output = (await thread.output) as { messages: { content: unknown }[] };
    expect(JSON.stringify(output.messages.at(-1)?.content)).toContain(
      "Here is what my subagents found",
    );
    const tree = await thread.agent.getTree();
    expect(JSON.stringify(tree)).toContain("tools:");
    await Promise.race([reading, new Promise((resolve) => setTimeout(resolve, 500))]);
    await thread.close();
    expect(messages.map((message) => message.namespace.length)).toEqual([1, 2, 1]);
    expect(messages[1]?.namespace[0]).toMatch(/^tools:/);
  });

  it("keeps each user's threads their own: another user's thread is not found, and its events never reach them", async () => {
    const threadId = randomUUID();
    const alice = server.tokenOf("alice");
    const bob = server.tokenOf("bob");
    const spy = await openEvents(server.base, bob, threadId, { channels: ALL });
    const watch = await openEvents(server.base, alice, threadId, { channels: ALL });
    await sendCommand(server.base, alice, threadId, {
      id: 1,
      method: "run.start",
      params: { assistant_id: "boss", input: human("secret plan") },
    });
    await watch.until(isRootEnd);
    watch.close();
    for (const command of [
      { id: 2, method: "state.get", params: {} },
      { id: 3, method: "input.respond", params: { interrupt_id: "x", response: {} } },
    ]) {
      const answer = await sendCommand(server.base, bob, threadId, command);
      expect(answer.status).toBe(404);
      expect(answer.body).toMatchObject({
        type: "error",
        id: command.id,
        error: "invalid_argument",
        message: expect.stringContaining(`thread "${threadId}" not found`),
      });
    }
    const tree = await sendCommand(server.base, bob, threadId, {
      id: 4,
      method: "agent.getTree",
      params: {},
    });
    expect(tree.body.result).toEqual({
      tree: { namespace: [], status: "started", graph_name: threadId },
    });
    // A socket of Bob's on Alice's thread id sees nothing of hers either.
    const socket = new WebSocket(
      `${server.base.replace("http", "ws")}/threads/${threadId}/stream/events`,
      { headers: { authorization: `Bearer ${bob}` } },
    );
    const frames: unknown[] = [];
    socket.on("message", (data) => frames.push(JSON.parse(String(data))));
    await new Promise((resolve) => socket.once("open", resolve));
    socket.send(
      JSON.stringify({ id: 1, method: "subscription.subscribe", params: { channels: ALL } }),
    );
    await new Promise((resolve) => setTimeout(resolve, 300));
    socket.close();
    expect(frames).toEqual([
      expect.objectContaining({
        type: "success",
        id: 1,
        result: { subscription_id: expect.any(String), replayed_events: 0 },
      }),
    ]);
    spy.close();
    expect(spy.events).toEqual([]);
    // Without a token: 401, as every route.
    expect(
      (
        await sendCommand(server.base, undefined, threadId, {
          id: 5,
          method: "state.get",
          params: {},
        })
      ).status,
    ).toBe(401);
    const anonymous = await openEvents(server.base, undefined, threadId, { channels: ALL });
    anonymous.close();
    expect(anonymous.status).toBe(401);
    const refused = new WebSocket(
      `${server.base.replace("http", "ws")}/threads/${threadId}/stream/events`,
    );
    const status = await new Promise<number>((resolve) => {
      refused.on("unexpected-response", (request, response) => {
        resolve(response.statusCode ?? 0);
        request.destroy();
      });
      refused.on("open", () => resolve(101));
    });
    expect(status).toBe(401);
  });
});
