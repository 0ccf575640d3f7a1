import { afterEach, describe, expect, it } from "vitest";
import type { SubagentRun } from "../../middleware/subagent-runs.js";
import { MAX_REFUSED_TURNS } from "../../middleware/tool-call-answers.js";
import {
  type ChatCompletionRequestBody,
  createStrictScript,
  type FakeHandler,
  type FakeOpenAIServer,
  type FakeReply,
  routeByModel,
  startFakeOpenAIServer,
} from "../support/fake-openai-server.js";
import { type HttpServer, startHttpServer } from "../support/http-server.js";
import { mainAgentPayload, subagentPayload } from "../support/runtime-fixture.js";
import { until } from "../support/until.js";

/**
 * Model faults (issue 16, item 1), end to end: the real `ChatOpenAI` client talks to a fault
 * injecting OpenAI-compatible server, and runs go through the HTTP API. The fake server refuses,
 * like api.openai.com, any request whose history leaves a tool call unanswered, and records it in
 * `failures`: every test asserts that list empty, so a thread left unusable fails it.
 */

const human = (content: string) => ({ messages: [{ type: "human", content }] });

/** JSON cut off in the middle, as a model sends it when its output is truncated. */
const BROKEN_TASK_ARGS = '{"description": "unterminated, "subagent_type": ';

interface WireMessage {
  type: string;
  content: unknown;
  name?: string;
  status?: string;
  tool_call_id?: string;
  artifact?: unknown;
  tool_calls?: { id: string; name: string; args: unknown }[];
  invalid_tool_calls?: { id: string; name: string; args: string }[];
}

interface Values {
  messages: WireMessage[];
  subagent_runs: SubagentRun[];
}

interface RunError {
  __error__: { error: string; message: string };
}

/** What the model was shown as the answer to its call `id` in this request. */
function answerTo(request: ChatCompletionRequestBody, id: string): string {
  const message = request.messages.find((m) => m.role === "tool" && m.tool_call_id === id);
  if (!message) throw new Error(`request has no tool message answering ${id}`);
  return typeof message.content === "string" ? message.content : JSON.stringify(message.content);
}

const text =
  (content: string): FakeHandler =>
  () => ({ content });

describe("model faults over HTTP", () => {
  let server: FakeOpenAIServer | undefined;
  let http: HttpServer | undefined;
  let token = "";

  afterEach(async () => {
    await http?.stop();
    await server?.close();
    http = undefined;
    server = undefined;
  });

  /** The fake model server (one handler per model) and our HTTP server pointed at it. */
  async function start(
    handlers: Record<string, FakeHandler>,
    options: { env?: Record<string, string>; limits?: Record<string, number> } = {},
  ): Promise<{ http: HttpServer; server: FakeOpenAIServer }> {
    server = await startFakeOpenAIServer(routeByModel(handlers));
    http = await startHttpServer({
      runtime: {
        env: {
          OPENAI_API_KEY: "sk-test",
          OPENAI_BASE_URL: server.url,
          OPENAI_MAX_RETRIES: "0",
          ...options.env,
        },
        ...(options.limits ? { limits: options.limits } : {}),
      },
    });
    token = http.tokenOf("alice");
    return { http, server };
  }

  async function create(payload: unknown): Promise<void> {
    await http?.fixture.runtime.agents.create("alice", payload);
  }

  /** `boss` on the model `parent-model`, delegating to `researcher` when one is created. */
  async function boss(subagents: string[] | undefined, extra: Record<string, unknown> = {}) {
    await create(mainAgentPayload("boss", "openai:parent-model", subagents, extra));
  }

  /** A waited run of `boss` on the thread: its final values, or the API's `__error__`. */
  async function wait(threadId: string, input: string): Promise<Values & Partial<RunError>> {
    const result = await http?.call<Values & Partial<RunError>>(
      "POST",
      `/threads/${threadId}/runs/wait`,
      { token, body: { assistant_id: "boss", input: human(input), if_not_exists: "create" } },
    );
    expect(result?.status, JSON.stringify(result?.body)).toBe(200);
    return result?.body as Values & Partial<RunError>;
  }

  async function state(threadId: string): Promise<Values> {
    const result = await http?.call<{ values: Values }>("GET", `/threads/${threadId}/state`, {
      token,
    });
    expect(result?.status).toBe(200);
    return result?.body.values as Values;
  }

  function toolMessage(values: Values, id: string): WireMessage | undefined {
    return values.messages.find((m) => m.type === "tool" && m.tool_call_id === id);
  }

  describe("tool calls the model gets wrong are answered", () => {
    it("answers a task call whose arguments are not JSON; the model corrects itself in the same run, and the thread goes on", async () => {
      const parent = createStrictScript([
        () => ({
          content: "",
          toolCalls: [{ id: "call_bad", name: "task", arguments: BROKEN_TASK_ARGS }],
        }),
        (request) => {
          const answer = answerTo(request, "call_bad");
          expect(answer).toContain('your "task" call are not valid JSON (');
          expect(answer).toContain(`you sent: ${BROKEN_TASK_ARGS}`);
          return {
            content: "",
            toolCalls: [
              {
                id: "call_ok",
                name: "task",
                arguments: { description: "Research tides", subagent_type: "researcher" },
              },
            ],
          };
        },
        (request) => {
          expect(answerTo(request, "call_ok")).toBe("The moon causes tides.");
          return { content: "Tides come from the moon." };
        },
        text("Anything else?"),
      ]);
      await start({
        "parent-model": parent.handler,
        "researcher-model": text("The moon causes tides."),
      });
      await create(subagentPayload("researcher", "openai:researcher-model", { tools: [] }));
      await boss(["researcher"], { tools: [] });

      const first = await wait("t-json", "Why are there tides?");
      expect(first.__error__).toBeUndefined();
      expect(first.messages.at(-1)?.content).toBe("Tides come from the moon.");

      const values = await state("t-json");
      const turn = values.messages.find((m) => m.tool_calls?.some((c) => c.id === "call_bad"));
      // The call stays on record as sent, and is an ordinary call the thread answers.
      expect(turn?.tool_calls).toEqual([expect.objectContaining({ id: "call_bad", args: {} })]);
      expect(turn?.invalid_tool_calls).toEqual([
        expect.objectContaining({ id: "call_bad", name: "task", args: BROKEN_TASK_ARGS }),
      ]);
      expect(toolMessage(values, "call_bad")).toMatchObject({
        name: "task",
        status: "error",
        artifact: { kind: "refused_tool_call", reason: "malformed_arguments" },
      });
      // Only the corrected call ran a subagent.
      expect(values.subagent_runs.map((run) => [run.id, run.status])).toEqual([
        ["call_ok", "completed"],
      ]);

      const second = await wait("t-json", "Thanks.");
      expect(second.messages.at(-1)?.content).toBe("Anything else?");
      expect(server?.failures).toEqual([]);
      parent.assertComplete();
    });

    it("answers a malformed call in a streamed run too (the client parses streamed arguments its own way)", async () => {
      const parent = createStrictScript([
        () => ({
          content: "",
          toolCalls: [{ id: "call_bad", name: "task", arguments: BROKEN_TASK_ARGS }],
        }),
        (request) => {
          expect(answerTo(request, "call_bad")).toContain('your "task" call are not valid JSON (');
          return { content: "Let me answer myself: the moon." };
        },
      ]);
      const { server } = await start({ "parent-model": parent.handler });
      await create(subagentPayload("researcher", "openai:researcher-model", { tools: [] }));
      await boss(["researcher"], { tools: [] });

      const sse = await http?.call<string>("POST", "/threads/t-stream-json/runs/stream", {
        token,
        body: {
          assistant_id: "boss",
          input: human("Tides?"),
          if_not_exists: "create",
          stream_mode: ["messages-tuple", "values"],
        },
      });
      expect(sse?.status).toBe(200);
      expect(server.requests[0]?.stream).toBe(true);
      expect(sse?.body).not.toContain("event: error");
      const values = await state("t-stream-json");
      expect(values.messages.at(-1)?.content).toBe("Let me answer myself: the moon.");
      expect(toolMessage(values, "call_bad")).toMatchObject({
        status: "error",
        artifact: { kind: "refused_tool_call", reason: "malformed_arguments" },
      });
      expect(server.failures).toEqual([]);
      parent.assertComplete();
    });

    it("answers a call to an unknown tool of an agent with no tools at all", async () => {
      const parent = createStrictScript([
        () => ({
          content: "",
          toolCalls: [{ id: "call_ws", name: "web_search", arguments: { query: "tides" } }],
        }),
        (request) => {
          expect(answerTo(request, "call_ws")).toBe(
            'there is no tool "web_search", so the call was not run: you have no tools: answer without calling one',
          );
          return { content: "From memory: the moon." };
        },
        text("You are welcome."),
      ]);
      await start({ "parent-model": parent.handler });
      await boss(undefined, { tools: [] });

      const first = await wait("t-unknown", "Search tides");
      expect(first.messages.at(-1)?.content).toBe("From memory: the moon.");
      expect(toolMessage(first, "call_ws")).toMatchObject({
        status: "error",
        artifact: { kind: "refused_tool_call", reason: "unknown_tool" },
      });
      expect((await wait("t-unknown", "Thanks")).messages.at(-1)?.content).toBe("You are welcome.");
      expect(server?.failures).toEqual([]);
      parent.assertComplete();
    });

    it("answers an unknown tool and arguments that fail the schema of task and of a file tool, in one turn, each with its own error", async () => {
      const parent = createStrictScript([
        () => ({
          content: "",
          toolCalls: [
            { id: "call_search", name: "search", arguments: { q: "tides" } },
            { id: "call_task", name: "task", arguments: { description: "Research tides" } },
            { id: "call_read", name: "read_file", arguments: { path: 42 } },
          ],
        }),
        (request) => {
          const unknown = answerTo(request, "call_search");
          expect(unknown).toContain(
            'there is no tool "search", so the call was not run: use one of',
          );
          expect(unknown).toContain('"read_file"');
          expect(unknown).toContain('"task"');
          expect(answerTo(request, "call_task")).toMatch(
            /^the arguments of your "task" call do not fit its schema \(subagent_type: [^)]+\), so it was not run: send the call again with arguments that fit the schema$/,
          );
          expect(answerTo(request, "call_read")).toMatch(
            /^the arguments of your "read_file" call do not fit its schema \(path: [^)]+\), so it/,
          );
          return { content: "Let me answer directly: the moon." };
        },
      ]);
      await start({ "parent-model": parent.handler });
      await create(subagentPayload("researcher", "openai:researcher-model", { tools: [] }));
      await boss(["researcher"]);

      const values = await wait("t-schema", "Tides?");
      expect(values.messages.at(-1)?.content).toBe("Let me answer directly: the moon.");
      expect(
        ["call_search", "call_task", "call_read"].map(
          (id) => (toolMessage(values, id)?.artifact as { reason?: string } | undefined)?.reason,
        ),
      ).toEqual(["unknown_tool", "invalid_arguments", "invalid_arguments"]);
      // Nothing was dispatched, and langchain's own wording is not what the model reads.
      expect(values.subagent_runs).toEqual([]);
      expect(JSON.stringify(values.messages)).not.toContain("Please fix");
      expect(server?.failures).toEqual([]);
      parent.assertComplete();
    });

    it(`stops a main agent whose tool calls are refused ${MAX_REFUSED_TURNS} turns in a row with INVALID_TOOL_CALLS; the thread takes the next message`, async () => {
      const garbage: FakeHandler = (_request, index) => ({
        content: "",
        toolCalls: [{ id: `call_g${index}`, name: "task", arguments: "{{" }],
      });
      const parent = createStrictScript([
        ...Array.from({ length: MAX_REFUSED_TURNS }, () => garbage),
        text("Sorry, let me try again."),
      ]);
      await start({ "parent-model": parent.handler });
      await create(subagentPayload("researcher", "openai:researcher-model", { tools: [] }));
      await boss(["researcher"], { tools: [] });

      const failed = await wait("t-cap", "Go");
      expect(failed.__error__?.error).toBe("INVALID_TOOL_CALLS");
      expect(failed.__error__?.message).toContain(
        `refused ${MAX_REFUSED_TURNS} turns in a row (the last: "the arguments of your \\"task\\" call are not valid JSON`,
      );
      expect(parent.used).toBe(MAX_REFUSED_TURNS);

      const next = await wait("t-cap", "Try again");
      expect(next.messages.at(-1)?.content).toBe("Sorry, let me try again.");
      expect(server?.failures).toEqual([]);
      parent.assertComplete();
    });
  });

  describe("a subagent's bad tool calls", () => {
    /** `boss` hands one task to `researcher` (given `extra`) and answers with what it got. */
    async function delegate(
      researcher: FakeHandler,
      extra: Record<string, unknown>,
      check: (answer: string) => void,
    ) {
      const parent = createStrictScript([
        () => ({
          content: "",
          toolCalls: [
            {
              id: "call_r",
              name: "task",
              arguments: { description: "What time is it?", subagent_type: "researcher" },
            },
          ],
        }),
        (request) => {
          check(answerTo(request, "call_r"));
          return { content: "Done." };
        },
      ]);
      await start({ "parent-model": parent.handler, "researcher-model": researcher });
      await create(subagentPayload("researcher", "openai:researcher-model", extra));
      await boss(["researcher"], { tools: [] });
      return parent;
    }

    it("answers a child's call whose arguments are not JSON, and the child corrects itself", async () => {
      const researcher = createStrictScript([
        () => ({
          content: "",
          toolCalls: [{ id: "call_t", name: "current_time", arguments: '{"time_zone": "UTC"' }],
        }),
        (request) => {
          expect(answerTo(request, "call_t")).toContain(
            'your "current_time" call are not valid JSON (',
          );
          return { content: "It is noon, UTC." };
        },
      ]);
      const parent = await delegate(researcher.handler, { tools: ["current_time"] }, (answer) =>
        expect(answer).toBe("It is noon, UTC."),
      );

      const values = await wait("t-child", "Time?");
      const [run] = values.subagent_runs;
      expect(run).toMatchObject({
        status: "completed",
        rounds: 2,
        max_rounds_reached: false,
        result_preview: "It is noon, UTC.",
      });
      const child = await http?.call<{ values: Values }>(
        "GET",
        `/threads/t-child/subagents/${run?.child_thread_id}`,
        { token },
      );
      expect(toolMessage(child?.body.values as Values, "call_t")).toMatchObject({
        status: "error",
        artifact: { kind: "refused_tool_call", reason: "malformed_arguments" },
      });
      expect(server?.failures).toEqual([]);
      parent.assertComplete();
      researcher.assertComplete();
    });

    it("records a child that spends its rounds on malformed calls as max_rounds_reached, not as an answer", async () => {
      const broken: FakeHandler = (_request, index) => ({
        content: "",
        toolCalls: [{ id: `call_t${index}`, name: "current_time", arguments: "{" }],
      });
      const researcher = createStrictScript([broken, broken]);
      const parent = await delegate(
        researcher.handler,
        { tools: ["current_time"], max_rounds: 2 },
        (answer) => expect(answer).toBe(""),
      );

      const values = await wait("t-rounds", "Time?");
      expect(values.subagent_runs[0]).toMatchObject({
        status: "completed",
        rounds: 2,
        max_rounds_reached: true,
        result_preview: "",
      });
      expect(server?.failures).toEqual([]);
      parent.assertComplete();
      researcher.assertComplete();
    });
  });

  describe("model timeout", () => {
    it("fails a hung main-agent call with MODEL_TIMEOUT (SUBAGENT_GRAPH_MODEL_TIMEOUT_MS), aborting its request without retries; the thread takes the next message", async () => {
      const parent = createStrictScript([() => ({ hang: "before-reply" }), text("Back again.")]);
      const { server } = await start(
        { "parent-model": parent.handler },
        { env: { SUBAGENT_GRAPH_MODEL_TIMEOUT_MS: "1500", OPENAI_MAX_RETRIES: "2" } },
      );
      await boss(undefined, { tools: [] });

      const failed = await wait("t-hang", "Hello?");
      expect(failed.__error__).toEqual({
        error: "MODEL_TIMEOUT",
        message: expect.stringContaining('model "parent-model" did not answer within 1500 ms'),
      });
      // The HTTP request itself was aborted, and not sent again.
      await until(() => server.aborted.includes(0));
      expect(server.requests).toHaveLength(1);
      const runs = await http?.call<{ status: string }[]>("GET", "/threads/t-hang/runs", {
        token,
      });
      expect(runs?.body.map((run) => run.status)).toEqual(["error"]);

      expect((await wait("t-hang", "Still there?")).messages.at(-1)?.content).toBe("Back again.");
      expect(server.failures).toEqual([]);
      parent.assertComplete();
    });

    it("fails a streamed call that stalls half-way with MODEL_TIMEOUT (the model_timeout_ms option), keeping none of it", async () => {
      const parent = createStrictScript([() => ({ hang: "mid-stream" }), text("Back again.")]);
      const { server } = await start(
        { "parent-model": parent.handler },
        { limits: { model_timeout_ms: 1500 } },
      );
      await boss(undefined, { tools: [] });

      const sse = await http?.call<string>("POST", "/threads/t-stall/runs/stream", {
        token,
        body: {
          assistant_id: "boss",
          input: human("Hello?"),
          if_not_exists: "create",
          stream_mode: ["messages-tuple", "values"],
        },
      });
      expect(sse?.status, JSON.stringify(sse?.body)).toBe(200);
      expect(server.requests[0]?.stream).toBe(true);
      // The first words reached the client before the stall.
      expect(sse?.body).toContain('"Let me"');
      expect(sse?.body).toContain("event: error");
      expect(sse?.body).toContain('"error":"MODEL_TIMEOUT"');
      await until(() => server.aborted.includes(0));
      // The half-streamed answer is not in the thread.
      expect((await state("t-stall")).messages.map((m) => m.type)).toEqual(["human"]);

      expect((await wait("t-stall", "Still there?")).messages.at(-1)?.content).toBe("Back again.");
      expect(server.failures).toEqual([]);
      parent.assertComplete();
    });

    it("records a subagent whose model call hangs as failed with the timeout, and the parent goes on", async () => {
      const parent = createStrictScript([
        () => ({
          content: "",
          toolCalls: [
            {
              id: "call_r",
              name: "task",
              arguments: { description: "Research tides", subagent_type: "researcher" },
            },
          ],
        }),
        (request) => {
          expect(answerTo(request, "call_r")).toContain(
            'subagent "researcher" failed: model "researcher-model" did not answer within 1500 ms',
          );
          return { content: "My researcher timed out." };
        },
      ]);
      const { server } = await start(
        {
          "parent-model": parent.handler,
          "researcher-model": (): FakeReply => ({ hang: "mid-stream" }),
        },
        { limits: { model_timeout_ms: 1500 } },
      );
      await create(subagentPayload("researcher", "openai:researcher-model", { tools: [] }));
      await boss(["researcher"], { tools: [] });

      const values = await wait("t-child-hang", "Tides?");
      expect(values.__error__).toBeUndefined();
      expect(values.messages.at(-1)?.content).toBe("My researcher timed out.");
      expect(values.subagent_runs[0]).toMatchObject({
        status: "failed",
        error: expect.stringContaining('model "researcher-model" did not answer within 1500 ms'),
      });
      const child = server.requests.findIndex((r) => r.model === "researcher-model");
      await until(() => server.aborted.includes(child));
      expect(server.failures).toEqual([]);
      parent.assertComplete();
    });
  });

  describe("provider errors after the client's retries", () => {
    const faults: [string, FakeReply][] = [
      [
        "an HTTP 500",
        { status: 500, error: { message: "upstream exploded", type: "server_error" } },
      ],
      [
        "an HTTP 429 with retry-after",
        { status: 429, error: { message: "slow down" }, headers: { "retry-after": "0" } },
      ],
      ["a connection reset", { reset: true }],
    ];

    it.each(faults)(
      "fails the run with MODEL_FAILED on %s, once retried, and the thread takes the next message",
      async (_name, fault) => {
        const parent = createStrictScript([() => fault, () => fault, text("Back again.")]);
        const { server } = await start(
          { "parent-model": parent.handler },
          { env: { OPENAI_MAX_RETRIES: "1" } },
        );
        await boss(undefined, { tools: [] });

        const failed = await wait("t-fault", "Hello?");
        expect(failed.__error__?.error).toBe("MODEL_FAILED");
        expect(failed.__error__?.message).toMatch(/^model "parent-model" failed: /);
        expect(server.requests).toHaveLength(2);

        expect((await wait("t-fault", "Again?")).messages.at(-1)?.content).toBe("Back again.");
        expect(server.failures).toEqual([]);
        parent.assertComplete();
      },
    );
  });
});
