import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { type HttpServer, startHttpServer } from "../support/http-server.js";
import { isRootEnd, openEvents, sendCommand } from "../support/protocol-v2.js";
import { addOfflineBoss } from "../support/runtime-fixture.js";

const deep = (levels: number) => `${"[".repeat(levels)}${"]".repeat(levels)}`;
const deepCommand = (levels: number) =>
  `{"id":1,"method":"state.get","params":{"keys":${deep(levels)}}}`;
const huge = () =>
  JSON.stringify({
    id: 1,
    method: "run.start",
    params: { assistant_id: "boss", input: "x".repeat(1_100_000) },
  });

/** Hostile commands, each with the error code and a word the message must name. */
const COMMANDS: [name: string, body: unknown, code: string, names: string][] = [
  ["not JSON", "{nope", "invalid_argument", "JSON"],
  ["empty body", "", "invalid_argument", "JSON"],
  ["a list", "[1,2]", "invalid_argument", "object"],
  ["no id", { method: "state.get", params: {} }, "invalid_argument", "id"],
  ["a negative id", { id: -1, method: "state.get" }, "invalid_argument", "id"],
  ["a fractional id", { id: 1.5, method: "state.get" }, "invalid_argument", "id"],
  ["a string id", { id: "1", method: "state.get" }, "invalid_argument", "id"],
  ["no method", { id: 1 }, "invalid_argument", "method"],
  ["a number method", { id: 1, method: 7 }, "invalid_argument", "method"],
  ["params a list", { id: 1, method: "state.get", params: [] }, "invalid_argument", "params"],
  [
    "an unknown method",
    { id: 1, method: "run.explode", params: {} },
    "unknown_command",
    "run.explode",
  ],
  [
    "__proto__",
    '{"id":1,"method":"state.get","params":{"__proto__":{"x":1}}}',
    "invalid_argument",
    "__proto__",
  ],
  ["JSON 100 levels deep", deepCommand(100), "invalid_argument", "deeper"],
  ["JSON 100,000 levels deep", deepCommand(100_000), "invalid_argument", "deeper"],
  ["over a MiB", huge(), "invalid_argument", "bytes"],
  [
    "run.start without assistant",
    { id: 1, method: "run.start", params: { input: {} } },
    "invalid_argument",
    "assistant_id",
  ],
  [
    "run.start of an unknown agent",
    {
      id: 1,
      method: "run.start",
      params: { assistant_id: "nobody", input: { messages: [{ type: "human", content: "hi" }] } },
    },
    "invalid_argument",
    "nobody",
  ],
  [
    "run.start with config a string",
    { id: 1, method: "run.start", params: { assistant_id: "boss", config: "x" } },
    "invalid_argument",
    "config",
  ],
  [
    "run.start with a bad strategy",
    { id: 1, method: "run.start", params: { assistant_id: "boss", multitask_strategy: 3 } },
    "invalid_argument",
    "multitask_strategy",
  ],
  [
    "input.respond without interrupt_id",
    { id: 1, method: "input.respond", params: { response: {} } },
    "invalid_argument",
    "interrupt_id",
  ],
  [
    "input.respond with responses a string",
    { id: 1, method: "input.respond", params: { responses: "x" } },
    "invalid_argument",
    "responses",
  ],
  [
    "input.respond with a bad entry",
    { id: 1, method: "input.respond", params: { responses: [{ response: 1 }] } },
    "invalid_argument",
    "responses.0.interrupt_id",
  ],
  [
    "input.respond with goto",
    { id: 1, method: "input.respond", params: { interrupt_id: "i", response: {}, goto: "x" } },
    "not_supported",
    "goto",
  ],
  [
    "state.get with keys a string",
    { id: 1, method: "state.get", params: { keys: "messages" } },
    "invalid_argument",
    "keys",
  ],
];

/** Hostile stream filters, each with a word the message must name. */
const FILTERS: [name: string, body: unknown, names: string][] = [
  ["not JSON", "{", "JSON"],
  ["a list", "[]", "filter"],
  ["no channels", {}, "channels"],
  ["channels a string", { channels: "values" }, "channels"],
  ["an unknown channel", { channels: ["values", "secrets"] }, "channels.1"],
  ["namespaces of numbers", { channels: ["values"], namespaces: [[1]] }, "namespaces.0"],
  ["a negative depth", { channels: ["values"], depth: -1 }, "depth"],
  ["since a string", { channels: ["values"], since: "5" }, "since"],
  ["an unknown field", { channels: ["values"], evil: true }, "evil"],
  ["deep JSON", `{"channels":["values"],"namespaces":${deep(200)}}`, "deeper"],
];

describe("hostile thread protocol input: the error envelope, never a 5xx, and the thread stays usable", {
  timeout: 60_000,
}, () => {
  let server: HttpServer;
  beforeAll(async () => {
    server = await startHttpServer({ users: ["alice"] });
    await addOfflineBoss(server.fixture.runtime, "alice");
  });
  afterAll(async () => server?.stop());

  /** A run on the thread completes (the thread is still usable). */
  async function runsToTheEnd(threadId: string, id = 99) {
    const token = server.tokenOf("alice");
    const stream = await openEvents(server.base, token, threadId, { channels: ["lifecycle"] });
    const answer = await sendCommand(server.base, token, threadId, {
      id,
      method: "run.start",
      params: { assistant_id: "boss", input: { messages: [{ type: "human", content: "go" }] } },
    });
    expect(answer.body.type, JSON.stringify(answer.body)).toBe("success");
    const end = await stream.until((event) => isRootEnd(event) && event.seq > 0);
    stream.close();
    expect(end.params.data.event).toBe("completed");
  }

  it("answers every bad command over HTTP with the envelope naming what is wrong", async () => {
    const threadId = randomUUID();
    await runsToTheEnd(threadId, 1);
    for (const [name, body, code, names] of COMMANDS) {
      const answer = await sendCommand(server.base, server.tokenOf("alice"), threadId, body);
      expect(answer.status, name).toBeLessThan(500);
      expect(answer.body, name).toMatchObject({ type: "error", error: code });
      expect(answer.body.message, name).toContain(names);
      const readable =
        typeof body === "object" &&
        body !== null &&
        Number.isInteger((body as { id?: unknown }).id) &&
        (body as { id: number }).id >= 0;
      expect(answer.body.id, name).toBe(readable ? (body as { id: number }).id : null);
    }
    // Over HTTP the subscription commands are the WebSocket's; each says where to go.
    for (const method of [
      "subscription.subscribe",
      "subscription.unsubscribe",
      "subscription.reconnect",
    ]) {
      const answer = await sendCommand(server.base, server.tokenOf("alice"), threadId, {
        id: 5,
        method,
        params: { channels: ["values"] },
      });
      expect(answer.body, method).toMatchObject({
        type: "error",
        id: 5,
        error: "not_supported",
        message: expect.stringContaining("stream/events"),
      });
    }
    // Resuming a thread that waits on nothing: refused by the run route's own rule.
    const respond = await sendCommand(server.base, server.tokenOf("alice"), threadId, {
      id: 6,
      method: "input.respond",
      params: { interrupt_id: "nope", response: { decisions: [] } },
    });
    expect(respond.body).toMatchObject({ type: "error", id: 6, error: "invalid_argument" });
    await runsToTheEnd(threadId);
  });

  it("refuses every bad stream filter with a 400 envelope", async () => {
    const threadId = randomUUID();
    for (const [name, body] of FILTERS) {
      const stream = await openEvents(server.base, server.tokenOf("alice"), threadId, body);
      stream.close();
      expect(stream.status, name).toBe(400);
    }
    for (const [name, body, names] of FILTERS) {
      const response = await fetch(`${server.base}/threads/${threadId}/stream/events`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${server.tokenOf("alice")}`,
          "content-type": "application/json",
        },
        body: typeof body === "string" ? body : JSON.stringify(body),
      });
      const answer = (await response.json()) as {
        type: string;
        id: unknown;
        error: string;
        message: string;
      };
      expect(answer, name).toMatchObject({ type: "error", id: null, error: "invalid_argument" });
      expect(answer.message, name).toContain(names);
    }
    const badId = await sendCommand(
      server.base,
      server.tokenOf("alice"),
      "x_own_0123456789abcdef",
      { id: 1, method: "state.get" },
    );
    expect(badId.status).toBe(400);
    expect(badId.body).toMatchObject({
      type: "error",
      error: "invalid_argument",
      message: expect.stringContaining("stored thread id"),
    });
    await runsToTheEnd(threadId);
  });

  it("answers every bad frame on a WebSocket with the envelope, and the connection goes on", async () => {
    const threadId = randomUUID();
    const socket = new WebSocket(
      `${server.base.replace("http", "ws")}/threads/${threadId}/stream/events`,
      {
        headers: { authorization: `Bearer ${server.tokenOf("alice")}` },
      },
    );
    const frames: {
      type: string;
      id: unknown;
      error?: string;
      message?: string;
      result?: Record<string, unknown>;
      method?: string;
      params?: { namespace: string[]; data: { event?: string } };
    }[] = [];
    socket.on("message", (data) => frames.push(JSON.parse(String(data))));
    await new Promise((resolve) => socket.once("open", resolve));
    const answerTo = async (payload: string | Buffer) => {
      const before = frames.filter((frame) => frame.type !== "event").length;
      socket.send(payload);
      const deadline = Date.now() + 10_000;
      while (
        frames.filter((frame) => frame.type !== "event").length === before &&
        Date.now() < deadline
      ) {
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      return frames.filter((frame) => frame.type !== "event").at(-1);
    };
    for (const [name, body, code, names] of COMMANDS) {
      const answer = await answerTo(typeof body === "string" ? body : JSON.stringify(body));
      expect(answer, name).toMatchObject({ type: "error", error: code });
      expect(answer?.message, name).toContain(names);
    }
    const binary = await answerTo(Buffer.from([0xff, 0xfe, 0x00, 0x01]));
    expect(binary).toMatchObject({
      type: "error",
      id: null,
      error: "invalid_argument",
      message: expect.stringContaining("binary"),
    });
    for (const [params, code, names] of [
      [{}, "invalid_argument", "channels"],
      [{ channels: ["values"], since: 3 }, "invalid_argument", "since"],
      [{ channels: ["nope"] }, "invalid_argument", "channels.0"],
    ] as const) {
      const answer = await answerTo(
        JSON.stringify({ id: 7, method: "subscription.subscribe", params }),
      );
      expect(answer, JSON.stringify(params)).toMatchObject({
        type: "error",
        id: 7,
        error: code,
        message: expect.stringContaining(names),
      });
    }
    expect(
      await answerTo(
        JSON.stringify({
          id: 8,
          method: "subscription.unsubscribe",
          params: { subscription_id: "nope" },
        }),
      ),
    ).toMatchObject({ type: "error", id: 8, error: "no_such_subscription" });
    expect(
      await answerTo(JSON.stringify({ id: 9, method: "subscription.unsubscribe", params: {} })),
    ).toMatchObject({ type: "error", id: 9, error: "invalid_argument" });
    expect(
      await answerTo(
        JSON.stringify({
          id: 10,
          method: "subscription.reconnect",
          params: { last_event_id: "x" },
        }),
      ),
    ).toMatchObject({ type: "error", id: 10, error: "invalid_argument" });

    // The same connection still works: subscribe, run, and the run's events arrive.
    const subscribed = await answerTo(
      JSON.stringify({
        id: 11,
        method: "subscription.subscribe",
        params: { channels: ["lifecycle"] },
      }),
    );
    expect(subscribed).toMatchObject({
      type: "success",
      id: 11,
      result: { subscription_id: expect.any(String) },
    });
    const started = await answerTo(
      JSON.stringify({
        id: 12,
        method: "run.start",
        params: { assistant_id: "boss", input: { messages: [{ type: "human", content: "go" }] } },
      }),
    );
    expect(started).toMatchObject({ type: "success", id: 12 });
    const deadline = Date.now() + 15_000;
    while (
      !frames.some(
        (frame) =>
          frame.type === "event" &&
          frame.params?.namespace.length === 0 &&
          frame.params.data.event === "completed",
      ) &&
      Date.now() < deadline
    ) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    socket.close();
    expect(
      frames.some((frame) => frame.type === "event" && frame.params?.data.event === "completed"),
    ).toBe(true);
    expect(
      frames
        .filter((frame) => frame.type === "event")
        .every((frame) => frame.method === "lifecycle"),
    ).toBe(true);
  });
});
