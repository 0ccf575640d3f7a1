import { HumanMessage, SystemMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { MemorySaver, MessagesAnnotation, StateGraph } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { OfflineChatModel } from "../../models/offline.js";
import { messageText } from "../../util/message-text.js";

/**
 * The offline model's streamed turn survives both of LangGraph's stream paths (issue 40, item 4):
 * the content-block protocol of `streamEvents` v3 (what the official dev server streams) rebuilds
 * the message from block events, so a tool call indexed onto the text block was lost there.
 */

const task = tool(async () => "", {
  name: "task",
  description: "delegate",
  schema: z.object({ description: z.string(), subagent_type: z.string() }),
});

const system = new SystemMessage(
  "You are the boss.\n\nSubagents you can call with the `task` tool:\n- researcher: finds facts\n- reviewer: checks plans",
);
const request = () => ({ messages: [new HumanMessage("Plan a picnic")] });

/** One node calling the offline model with the task tool, on a fresh thread of a memory saver. */
function delegatingGraph() {
  const model = new OfflineChatModel().bindTools([task]);
  return new StateGraph(MessagesAnnotation)
    .addNode("agent", async (state) => ({
      messages: [await model.invoke([system, ...state.messages])],
    }))
    .addEdge("__start__", "agent")
    .compile({ checkpointer: new MemorySaver() });
}

/** What the model answers to the same turn without streaming. */
async function unstreamed() {
  return new OfflineChatModel().bindTools([task]).invoke([system, ...request().messages]);
}

interface ProtocolMessageEvent {
  event: string;
  index?: number;
  content?: { type: string; id?: string; text?: string };
}

describe("the offline model's two-task turn, streamed", () => {
  it("keeps both task calls under streamEvents v3, in the events and in the saved state", async () => {
    const graph = delegatingGraph();
    const config = { configurable: { thread_id: "v3" } };
    const run = await graph.streamEvents(request(), { version: "v3", ...config });
    const events: ProtocolMessageEvent[] = [];
    for await (const event of run) {
      if (event.method === "messages") events.push(event.params.data as ProtocolMessageEvent);
    }

    const finished = events.filter((event) => event.event === "content-block-finish");
    expect(finished.map((event) => event.content?.type)).toEqual([
      "text",
      "tool_call",
      "tool_call",
    ]);
    expect(new Set(finished.map((event) => event.index)).size).toBe(3);
    const expected = await unstreamed();
    // The text block is the text alone: no tool call's fields merged into it.
    expect(finished[0]?.content).toEqual({ type: "text", text: expected.content });
    const ids = (expected.tool_calls ?? []).map((call) => call.id);
    expect(ids).toHaveLength(2);
    expect(finished.slice(1).map((event) => event.content?.id)).toEqual(ids);

    const saved = (await graph.getState(config)).values.messages.at(-1);
    expect(saved?.getType()).toBe("ai");
    const calls = (saved as { tool_calls?: { id?: string; args: unknown }[] }).tool_calls ?? [];
    expect(calls.map((call) => call.id)).toEqual(ids);
    expect(calls.map((call) => call.args)).toEqual(expected.tool_calls?.map((call) => call.args));
  });

  it("saves the same message on the legacy graph.stream path as the model returns unstreamed", async () => {
    const graph = delegatingGraph();
    const config = { configurable: { thread_id: "legacy" } };
    let streamedText = "";
    for await (const [mode, chunk] of await graph.stream(request(), {
      streamMode: ["messages", "values"],
      ...config,
    })) {
      if (mode === "messages") streamedText += messageText(chunk[0]);
    }

    const expected = await unstreamed();
    expect(streamedText).toBe(expected.content);
    const saved = (await graph.getState(config)).values.messages.at(-1);
    expect(saved?.content).toBe(expected.content);
    expect((saved as { tool_calls?: unknown[] }).tool_calls).toEqual(expected.tool_calls);
    expect((saved as { invalid_tool_calls?: unknown[] }).invalid_tool_calls ?? []).toEqual([]);
  });
});
