import { HumanMessage, type ToolMessage } from "@langchain/core/messages";
import { MemorySaver } from "@langchain/langgraph";
import { createAgent } from "langchain";
import { describe, expect, it } from "vitest";
import { resolveChannelStorage } from "../../checkpoints/channel-storage.js";
import type { SubagentRun } from "../../middleware/subagent-runs.js";
import { upsertSubagentRuns } from "../../middleware/subagent-runs.js";
import { createTaskMiddleware } from "../../middleware/task.js";
import { truncateAnswer } from "../../middleware/truncate.js";
import { ScriptedChatModel } from "../../models/scripted.js";

const record = (id: string, status: SubagentRun["status"]): SubagentRun => ({
  id,
  subagent_type: "r",
  child_thread_id: `t_sub_r_0000000${id}`,
  description: "d",
  status,
  rounds: 1,
  max_rounds_reached: false,
  started_at: "2026-01-01T00:00:00.000Z",
  finished_at: "2026-01-01T00:00:01.000Z",
  result_preview: "",
  error: null,
  artifacts: [],
  usage: { input_tokens: 0, output_tokens: 0, total_tokens: 0 },
});

describe("task middleware pieces", () => {
  it("upserts subagent runs by id, keeping call order", () => {
    const merged = upsertSubagentRuns(
      [record("1", "completed"), record("2", "failed")],
      [record("2", "completed"), record("3", "timeout")],
    );
    expect(merged.map((run) => [run.id, run.status])).toEqual([
      ["1", "completed"],
      ["2", "completed"],
      ["3", "timeout"],
    ]);
    expect(upsertSubagentRuns([record("1", "failed")], undefined)).toHaveLength(1);
  });

  it("truncates by code points with a marker, never splitting a surrogate pair", () => {
    expect(truncateAnswer("short", 10)).toBe("short");
    const emoji = "😀".repeat(5);
    const cut = truncateAnswer(emoji, 2, "child-1");
    expect(cut).toBe(
      "😀😀\n…[truncated: 3 of 5 characters omitted; the full answer is in child thread child-1]",
    );
    // No lone surrogate survives the cut.
    expect(cut).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])/);
  });

  it("answers with an error, not a crash, when the run has no uid in its context", async () => {
    const model = new ScriptedChatModel("main", [
      {
        reply: { toolCalls: [{ name: "task", args: { description: "x", subagent_type: "r" } }] },
      },
      {
        expect: (call) => {
          const result = call.messages.at(-1) as ToolMessage;
          expect(result.status).toBe("error");
          expect(result.content).toContain("context has no uid or thread_id");
        },
        reply: { text: "recovered" },
      },
    ]);
    let loads = 0;
    const agent = createAgent({
      model,
      tools: [],
      checkpointer: new MemorySaver(),
      middleware: [
        createTaskMiddleware({
          subagents: [{ slug: "r", description: "a subagent" }],
          storage: resolveChannelStorage(),
          loadChild: async () => {
            loads += 1;
            return undefined;
          },
          limits: async () => ({
            maxResultChars: 100,
            subagentTimeoutMs: undefined,
            maxParallelSubagents: 3,
          }),
        }),
      ],
    });

    const result = await agent.invoke(
      { messages: [new HumanMessage("go")] },
      { configurable: { thread_id: "t1" } },
    );

    expect(result.messages.at(-1)?.content).toBe("recovered");
    expect(loads).toBe(0);
    model.assertComplete();
  });

  it("records a call whose subagent fails to load, with its events, by itself", async () => {
    // No tool-call-answers middleware here: the task tool's own answer is what the model reads.
    const reason =
      'subagent "r" could not start: disk on fire; this was unexpected: try again, and if it fails again check the subagent\'s settings (model, tools, mcp_servers) and the agent store';
    const model = new ScriptedChatModel("main", [
      {
        reply: {
          toolCalls: [{ name: "task", args: { description: "x", subagent_type: "r" }, id: "c1" }],
        },
      },
      {
        expect: (call) => {
          const result = call.messages.at(-1) as ToolMessage;
          expect(result.status).toBe("error");
          expect(result.content).toBe(reason);
        },
        reply: { text: "recovered" },
      },
    ]);
    const agent = createAgent({
      model,
      tools: [],
      checkpointer: new MemorySaver(),
      middleware: [
        createTaskMiddleware({
          subagents: [{ slug: "r", description: "a subagent" }],
          storage: resolveChannelStorage(),
          loadChild: async () => {
            throw new Error("disk on fire");
          },
          limits: async () => ({
            maxResultChars: 100,
            subagentTimeoutMs: undefined,
            maxParallelSubagents: 3,
          }),
        }),
      ],
    });

    const custom: unknown[] = [];
    let values: { subagent_runs?: SubagentRun[] } = {};
    for await (const [mode, chunk] of await agent.stream(
      { messages: [new HumanMessage("go")] },
      {
        configurable: { thread_id: "t1" },
        context: { uid: "alice", thread_id: "t1" },
        streamMode: ["custom", "values"],
      },
    )) {
      if (mode === "custom") custom.push(chunk);
      else values = chunk as typeof values;
    }

    const [run] = values.subagent_runs ?? [];
    expect(values.subagent_runs).toHaveLength(1);
    expect(run).toMatchObject({ id: "c1", status: "failed", child_thread_id: "", error: reason });
    expect(custom).toEqual([
      expect.objectContaining({ type: "subagent_started", id: "c1", child_thread_id: "" }),
      { type: "subagent_finished", run },
    ]);
    model.assertComplete();
  });
});
