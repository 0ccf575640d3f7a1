import { AIMessage, HumanMessage, SystemMessage, ToolMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { OFFLINE_LABEL, OFFLINE_NOTES_PATH, OfflineChatModel } from "../../models/offline.js";

const task = tool(async () => "", {
  name: "task",
  description: "delegate",
  schema: z.object({ description: z.string(), subagent_type: z.string() }),
});

const system = new SystemMessage(
  "You are the boss.\n- not-a-subagent: a list item of the prompt\n\nSubagents you can call with the `task` tool:\n- researcher: finds facts\n- reviewer: checks plans",
);

describe("OfflineChatModel", () => {
  it("delegates a fresh request to every listed subagent in one turn", async () => {
    const reply = await new OfflineChatModel()
      .bindTools([task])
      .invoke([system, new HumanMessage("Plan a picnic")]);

    expect(reply.content).toBe(`${OFFLINE_LABEL} Delegating to researcher, reviewer.`);
    expect(reply.tool_calls?.map((call) => call.args.subagent_type)).toEqual([
      "researcher",
      "reviewer",
    ]);
    expect(String(reply.tool_calls?.[0]?.args.description)).toContain("Plan a picnic");
  });

  it("delegates only to the subagent list, not to the skills listed after it", async () => {
    const withSkills = new SystemMessage(
      `${system.content}\n\nSkills (read-only folders of instructions under /home/gem/skills):\n- summarise: Summarises a text (/home/gem/skills/summarise/SKILL.md)`,
    );
    const reply = await new OfflineChatModel()
      .bindTools([task])
      .invoke([withSkills, new HumanMessage("Plan a picnic")]);

    expect(reply.tool_calls?.map((call) => call.args.subagent_type)).toEqual([
      "researcher",
      "reviewer",
    ]);
  });

  it("answers from the subagents' results once they are in", async () => {
    const calls = new AIMessage({
      content: "",
      tool_calls: [{ name: "task", args: {}, id: "1", type: "tool_call" }],
    });
    const reply = await new OfflineChatModel()
      .bindTools([task])
      .invoke([
        system,
        new HumanMessage("Plan a picnic"),
        calls,
        new ToolMessage({ content: "Bring water.", tool_call_id: "1", name: "task" }),
      ]);

    expect(reply.tool_calls ?? []).toEqual([]);
    expect(reply.content).toContain(`${OFFLINE_LABEL} Here is what my subagents found`);
    expect(reply.content).toContain("1. Bring water.");
  });

  it("answers from its own prompt when it has no task tool, deterministically", async () => {
    const messages = [
      new SystemMessage("You are a careful reviewer. Be brief."),
      new HumanMessage("Review the budget for the solar installation"),
    ];
    const first = await new OfflineChatModel().invoke(messages);
    const second = await new OfflineChatModel().invoke(messages);

    expect(first.content).toBe(second.content);
    expect(first.content).toContain(`${OFFLINE_LABEL} Speaking as: You are a careful reviewer.`);
    expect(first.content).toContain("installation");
    expect(first.tool_calls ?? []).toEqual([]);
  });

  it("saves its answer with write_file when asked to save, then answers", async () => {
    const writeFile = tool(async () => "", {
      name: "write_file",
      description: "write a file",
      schema: z.object({ path: z.string(), content: z.string() }),
    });
    const model = new OfflineChatModel().bindTools([writeFile]);
    const asked = [
      new SystemMessage("You are a researcher."),
      new HumanMessage("Save notes on tides"),
    ];
    const first = await model.invoke(asked);
    expect(first.tool_calls).toEqual([
      expect.objectContaining({
        name: "write_file",
        args: { path: OFFLINE_NOTES_PATH, content: expect.stringContaining("tides") },
      }),
    ]);
    const callId = first.tool_calls?.[0]?.id ?? "";
    const after = await model.invoke([
      ...asked,
      new AIMessage({ content: "", tool_calls: first.tool_calls ?? [] }),
      new ToolMessage({ content: "wrote it", tool_call_id: callId, name: "write_file" }),
    ]);
    expect(after.tool_calls ?? []).toEqual([]);
    expect(after.content).toContain("Speaking as: You are a researcher.");
    // Not asked to save, or no write_file: no call.
    expect(
      (await model.invoke([asked[0] as SystemMessage, new HumanMessage("Notes on tides")]))
        .tool_calls ?? [],
    ).toEqual([]);
    expect((await new OfflineChatModel().invoke(asked)).tool_calls ?? []).toEqual([]);
  });

  it("streams the same text it would return", async () => {
    const messages = [new SystemMessage("You are terse."), new HumanMessage("Say something")];
    const whole = await new OfflineChatModel().invoke(messages);
    let streamed = "";
    for await (const chunk of await new OfflineChatModel().stream(messages)) {
      streamed += typeof chunk.content === "string" ? chunk.content : "";
    }
    expect(streamed).toBe(whole.content);
  });
});
