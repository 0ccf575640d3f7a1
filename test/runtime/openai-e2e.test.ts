import { afterEach, describe, expect, it } from "vitest";
import { ErrorCode } from "../../errors.js";
import { FILES_PROMPT_SECTION } from "../../middleware/file-scope.js";
import type { RunEvent } from "../../runs/events.js";
import {
  createStrictScript,
  type FakeOpenAIServer,
  routeByModel,
  startFakeOpenAIServer,
} from "../support/fake-openai-server.js";
import {
  mainAgentPayload,
  makeRuntime,
  type RuntimeFixture,
  subagentPayload,
} from "../support/runtime-fixture.js";
import { until } from "../support/until.js";

/**
 * End to end through the real `ChatOpenAI` client: a local OpenAI-compatible server speaks the
 * real wire format (tool calls, SSE streaming, usage chunks) to the parent and to two children.
 */
describe("runtime against an OpenAI-compatible server", () => {
  let server: FakeOpenAIServer | undefined;
  let fixture: RuntimeFixture | undefined;

  afterEach(async () => {
    await fixture?.dispose();
    await server?.close();
    fixture = undefined;
    server = undefined;
  });

  it("delegates through task with streaming on, over the real wire format", async () => {
    const parent = createStrictScript([
      () => ({
        content: "Let me ask my team.",
        toolCalls: [
          {
            id: "call_r",
            name: "task",
            arguments: { description: "Research tides", subagent_type: "researcher" },
          },
          {
            id: "call_v",
            name: "task",
            arguments: { description: "Review the plan", subagent_type: "reviewer" },
          },
        ],
      }),
      () => ({ content: "Tides come from the moon; the plan is sound." }),
    ]);
    const researcher = createStrictScript([
      () => ({ content: "The moon causes tides.", delayMs: 100 }),
    ]);
    const reviewer = createStrictScript([() => ({ content: "The plan is sound.", delayMs: 100 })]);
    server = await startFakeOpenAIServer(
      routeByModel({
        "parent-model": parent.handler,
        "researcher-model": researcher.handler,
        "reviewer-model": reviewer.handler,
      }),
    );
    fixture = await makeRuntime({
      env: { OPENAI_API_KEY: "sk-test", OPENAI_BASE_URL: server.url, OPENAI_MAX_RETRIES: "0" },
    });
    const { runtime } = fixture;
    await runtime.agents.create("alice", subagentPayload("researcher", "openai:researcher-model"));
    await runtime.agents.create("alice", subagentPayload("reviewer", "openai:reviewer-model"));
    await runtime.agents.create(
      "alice",
      mainAgentPayload("boss", "openai:parent-model", ["researcher", "reviewer"], { tools: [] }),
    );

    const events: RunEvent[] = [];
    for await (const event of runtime.stream({ uid: "alice", agent: "boss", input: "Tides?" })) {
      events.push(event);
    }

    expect(server.failures).toEqual([]);
    parent.assertComplete();
    researcher.assertComplete();
    reviewer.assertComplete();

    const last = events.at(-1);
    if (last?.type !== "run_finished") throw new Error("stream did not end with run_finished");
    expect(last.result.output).toBe("Tides come from the moon; the plan is sound.");
    expect(last.result.subagentRuns.map((run) => [run.id, run.subagent_type, run.status])).toEqual([
      ["call_r", "researcher", "completed"],
      ["call_v", "reviewer", "completed"],
    ]);
    // Usage reported by the server reaches the record.
    expect(last.result.subagentRuns[0]?.usage.total_tokens).toBeGreaterThan(0);

    const requests = server.requests;
    expect(requests.every((request) => request.stream === true)).toBe(true);
    const [firstParent, secondParent] = requests.filter((r) => r.model === "parent-model");
    expect(firstParent?.tools?.map((t) => t.function.name)).toEqual(["task"]);
    const system = firstParent?.messages[0];
    expect(system?.role).toBe("system");
    expect(JSON.stringify(system?.content)).toContain("- researcher: the researcher subagent");

    // The parent's second call carries its tool calls and only the children's final texts.
    const toolMessages = secondParent?.messages.filter((m) => m.role === "tool");
    expect(toolMessages).toEqual([
      expect.objectContaining({ tool_call_id: "call_r", content: "The moon causes tides." }),
      expect.objectContaining({ tool_call_id: "call_v", content: "The plan is sound." }),
    ]);
    const assistant = secondParent?.messages.find((m) => m.role === "assistant") as
      | { tool_calls?: { id: string; function: { name: string; arguments: string } }[] }
      | undefined;
    expect(assistant?.tool_calls?.map((call) => [call.id, call.function.name])).toEqual([
      ["call_r", "task"],
      ["call_v", "task"],
    ]);

    // Each child got its own prompt and the description only, and was never offered task.
    const child = requests.find((r) => r.model === "researcher-model");
    expect(child?.messages).toEqual([
      // createAgent sends the system prompt as an array of text parts.
      expect.objectContaining({
        role: "system",
        content: [
          { type: "text", text: "You are researcher." },
          { type: "text", text: `\n\n${FILES_PROMPT_SECTION}` },
        ],
      }),
      expect.objectContaining({ role: "user", content: "Research tides" }),
    ]);
    expect((child?.tools ?? []).map((t) => t.function.name)).not.toContain("task");

    // Streamed tokens are attributed to the right thread.
    const childThread = last.result.subagentRuns[0]?.child_thread_id;
    const childTokens = events
      .filter((e) => e.type === "token" && e.childThreadId === childThread)
      .map((e) => (e.type === "token" ? e.text : ""))
      .join("");
    expect(childTokens).toBe("The moon causes tides.");
    const mainTokens = events
      .filter((e) => e.type === "token" && e.childThreadId === undefined)
      .map((e) => (e.type === "token" ? e.text : ""))
      .join("");
    expect(mainTokens).toBe("Let me ask my team.Tides come from the moon; the plan is sound.");
  });

  it("records a child whose server call fails as failed, and the parent answers", async () => {
    const parent = createStrictScript([
      () => ({
        content: "",
        toolCalls: [
          {
            id: "call_x",
            name: "task",
            arguments: { description: "x", subagent_type: "researcher" },
          },
        ],
      }),
      (request) => {
        const tool = request.messages.find((m) => m.role === "tool");
        expect(tool?.content).toContain('subagent "researcher" failed');
        return { content: "I could not get that." };
      },
    ]);
    server = await startFakeOpenAIServer(
      routeByModel({
        "parent-model": parent.handler,
        "researcher-model": () => ({ status: 400, error: { message: "bad request from test" } }),
      }),
    );
    fixture = await makeRuntime({
      env: { OPENAI_API_KEY: "sk-test", OPENAI_BASE_URL: server.url, OPENAI_MAX_RETRIES: "0" },
    });
    const { runtime } = fixture;
    await runtime.agents.create("alice", subagentPayload("researcher", "openai:researcher-model"));
    await runtime.agents.create(
      "alice",
      mainAgentPayload("boss", "openai:parent-model", ["researcher"], { tools: [] }),
    );

    const result = await runtime.run({ uid: "alice", agent: "boss", input: "go" });

    expect(server.failures).toEqual([]);
    parent.assertComplete();
    expect(result.output).toBe("I could not get that.");
    expect(result.subagentRuns[0]).toMatchObject({ status: "failed" });
    expect(result.subagentRuns[0]?.error).toContain("bad request from test");
  });

  it("cancels a child's in-flight request, and the thread takes the next message", async () => {
    const parent = createStrictScript([
      () => ({
        content: "",
        toolCalls: [
          {
            id: "call_s",
            name: "task",
            arguments: { description: "slow", subagent_type: "researcher" },
          },
        ],
      }),
      (request) => {
        // Like the real API: every assistant tool call must be answered before the next turn.
        const answered = new Set(request.messages.map((m) => m.tool_call_id).filter(Boolean));
        for (const message of request.messages) {
          const calls = (message.tool_calls ?? []) as { id: string }[];
          for (const call of calls) {
            if (!answered.has(call.id)) {
              return { status: 400, error: { message: `tool call ${call.id} has no response` } };
            }
          }
        }
        return { content: "recovered" };
      },
    ]);
    server = await startFakeOpenAIServer(
      routeByModel({
        "parent-model": parent.handler,
        "researcher-model": () => ({ content: "too late", delayMs: 30_000 }),
      }),
    );
    fixture = await makeRuntime({
      env: { OPENAI_API_KEY: "sk-test", OPENAI_BASE_URL: server.url, OPENAI_MAX_RETRIES: "0" },
    });
    const { runtime } = fixture;
    await runtime.agents.create("alice", subagentPayload("researcher", "openai:researcher-model"));
    await runtime.agents.create(
      "alice",
      mainAgentPayload("boss", "openai:parent-model", ["researcher"], { tools: [] }),
    );
    const controller = new AbortController();
    const running = runtime.run({
      uid: "alice",
      agent: "boss",
      threadId: "t-http",
      input: "go",
      signal: controller.signal,
    });
    const childRequest = () => server?.requests.findIndex((r) => r.model === "researcher-model");
    await until(() => (childRequest() ?? -1) >= 0, 5_000);

    controller.abort();

    await expect(running).rejects.toMatchObject({ code: ErrorCode.Cancelled });
    // The child's HTTP request is really aborted, promptly (not left to run for 30 s).
    await until(() => server?.aborted.includes(childRequest() ?? -1) === true, 1_000);
    const next = await runtime.run({
      uid: "alice",
      agent: "boss",
      threadId: "t-http",
      input: "again",
    });
    expect(next.output).toBe("recovered");
    expect(next.subagentRuns).toMatchObject([{ id: "call_s", status: "cancelled" }]);
    expect(server.failures).toEqual([]);
    parent.assertComplete();
  });
});
