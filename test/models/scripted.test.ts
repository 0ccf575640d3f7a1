import { HumanMessage, SystemMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ErrorCode } from "../../errors.js";
import { ScriptedChatModel } from "../../models/scripted.js";

const noop = tool(async () => "", { name: "noop", description: "x", schema: z.object({}) });

describe("ScriptedChatModel", () => {
  it("replies step by step and records system, messages and offered tools", async () => {
    const model = new ScriptedChatModel("m", [
      { reply: { toolCalls: [{ name: "noop", args: {} }] } },
      { reply: (call) => ({ text: `seen ${call.messages.length}` }) },
    ]);
    const bound = model.bindTools([noop]);
    const first = await bound.invoke([new SystemMessage("sys"), new HumanMessage("hi")]);
    const second = await model.invoke([new HumanMessage("a"), new HumanMessage("b")]);

    expect(first.tool_calls).toEqual([
      { name: "noop", args: {}, id: "m-call-1", type: "tool_call" },
    ]);
    expect(second.content).toBe("seen 2");
    expect(model.calls.map((call) => [call.system, call.tools])).toEqual([
      ["sys", ["noop"]],
      ["", []],
    ]);
    expect(() => model.assertComplete()).not.toThrow();
  });

  it("fails on a call beyond its script", async () => {
    const model = new ScriptedChatModel("m", [{ reply: { text: "only" } }]);
    await model.invoke([new HumanMessage("1")]);
    await expect(model.invoke([new HumanMessage("2")])).rejects.toMatchObject({
      code: ErrorCode.ScriptViolation,
      message: expect.stringContaining(
        'got call #2 but its script has only 1 step(s); last message: "2"',
      ),
    });
  });

  it("fails assertComplete when steps are left", async () => {
    const model = new ScriptedChatModel("m", [{ reply: { text: "a" } }, { reply: { text: "b" } }]);
    await model.invoke([new HumanMessage("1")]);
    expect(() => model.assertComplete()).toThrowError(/called 1 time\(s\) but its script has 2/);
  });

  it("throws a scripted error and runs expectations", async () => {
    const model = new ScriptedChatModel("m", [
      { reply: new Error("boom") },
      {
        expect: (call) => {
          if (call.messages.length !== 3) throw new Error("wanted three messages");
        },
        reply: { text: "x" },
      },
    ]);
    await expect(model.invoke([new HumanMessage("1")])).rejects.toThrow("boom");
    await expect(model.invoke([new HumanMessage("1")])).rejects.toThrow("wanted three messages");
  });

  it("stops waiting when the run is aborted", async () => {
    const model = new ScriptedChatModel("m", [{ reply: { text: "late" }, delayMs: 10_000 }]);
    const controller = new AbortController();
    const pending = model.invoke([new HumanMessage("1")], { signal: controller.signal });
    controller.abort(new Error("stop"));
    await expect(pending).rejects.toThrow();
  });
});
