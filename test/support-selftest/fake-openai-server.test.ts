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

    const embeddings = await fetch(`${server.url}/embeddings`, { method: "POST", body: "{}" });
    const models = await fetch(`${server.url}/models`);

    expect(embeddings.status).toBe(404);
    expect(await embeddings.json()).toEqual({
      error: {
        message: "unexpected request: POST /v1/embeddings",
        type: "invalid_request_error",
        code: null,
        param: null,
      },
    });
    expect(models.status).toBe(200);
    expect(server.failures).toEqual(["unexpected request: POST /v1/embeddings"]);
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
