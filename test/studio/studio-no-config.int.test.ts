import { stat } from "node:fs/promises";
import { join } from "node:path";
import type { Client } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { subagentNamespaces } from "../support/subagent-stream.js";
import { type NewcomerStudio, startNewcomerStudio } from "./newcomer-project.js";

/** The context fields Studio's configuration panel shows, in order. */
const PANEL_FIELDS = [
  "uid",
  "agent",
  "subagents",
  "max_rounds",
  "max_result_chars",
  "max_parallel_subagents",
  "subagent_timeout_ms",
];

const PLAN = { messages: [{ role: "user", content: "Plan a small launch" }] };

interface SubagentRunView {
  subagent_type: string;
  status: string;
  child_thread_id: string;
  error: string | null;
}

interface AgentValues {
  messages: { type: string; name?: string; content: string }[];
  subagent_runs: SubagentRunView[];
}

/** Where the dev server keeps its checkpoints (`storage/checkpoint.mjs` in langgraph-api). */
const CHECKPOINT_FILE = join(".langgraph_api", ".langgraphjs_api.checkpointer.json");

/**
 * The size of the dev server's checkpoint file once it holds everything written before now: the
 * server rewrites the whole file a few seconds after its last change, so this waits for a write
 * that started after this call and for the size to settle.
 */
async function persistedSize(file: string): Promise<number> {
  const since = Date.now();
  let last = -1;
  for (let tries = 0; tries < 80; tries += 1) {
    await new Promise((resolve) => setTimeout(resolve, 250));
    const info = await stat(file).catch(() => undefined);
    if (info && info.mtimeMs > since) {
      if (info.size === last) return info.size;
      last = info.size;
    }
  }
  throw new Error(`the dev server did not rewrite ${file} within 20 s`);
}

/** The final values `runs.wait` returns, checked to be the agent's state. */
function agentValues(values: unknown): AgentValues {
  expect(values).toMatchObject({ messages: expect.any(Array), subagent_runs: expect.any(Array) });
  return values as AgentValues;
}

/**
 * A newcomer's Studio: `langgraphjs dev --config langgraph.json` started directly (not through
 * `npm run studio`), with nothing of ours configured (no `LANGGRAPH_CONFIG`, no assistant
 * context, no run context), driven with `@langchain/langgraph-sdk` as Studio's UI drives it, in
 * a temporary project with a fresh `.langgraph_api/` and data dir (`./newcomer-project.ts`).
 */
describe("Studio with no configuration (langgraphjs dev on langgraph.json, driven by the SDK)", {
  timeout: 90_000,
}, () => {
  let studio: NewcomerStudio | undefined;
  let project = "";
  let client: Client;

  beforeAll(async () => {
    studio = await startNewcomerStudio();
    project = studio.project;
    client = studio.server.client;
  }, 90_000);

  afterAll(async () => {
    await studio?.dispose();
  });

  it("describes the run context for Studio's configuration panel: every field, its description, the default user", async () => {
    const [system] = await client.assistants.search({ graphId: "agent" });
    // Nothing is injected into the assistant: the defaults are the graph's own.
    expect(system?.context).toEqual({});

    const schemas = await client.assistants.getSchemas("agent");
    const context = schemas.context_schema as {
      properties: Record<string, { description?: string; default?: unknown; type?: string }>;
    };
    expect(Object.keys(context.properties)).toEqual(PANEL_FIELDS);
    for (const field of PANEL_FIELDS) {
      expect(context.properties[field]?.description, field).toMatch(/\w{3,}/);
    }
    expect(context.properties.uid?.default).toBe("demo");
    expect(context.properties.agent?.description).toContain("unset: the user's default agent");
    for (const limit of PANEL_FIELDS.slice(3)) {
      expect(context.properties[limit]?.type, limit).toBe("integer");
      expect(context.properties[limit]?.description, limit).toMatch(/unset: the .*'s own/);
    }
    // Describing the context costs nothing else: Studio still gets a chat input (messages).
    const input = schemas.input_schema as {
      properties: Record<string, { langgraph_type?: string }>;
    };
    expect(input.properties.messages?.langgraph_type).toBe("messages");
    expect(Object.keys((schemas.state_schema as { properties: object }).properties)).toContain(
      "subagent_runs",
    );
    const drawing = await client.assistants.getGraph("agent");
    expect(drawing.nodes.map((node) => node.id)).toContain("tools");
  });

  it("runs the demo user's default agent on a new thread with no context, its subagents on child threads", async () => {
    const thread = await client.threads.create();
    const events: { event: string; data: unknown }[] = [];
    // Exactly what Studio's UI sends for a new message.
    for await (const part of client.runs.stream(thread.thread_id, "agent", {
      input: PLAN,
      streamMode: ["updates"],
      streamSubgraphs: true,
    })) {
      events.push(part);
    }
    expect(events.filter((event) => event.event === "error")).toEqual([]);

    const state = await client.threads.getState<AgentValues>(thread.thread_id);
    const runs = state.values.subagent_runs;
    expect(runs.map((run) => [run.subagent_type, run.status])).toEqual([
      ["researcher", "completed"],
      ["reviewer", "completed"],
    ]);
    for (const run of runs) {
      expect(run.child_thread_id).toMatch(
        new RegExp(`^${thread.thread_id}_sub_${run.subagent_type}_[0-9a-f]{8}$`),
      );
    }
    // Each child's node updates come under a namespace of its own, `tools:<task id>`.
    expect(subagentNamespaces(events)).toHaveLength(runs.length);
    // The demo user's default agent answered ("assistant" in agents/demo.ts).
    const last = state.values.messages.at(-1);
    expect([last?.type, last?.name]).toEqual(["ai", "assistant"]);
  });

  it("runs through an assistant made with assistants.create and one whose saved context is {}", async () => {
    const created = await client.assistants.create({ graphId: "agent" });
    const empty = await client.assistants.create({ graphId: "agent", context: {} });
    for (const assistant of [created, empty]) {
      expect(assistant.context).toEqual({});
      const thread = await client.threads.create();
      const values = agentValues(
        await client.runs.wait(thread.thread_id, assistant.assistant_id, { input: PLAN }),
      );
      expect(values.subagent_runs.map((run) => [run.subagent_type, run.status])).toEqual([
        ["researcher", "completed"],
        ["reviewer", "completed"],
      ]);
    }
  });

  it("runs a thread-less run's subagents on an in-memory saver of that run, leaving nothing behind", async () => {
    const values = agentValues(await client.runs.wait(null, "agent", { input: PLAN }));
    expect(values.subagent_runs.map((run) => [run.subagent_type, run.status, run.error])).toEqual([
      ["researcher", "completed", null],
      ["reviewer", "completed", null],
    ]);
    expect(values.messages.at(-1)?.type).toBe("ai");
    // The run's temporary thread is gone, and with it the only reference to its saver.
    const temporary = values.subagent_runs[0]?.child_thread_id.split("_sub_")[0] ?? "";
    expect(temporary).toMatch(/^[0-9a-f-]{36}$/);
    const read = await client.threads.get(temporary).then(
      () => "found",
      (error: Error) => error.message,
    );
    expect(read).toContain("HTTP 404");
  });

  it("stores a growing thread linearly in its own checkpoint file, and reads, forks and copies it whole", async () => {
    const thread = await client.threads.create();
    const file = join(project, CHECKPOINT_FILE);
    const turns = async (count: number) => {
      for (let turn = 0; turn < count; turn += 1) {
        await client.runs.wait(thread.thread_id, "agent", {
          input: { messages: [{ role: "user", content: "Compare solar and wind power" }] },
        });
      }
    };
    await turns(1);
    const start = await persistedSize(file);
    await turns(4);
    const middle = await persistedSize(file);
    await turns(4);
    const end = await persistedSize(file);
    // Each turn delegates twice. Full storage writes the whole conversation at every step, so
    // turns 6-9 would add about twice the bytes of turns 2-5; delta adds the same.
    expect((end - middle) / (middle - start)).toBeLessThan(1.15);

    const state = await client.threads.getState<AgentValues>(thread.thread_id);
    expect(state.values.subagent_runs).toHaveLength(18);
    expect(state.values.subagent_runs.every((run) => run.status === "completed")).toBe(true);
    const humans = state.values.messages.filter((message) => message.type === "human");
    expect(humans).toHaveLength(9);

    // Fork at the checkpoint before the last turn with its question edited (same id: replaced).
    const history = await client.threads.getHistory<AgentValues>(thread.thread_id, { limit: 100 });
    const beforeLast = history.find(
      (snapshot) =>
        snapshot.values.messages?.filter((message) => message.type === "human").length === 8 &&
        snapshot.next.length === 0,
    );
    expect(beforeLast).toBeDefined();
    const lastQuestion = state.values.messages.findLast((message) => message.type === "human") as
      | { id: string }
      | undefined;
    await client.threads.updateState(thread.thread_id, {
      values: { messages: [{ id: lastQuestion?.id, type: "human", content: "Review my plan" }] },
      checkpoint: beforeLast?.checkpoint,
      asNode: "__start__",
    });
    // The fork is the thread's head now: the run continues from it.
    const fork = agentValues(await client.runs.wait(thread.thread_id, "agent", { input: null }));
    const forkHumans = fork.messages.filter((message) => message.type === "human");
    expect(forkHumans.map((message) => message.content).slice(-2)).toEqual([
      "Compare solar and wind power",
      "Review my plan",
    ]);
    expect(fork.subagent_runs.length).toBeGreaterThan(16);

    // The server's own thread copy keeps what the packets refer to: the copy reads and runs on.
    const copy = await client.threads.copy(thread.thread_id);
    const copied = await client.threads.getState<AgentValues>(copy.thread_id);
    expect(copied.values.messages).toEqual(fork.messages);
    const next = agentValues(
      await client.runs.wait(copy.thread_id, "agent", {
        input: { messages: [{ role: "user", content: "Plan a small launch" }] },
      }),
    );
    expect(next.messages.slice(0, fork.messages.length)).toEqual(fork.messages);
    expect(next.subagent_runs.at(-1)?.status).toBe("completed");
  });

  it("refuses a bad context value before any model call, with one line naming the field, the value and the fix", async () => {
    const line =
      'context.max_rounds "lots" is invalid: use a positive whole number, or leave it out for the agent\'s own setting';

    // Streaming (what Studio does): the error event carries the line as it is.
    const thread = await client.threads.create();
    const events: { event: string; data: unknown }[] = [];
    for await (const part of client.runs.stream(thread.thread_id, "agent", {
      input: PLAN,
      context: { max_rounds: "lots" },
      streamMode: ["updates"],
    })) {
      events.push(part);
    }
    expect(events).toEqual([
      { id: "0", event: "error", data: { error: "SubagentGraphError", message: line } },
    ]);
    // Nothing ran: the thread has no checkpoint at all.
    const state = await client.threads.getState(thread.thread_id);
    expect(state.checkpoint).toBeNull();

    // runs.wait throws; the dev server wraps the error event as JSON in its message.
    const waited = await client.runs
      .wait(null, "agent", { input: PLAN, context: { max_rounds: "lots" } })
      .then(
        () => undefined,
        (error: Error) => error.message,
      );
    const wrapped = JSON.parse(String(waited).replace(/^Error: /, "")) as unknown;
    expect(wrapped).toEqual({ error: "SubagentGraphError", message: line });

    // A misspelt field is named, with the fields the context takes.
    const misspelt = await client.runs
      .wait(null, "agent", { input: PLAN, context: { max_round: 2 } })
      .then(
        () => undefined,
        (error: Error) => error.message,
      );
    expect(JSON.parse(String(misspelt).replace(/^Error: /, ""))).toEqual({
      error: "SubagentGraphError",
      message: `unknown field "context.max_round": the context takes ${PANEL_FIELDS.join(", ")}; remove it or check its spelling`,
    });
  });
});
