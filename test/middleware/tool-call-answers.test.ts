import { AIMessage, ToolMessage } from "@langchain/core/messages";
import { describe, expect, it } from "vitest";
import { isRefusal, withAnswerableCalls } from "../../middleware/tool-call-answers.js";

/**
 * The message rewrite behind "every tool call is answered" (the end-to-end behaviour, through
 * the real OpenAI client and the HTTP API, is in test/server/model-faults.test.ts).
 */
describe("withAnswerableCalls", () => {
  it("turns invalid calls into ordinary ones in the model's order, keeping what was sent", () => {
    const message = new AIMessage({
      id: "chatcmpl-1",
      content: "",
      tool_calls: [{ id: "call_ok", name: "current_time", args: {}, type: "tool_call" }],
      invalid_tool_calls: [
        { id: "call_bad", name: "task", args: '{"description": ', error: "Malformed args." },
      ],
      additional_kwargs: {
        tool_calls: [
          { id: "call_bad", type: "function", function: { name: "task", arguments: "" } },
          { id: "call_ok", type: "function", function: { name: "current_time", arguments: "{}" } },
        ],
      },
      usage_metadata: { input_tokens: 3, output_tokens: 2, total_tokens: 5 },
    });

    const answerable = withAnswerableCalls(message);

    expect(answerable.tool_calls?.map((call) => [call.id, call.name, call.args])).toEqual([
      ["call_bad", "task", {}],
      ["call_ok", "current_time", {}],
    ]);
    expect(answerable.invalid_tool_calls).toEqual([
      expect.objectContaining({ id: "call_bad", name: "task", args: '{"description": ' }),
    ]);
    expect(answerable.id).toBe("chatcmpl-1");
    expect(answerable.usage_metadata?.total_tokens).toBe(5);
  });

  it("gives an invalid call without an id one, the same in the call and in its record", () => {
    const message = new AIMessage({
      id: "m1",
      content: "",
      invalid_tool_calls: [{ name: "lookup", args: "{", error: "Malformed args." }],
    });

    const answerable = withAnswerableCalls(message);

    const id = answerable.tool_calls?.[0]?.id;
    expect(id).toBe("invalid_call_0_m1");
    expect(answerable.invalid_tool_calls?.[0]?.id).toBe(id);
  });

  it("leaves a message without invalid calls untouched", () => {
    const message = new AIMessage({
      content: "hi",
      tool_calls: [{ id: "c", name: "x", args: {}, type: "tool_call" }],
    });
    expect(withAnswerableCalls(message)).toBe(message);
  });
});

describe("isRefusal", () => {
  it("tells a refusal from a tool's own error", () => {
    const refusal = new ToolMessage({
      content: "no",
      tool_call_id: "c",
      status: "error",
      artifact: { kind: "refused_tool_call", reason: "unknown_tool" },
    });
    const failure = new ToolMessage({ content: "boom", tool_call_id: "c", status: "error" });
    expect([isRefusal(refusal), isRefusal(failure)]).toEqual([true, false]);
  });
});
