import { AIMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { type RecordedRequest, recordRequest, recordTool } from "../../models/model-request.js";
import { requestDifferences, textDiff } from "../../models/request-diff.js";
import { canonicalJson } from "../../util/canonical-json.js";
import { formatSubagentListing, splitSubagentListing } from "../../util/subagent-listing.js";

const ALL = { systemPrompt: true, subagents: true, tools: true, messages: true };

function lookup(description = "Looks a word up.") {
  return tool(async () => "", {
    name: "lookup",
    description,
    schema: z.object({ word: z.string(), limit: z.number().optional() }),
  });
}

function request(patch: Partial<RecordedRequest> = {}): RecordedRequest {
  return {
    system_prompt: "You are X.",
    subagents: [{ slug: "researcher", description: "finds facts" }],
    tools: [{ name: "task", schema: "sha256:000000000001" }],
    messages: [{ role: "human", text: "hi" }],
    ...patch,
  };
}

describe("what a model call was sent, recorded for a replay", () => {
  it("splits the task middleware's subagent list out of the prompt, leaving the prompt's own list items", () => {
    const own = "You are the boss.\n- not-a-subagent: a list item of the prompt";
    const listing = formatSubagentListing([
      { slug: "researcher", description: "finds\n  facts" },
      { slug: "reviewer", description: "checks plans" },
    ]);
    const system = `${own}\n\n${listing}\n\nFiles (use ls):\n- /workspace: yours`;

    expect(splitSubagentListing(system)).toEqual({
      prompt: `${own}\n\nFiles (use ls):\n- /workspace: yours`,
      subagents: [
        { slug: "researcher", description: "finds facts" },
        { slug: "reviewer", description: "checks plans" },
      ],
    });
    expect(splitSubagentListing(own)).toEqual({ prompt: own, subagents: [] });
  });

  it("hashes a tool's definition the same whatever the key order, and differently when its description changes", () => {
    const first = recordTool(lookup());
    expect(first).toEqual({
      name: "lookup",
      schema: expect.stringMatching(/^sha256:[0-9a-f]{12}$/),
    });
    expect(recordTool(lookup())).toEqual(first);
    expect(recordTool(lookup("Looks a word up in the dictionary.")).schema).not.toBe(first.schema);
    expect(canonicalJson({ b: 1, a: { d: [2, { f: 1, e: 0 }], c: 3 } })).toBe(
      '{"a":{"c":3,"d":[2,{"e":0,"f":1}]},"b":1}',
    );
  });

  it("keeps role, text, tool calls and results of the messages, and no ids", () => {
    const recorded = recordRequest({
      system: "You are X.",
      tools: [],
      messages: [
        new HumanMessage({ content: "hi", id: "h-1" }),
        new AIMessage({
          content: "",
          id: "run-123",
          tool_calls: [{ name: "lookup", args: { word: "x" }, id: "call-9", type: "tool_call" }],
        }),
        new ToolMessage({
          content: "boom",
          tool_call_id: "call-9",
          name: "lookup",
          status: "error",
        }),
      ],
    });

    expect(recorded.messages).toEqual([
      { role: "human", text: "hi" },
      { role: "ai", text: "", tool_calls: [{ name: "lookup", args: { word: "x" } }] },
      { role: "tool", name: "lookup", text: "boom", error: true },
    ]);
  });
});

describe("requestDifferences", () => {
  it("agrees with itself, and compares only the fields it is asked to", () => {
    expect(requestDifferences(request(), request(), ALL)).toEqual([]);
    const changed = request({ system_prompt: "You are Y.", messages: [] });
    expect(
      requestDifferences(request(), changed, { ...ALL, systemPrompt: false, messages: false }),
    ).toEqual([]);
    expect(requestDifferences(request(), changed, ALL).map((d) => d.field)).toEqual([
      "systemPrompt",
      "messages",
    ]);
  });

  it("names tools removed, added and redefined, then an order change alone", () => {
    const recorded = request({
      tools: [
        { name: "a", schema: "sha256:aaaaaaaaaaaa" },
        { name: "b", schema: "sha256:bbbbbbbbbbbb" },
        { name: "c", schema: "sha256:cccccccccccc" },
      ],
    });
    const actual = request({
      tools: [
        { name: "b", schema: "sha256:bbbbbbbbbbb2" },
        { name: "d", schema: "sha256:dddddddddddd" },
      ],
    });
    expect(requestDifferences(recorded, actual, ALL)).toEqual([
      {
        field: "tools",
        text: "tools differ: removed a, c; added d; definition (description or argument schema) changed of b",
      },
    ]);
    const reordered = request({ tools: [...recorded.tools].reverse() });
    expect(requestDifferences(recorded, reordered, ALL)[0]?.text).toBe(
      "tools differ: order changed: was a, b, c, now c, b, a",
    );
  });

  it("names subagents added or removed and a description that changed", () => {
    const actual = request({
      subagents: [
        { slug: "researcher", description: "finds facts fast" },
        { slug: "writer", description: "writes" },
      ],
    });
    expect(requestDifferences(request(), actual, ALL)[0]?.text).toBe(
      'subagents listed differ: added writer; description of researcher changed:\n  - "finds facts"\n  + "finds facts fast"',
    );
  });

  it("shows the first message that differs, or the one missing or extra", () => {
    const recorded = request({
      messages: [
        { role: "human", text: "hi" },
        { role: "ai", text: "", tool_calls: [{ name: "lookup", args: { word: "x" } }] },
        { role: "tool", name: "lookup", text: "x means y" },
      ],
    });
    const argsChanged = request({
      messages: [
        { role: "human", text: "hi" },
        { role: "ai", text: "", tool_calls: [{ name: "lookup", args: { word: "z" } }] },
        { role: "tool", name: "lookup", text: "x means y" },
      ],
    });
    expect(requestDifferences(recorded, argsChanged, ALL)[0]?.text).toBe(
      'input message #2 (ai) differs:\n  - tool calls [{"args":{"word":"x"},"name":"lookup"}]\n  + tool calls [{"args":{"word":"z"},"name":"lookup"}]',
    );
    const failed = request({
      messages: [
        ...recorded.messages.slice(0, 2),
        { role: "tool", name: "lookup", text: "x means y", error: true },
      ],
    });
    expect(requestDifferences(recorded, failed, ALL)[0]?.text).toBe(
      'input message #3 (tool "lookup") differs:\n  - a result\n  + an error',
    );
    const shorter = request({ messages: recorded.messages.slice(0, 2) });
    expect(requestDifferences(recorded, shorter, ALL)[0]?.text).toBe(
      'input messages differ: the graph sent 2, the recording holds 3; missing #3: tool "lookup" "x means y"',
    );
  });

  it("clips a long line around its first difference", () => {
    const base = `${"a".repeat(300)}X${"b".repeat(300)}`;
    const diff = textDiff(base, base.replace("X", "Y"));
    const [removed, added] = diff.split("\n");
    expect(removed).toMatch(/^ {2}- "…a{40}Xb+…"$/);
    expect(added).toMatch(/^ {2}\+ "…a{40}Yb+…"$/);
  });
});
