import type { AIMessageChunk } from "@langchain/core/messages";
import { ChatOpenAI } from "@langchain/openai";
import { tool } from "langchain";
import { afterEach, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import {
  createStrictScript,
  type FakeHandler,
  type FakeOpenAIServer,
  routeByModel,
  startFakeOpenAIServer,
} from "../support/fake-openai-server.js";

const openServers: FakeOpenAIServer[] = [];

async function start(handler: FakeHandler): Promise<FakeOpenAIServer> {
  const server = await startFakeOpenAIServer(handler);
  openServers.push(server);
  return server;
}

afterEach(async () => {
  await Promise.all(openServers.splice(0).map((server) => server.close()));
});

/** The real client, pointed at the fake. maxRetries: 0 so error replies surface at once. */
function chatModel(server: FakeOpenAIServer, model = "gpt-4o-mini"): ChatOpenAI {
  return new ChatOpenAI({
    model,
    apiKey: "test-key",
    configuration: { baseURL: server.url },
    maxRetries: 0,
  });
}

async function collect(stream: AsyncIterable<AIMessageChunk>): Promise<AIMessageChunk[]> {
  const chunks: AIMessageChunk[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  return chunks;
}

function merge(chunks: AIMessageChunk[]): AIMessageChunk {
  const [first, ...rest] = chunks;
  if (first === undefined) throw new Error("stream produced no chunks");
  return rest.reduce((acc, chunk) => acc.concat(chunk), first);
}

const twoToolCalls = {
  content: "",
  toolCalls: [
    { id: "call_weather", name: "get_weather", arguments: { city: "Paris", unit: "celsius" } },
    { name: "get_time", arguments: { timezone: "Europe/Paris" } },
  ],
};

describe("fake OpenAI server with the real ChatOpenAI client", () => {
  it("answers invoke with text, usage and the recorded request", async () => {
    const server = await start(() => ({
      content: "Hello from the fake.",
      usage: { prompt_tokens: 11, completion_tokens: 5 },
    }));

    const reply = await chatModel(server).invoke("Say hello");

    expect(reply.content).toBe("Hello from the fake.");
    expect(reply.tool_calls).toEqual([]);
    expect(reply.usage_metadata).toMatchObject({
      input_tokens: 11,
      output_tokens: 5,
      total_tokens: 16,
    });
    expect(reply.response_metadata).toMatchObject({ finish_reason: "stop" });
    expect(server.requests).toHaveLength(1);
    expect(server.requests[0]).toMatchObject({
      model: "gpt-4o-mini",
      stream: false,
      messages: [{ role: "user", content: "Say hello" }],
    });
    expect(server.authorizations).toEqual(["Bearer test-key"]);
    expect(server.failures).toEqual([]);
  });

  it("returns two tool calls with parsed args and ids", async () => {
    const server = await start(() => twoToolCalls);

    const reply = await chatModel(server).invoke("What's the weather and time in Paris?");

    expect(reply.tool_calls).toEqual([
      {
        type: "tool_call",
        id: "call_weather",
        name: "get_weather",
        args: { city: "Paris", unit: "celsius" },
      },
      { type: "tool_call", id: "call_0_1", name: "get_time", args: { timezone: "Europe/Paris" } },
    ]);
    expect(reply.response_metadata).toMatchObject({ finish_reason: "tool_calls" });
    expect(reply.usage_metadata?.total_tokens).toBeGreaterThan(0);
    expect(server.failures).toEqual([]);
  });

  it("streams text in several chunks, with usage when the client asks for it", async () => {
    const server = await start(() => ({ content: "Streaming works over real SSE." }));

    const chunks = await collect(await chatModel(server).stream("Stream please"));

    const textChunks = chunks.filter((chunk) => chunk.content !== "");
    expect(textChunks.length).toBeGreaterThan(1);
    const merged = merge(chunks);
    expect(merged.content).toBe("Streaming works over real SSE.");
    expect(merged.usage_metadata?.total_tokens).toBeGreaterThan(0);
    // ChatOpenAI asks for a usage chunk by default (streamUsage: true).
    expect(server.requests[0]).toMatchObject({
      stream: true,
      stream_options: { include_usage: true },
    });
    expect(server.failures).toEqual([]);
  });

  it("streams tool calls as argument fragments the client merges back", async () => {
    const server = await start(() => ({ ...twoToolCalls, content: "Checking." }));

    const chunks = await collect(await chatModel(server).stream("Weather and time?"));

    const argumentFragments = chunks.flatMap((chunk) => chunk.tool_call_chunks ?? []);
    expect(argumentFragments.length).toBeGreaterThan(2);
    const merged = merge(chunks);
    expect(merged.content).toBe("Checking.");
    expect(merged.tool_calls).toEqual([
      expect.objectContaining({
        id: "call_weather",
        name: "get_weather",
        args: { city: "Paris", unit: "celsius" },
      }),
      expect.objectContaining({
        id: "call_0_1",
        name: "get_time",
        args: { timezone: "Europe/Paris" },
      }),
    ]);
    expect(server.failures).toEqual([]);
  });

  it("receives the JSON schema of tools bound with bindTools", async () => {
    const server = await start(() => ({ content: "no tools needed" }));
    const getWeather = tool(async ({ city }) => `sunny in ${city}`, {
      name: "get_weather",
      description: "Current weather for a city.",
      schema: z.object({ city: z.string().describe("City name") }),
    });

    await chatModel(server).bindTools([getWeather]).invoke("Weather in Oslo?");

    expect(server.requests[0]?.tools).toEqual([
      {
        type: "function",
        function: {
          name: "get_weather",
          description: "Current weather for a city.",
          parameters: expect.objectContaining({
            type: "object",
            properties: { city: { type: "string", description: "City name" } },
            required: ["city"],
          }),
        },
      },
    ]);
    expect(server.failures).toEqual([]);
  });

  it("surfaces an HTTP 400 error reply as a thrown error", async () => {
    const server = await start(() => ({
      status: 400,
      error: { message: "Invalid value for 'messages'.", type: "invalid_request_error" },
    }));

    await expect(chatModel(server).invoke("bad request")).rejects.toMatchObject({
      status: 400,
      message: expect.stringContaining("Invalid value for 'messages'."),
    });
    expect(server.requests).toHaveLength(1);
    // An error the test asked for is not a failure.
    expect(server.failures).toEqual([]);
  });

  it("stops waiting when the client aborts during delayMs", async () => {
    const server = await start(() => ({ content: "too late", delayMs: 10_000 }));
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);

    await expect(chatModel(server).invoke("slow", { signal: controller.signal })).rejects.toThrow();

    await vi.waitFor(() => expect(server.aborted).toEqual([0]));
    expect(server.failures).toEqual([]);
  });

  it("records unexpected paths as failures and serves /v1/models", async () => {
    const server = await start(() => ({ content: "unused" }));

    const speech = await fetch(`${server.url}/audio/speech`, { method: "POST", body: "{}" });
    const models = await fetch(`${server.url}/models`);

    expect(speech.status).toBe(404);
    expect(await speech.json()).toEqual({
      error: {
        message: "unexpected request: POST /v1/audio/speech",
        type: "invalid_request_error",
        code: null,
        param: null,
      },
    });
    expect(models.status).toBe(200);
    expect(server.failures).toEqual(["unexpected request: POST /v1/audio/speech"]);
    expect(server.requests).toEqual([]);
  });
});

describe("createStrictScript", () => {
  it("records a request beyond the script as a failure (HTTP 500)", async () => {
    const script = createStrictScript([() => ({ content: "first and only" })]);
    const server = await start(script.handler);
    const model = chatModel(server);

    await expect(model.invoke("one")).resolves.toMatchObject({ content: "first and only" });
    await expect(model.invoke("two")).rejects.toMatchObject({ status: 500 });

    expect(server.failures).toHaveLength(1);
    expect(server.failures[0]).toMatch(/strict script exhausted: request #1/);
    expect(() => script.assertComplete()).not.toThrow();
  });

  it("assertComplete throws while steps remain unused", async () => {
    const script = createStrictScript([
      (request) => ({ content: `echo ${String(request.messages.at(-1)?.content)}` }),
      () => ({ content: "never requested" }),
    ]);
    const server = await start(script.handler);

    const reply = await chatModel(server).invoke("ping");

    expect(reply.content).toBe("echo ping");
    expect(script.used).toBe(1);
    expect(() => script.assertComplete()).toThrow(/1 of 2 step\(s\) never requested/);
    expect(server.failures).toEqual([]);
  });
});

describe("routeByModel", () => {
  it("dispatches by model name and fails unknown models", async () => {
    const parent = createStrictScript([() => ({ content: "parent says hi" })]);
    const child = createStrictScript([() => ({ content: "child says hi" })]);
    const server = await start(
      routeByModel({ "parent-model": parent.handler, "child-model": child.handler }),
    );

    expect((await chatModel(server, "child-model").invoke("x")).content).toBe("child says hi");
    expect((await chatModel(server, "parent-model").invoke("x")).content).toBe("parent says hi");
    await expect(chatModel(server, "stranger-model").invoke("x")).rejects.toMatchObject({
      status: 500,
    });

    parent.assertComplete();
    child.assertComplete();
    expect(server.failures).toEqual([
      'request #2 (model stranger-model): handler threw: no handler for model "stranger-model" (known: parent-model, child-model)',
    ]);
  });
});

describe("fault injection", () => {
  it("sends string arguments verbatim, so the client sees a call whose JSON does not parse", async () => {
    const server = await start(() => ({
      content: "",
      toolCalls: [{ id: "call_bad", name: "lookup", arguments: '{"q": ' }],
    }));

    const reply = await chatModel(server).invoke("go");

    expect(reply.tool_calls).toEqual([]);
    expect(reply.invalid_tool_calls).toEqual([
      expect.objectContaining({ id: "call_bad", name: "lookup", args: '{"q": ' }),
    ]);
    expect(server.failures).toEqual([]);
  });

  it("refuses, like OpenAI, a history with an unanswered tool call (and records it)", async () => {
    const server = await start(() => ({ content: "never sent" }));
    const send = (messages: unknown[]) =>
      fetch(`${server.url}/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ model: "gpt-4o-mini", messages }),
      });
    const call = { id: "c1", type: "function", function: { name: "x", arguments: "{}" } };
    const assistant = { role: "assistant", content: null, tool_calls: [call] };

    const unanswered = await send([
      { role: "user", content: "hi" },
      assistant,
      { role: "user", content: "again" },
    ]);
    const stray = await send([
      { role: "user", content: "hi" },
      { role: "tool", tool_call_id: "c9", content: "?" },
    ]);
    const answered = await send([
      { role: "user", content: "hi" },
      assistant,
      { role: "tool", tool_call_id: "c1", content: "ok" },
      { role: "user", content: "again" },
    ]);

    expect(unanswered.status).toBe(400);
    expect(await unanswered.text()).toContain(
      "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: c1",
    );
    expect(stray.status).toBe(400);
    expect(answered.status).toBe(200);
    expect(server.failures).toHaveLength(2);
  });

  it("hangs until the client gives up, before the reply or half-way through a stream", async () => {
    const server = await start((_request, index) => ({
      hang: index === 0 ? "before-reply" : "mid-stream",
    }));

    const before = chatModel(server).invoke("x", { signal: AbortSignal.timeout(200) });
    await expect(before).rejects.toThrow();
    const chunks: string[] = [];
    const streamed = (async () => {
      const stream = await chatModel(server).stream("x", { signal: AbortSignal.timeout(200) });
      for await (const chunk of stream) chunks.push(String(chunk.content));
    })();
    await expect(streamed).rejects.toThrow();

    expect(chunks.join("")).toBe("Let me");
    await vi.waitFor(() => expect(server.aborted).toEqual([0, 1]));
    expect(server.failures).toEqual([]);
  });

  it("resets the connection, and sends retry-after with an error reply", async () => {
    const server = await start((_request, index) =>
      index === 0
        ? { reset: true }
        : { status: 429, error: { message: "slow down" }, headers: { "retry-after": "7" } },
    );

    await expect(chatModel(server).invoke("x")).rejects.toThrow(/Connection error/);
    const limited = await fetch(`${server.url}/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "gpt-4o-mini", messages: [{ role: "user", content: "x" }] }),
    });
    expect(limited.status).toBe(429);
    expect(limited.headers.get("retry-after")).toBe("7");
    // Neither is a client disconnect.
    expect(server.aborted).toEqual([]);
    expect(server.failures).toEqual([]);
  });
});
