import { HumanMessage, type ToolMessage } from "@langchain/core/messages";
import { MemorySaver } from "@langchain/langgraph";
import { createAgent } from "langchain";
import { describe, expect, it } from "vitest";
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
});
