import { AIMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { describe, expect, it } from "vitest";
import {
  admitChild,
  type CallerPolicy,
  callingTurn,
  refuseCall,
  type TaskCall,
} from "../../middleware/admission.js";

/** The verdicts on a task call, checked without a graph, a model or a store. */
const policy: CallerPolicy = { allowedSlugs: ["researcher", "writer"], maxParallelSubagents: 2 };
const researcher = { toolNames: ["web_search", "read_file"] };

function call(overrides: Partial<TaskCall> = {}): TaskCall {
  return { slug: "researcher", turnTaskCalls: 1, ...overrides };
}

describe("refuseCall (before anything loads)", () => {
  it("lets a call within the cap and the allow-list go on", () => {
    expect(refuseCall(call({ turnTaskCalls: 2 }), policy)).toBeUndefined();
  });

  it("refuses every call of a turn over the cap, naming the setting and the fix", () => {
    const reason = refuseCall(call({ turnTaskCalls: 3 }), policy);
    expect(reason).toContain("this turn made 3 task calls but at most 2 may run at once");
    expect(reason).toContain("max_parallel_subagents");
    expect(reason).toContain("make at most 2 task calls per turn");
  });

  it("refuses a slug outside the allow-list, naming only the allowed ones", () => {
    const reason = refuseCall(call({ slug: "admin-bot" }), policy);
    expect(reason).toBe('unknown subagent_type "admin-bot": use one of "researcher", "writer"');
  });

  it("checks the cap first: an over-cap turn is refused whatever it asked for", () => {
    expect(refuseCall(call({ slug: "admin-bot", turnTaskCalls: 5 }), policy)).toContain(
      "at most 2 may run at once",
    );
  });
});

describe("admitChild (with the subagent as loaded)", () => {
  it("admits a call without tools with the subagent's whole allowed set", () => {
    const verdict = admitChild(call(), policy, researcher);
    expect(verdict).toEqual({
      admitted: true,
      child: researcher,
      allowedTools: ["web_search", "read_file"],
    });
  });

  it("admits a subset of the allowed tools, each once", () => {
    const verdict = admitChild(call({ tools: ["read_file", "read_file"] }), policy, researcher);
    expect(verdict).toMatchObject({ admitted: true, allowedTools: ["read_file"] });
  });

  it("refuses the whole call when one tool asked for is outside the set, listing the choices", () => {
    const verdict = admitChild(call({ tools: ["read_file", "shell"] }), policy, researcher);
    expect(verdict).toEqual({
      admitted: false,
      reason:
        'refused: tools "shell" are not in the allowed set of subagent "researcher"; choose from: read_file, web_search, or omit tools',
    });
  });

  it("refuses a subagent gone since the run began, pointing at the others", () => {
    const verdict = admitChild(call(), policy, undefined);
    expect(verdict.admitted).toBe(false);
    expect(!verdict.admitted && verdict.reason).toContain('use one of "writer"');
    const alone = admitChild(call(), { ...policy, allowedSlugs: ["researcher"] }, undefined);
    expect(!alone.admitted && alone.reason).toMatch(/so it did not run: do the work without it$/);
  });
});

describe("callingTurn", () => {
  const turn = new AIMessage({
    id: "ai-1",
    content: "",
    tool_calls: [
      { id: "c1", name: "task", args: {} },
      { id: "c2", name: "read_file", args: {} },
      { id: "c3", name: "task", args: {} },
    ],
  });
  const state = {
    messages: [
      new HumanMessage("go"),
      turn,
      new ToolMessage({ content: "done", tool_call_id: "c2" }),
    ],
  };

  it("finds the AI message that made the call and counts only its task calls", () => {
    expect(callingTurn(state, "c3")).toEqual({ message: turn, taskCalls: 2 });
  });

  it("counts a call it cannot find (or a state without messages) as a turn of one", () => {
    expect(callingTurn(state, "elsewhere")).toEqual({ message: undefined, taskCalls: 1 });
    expect(callingTurn(undefined, "c1")).toEqual({ message: undefined, taskCalls: 1 });
  });
});
