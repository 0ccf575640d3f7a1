import { Client } from "@langchain/langgraph-sdk/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seedDemo } from "../../agents/demo.js";
import {
  applyStreamEvent,
  type Conversation,
  conversationFromValues,
  emptyConversation,
  withHumanMessage,
} from "../../web/src/chat-state.js";
import { type HttpServer, startHttpServer } from "../support/http-server.js";

/**
 * The chat page's stream handling, fed with a real run's events from the HTTP server (the demo
 * agents on the offline model: a main agent delegating to two subagents).
 */
describe("chat state from a real run stream", () => {
  let http: HttpServer;
  let threadId: string;
  /** The conversation after each event, in order. */
  const snapshots: { event: string; conversation: Conversation }[] = [];

  beforeAll(async () => {
    http = await startHttpServer();
    const [main] = (await seedDemo(http.fixture.runtime, "alice")).filter((a) => !a.is_subagent);
    const token = http.tokenOf("alice");
    const thread = await http.call<{ thread_id: string }>("POST", "/threads", {
      token,
      body: {},
    });
    threadId = thread.body.thread_id;
    // Read as the console reads it: through the SDK's client.
    const client = new Client({
      apiUrl: http.base,
      apiKey: null,
      defaultHeaders: { authorization: `Bearer ${token}` },
      callerOptions: { maxRetries: 0 },
    });
    let conversation = withHumanMessage(emptyConversation(), "Compare solar and wind power");
    for await (const part of client.runs.stream(threadId, main?.id ?? "", {
      input: { messages: [{ type: "human", content: "Compare solar and wind power" }] },
      streamMode: ["values", "updates", "messages-tuple", "custom"],
      streamSubgraphs: true,
    })) {
      conversation = applyStreamEvent(conversation, part.event, part.data);
      snapshots.push({ event: part.event, conversation });
    }
  });
  afterAll(() => http.stop());

  const last = () => snapshots.at(-1)?.conversation as Conversation;

  it("learns the run id first", () => {
    expect(snapshots[0]?.event).toBe("metadata");
    expect(snapshots[0]?.conversation.runId).toMatch(/[0-9a-f-]{36}/);
  });

  it("shows each subagent running on its child thread before it finishes", () => {
    const running = snapshots.find((s) =>
      Object.values(s.conversation.cards).some((c) => c.status === "running" && c.childThreadId),
    );
    expect(running, "a card was running with its child thread known").toBeDefined();
    // The child's own steps were counted while it ran (its updates came under its namespace).
    const counted = snapshots.find((s) =>
      Object.values(s.conversation.cards).some((c) => c.status === "running" && c.rounds === 1),
    );
    expect(counted, "a running card counted its child's first round").toBeDefined();
  });

  it("ends with what the stored state says", async () => {
    const state = await http.call<{ values: unknown }>("GET", `/threads/${threadId}/state`, {
      token: http.tokenOf("alice"),
    });
    const stored = conversationFromValues(state.body.values);
    const final = last();
    expect(final.messages.map((m) => [m.role, m.text])).toEqual(
      stored.messages.map((m) => [m.role, m.text]),
    );
    const cards = Object.values(final.cards);
    expect(cards.map((c) => [c.subagentType, c.status, c.rounds])).toEqual([
      ["researcher", "completed", 1],
      ["reviewer", "completed", 1],
    ]);
    expect(cards.map((c) => c.childThreadId)).toEqual(
      Object.values(stored.cards).map((c) => c.childThreadId),
    );
    expect(final.messages.at(-1)?.role).toBe("assistant");
    expect(final.messages.at(-1)?.text).toContain("researcher");
    expect(final.error).toBeUndefined();
  });
});

describe("chat state events", () => {
  it("appends tokens to the message with the chunk's id, and a complete message replaces them", () => {
    let conversation = emptyConversation();
    for (const text of ["Hel", "lo"]) {
      conversation = applyStreamEvent(conversation, "messages", [
        { type: "ai", id: "m1", content: text },
        {},
      ]);
    }
    expect(conversation.messages).toMatchObject([{ id: "m1", role: "assistant", text: "Hello" }]);
    conversation = applyStreamEvent(conversation, "updates", {
      model: { messages: [{ type: "ai", id: "m1", content: "Hello!", tool_calls: [] }] },
    });
    expect(conversation.messages.map((m) => m.text)).toEqual(["Hello!"]);
  });

  it("turns task calls into cards, and a child's tokens into its card's preview", () => {
    let conversation = applyStreamEvent(emptyConversation(), "updates", {
      model: {
        messages: [
          {
            type: "ai",
            id: "m1",
            content: [{ type: "text", text: "Delegating" }],
            tool_calls: [
              { id: "c1", name: "task", args: { subagent_type: "scout", description: "look" } },
              { id: "c2", name: "read_file", args: { path: "/x" } },
            ],
          },
        ],
      },
    });
    expect(conversation.messages[0]?.text).toBe("Delegating");
    expect(Object.keys(conversation.cards)).toEqual(["c1"]);
    conversation = applyStreamEvent(conversation, "custom", {
      type: "subagent_started",
      id: "c1",
      subagent_type: "scout",
      child_thread_id: "t_sub_scout_1",
      description: "look",
      started_at: "2026-01-01T00:00:00.000Z",
    });
    conversation = applyStreamEvent(conversation, "messages|subagent:t_sub_scout_1", [
      { type: "ai", id: "k1", content: "found it" },
      {},
    ]);
    // A child's tokens never become messages of the main conversation.
    expect(conversation.messages).toHaveLength(1);
    expect(conversation.cards.c1).toMatchObject({
      status: "running",
      childThreadId: "t_sub_scout_1",
      preview: "found it",
    });
    // Events of a child no card knows are ignored.
    expect(applyStreamEvent(conversation, "updates|subagent:other", { model: {} })).toBe(
      conversation,
    );
  });

  it("keeps a running card across a values event that has no record for it yet", () => {
    let conversation = applyStreamEvent(emptyConversation(), "custom", {
      type: "subagent_started",
      id: "c1",
      subagent_type: "scout",
      child_thread_id: "child",
      description: "look",
      started_at: "2026-01-01T00:00:00.000Z",
    });
    conversation = applyStreamEvent(conversation, "values", {
      messages: [
        {
          type: "ai",
          id: "m1",
          content: "",
          tool_calls: [{ id: "c1", name: "task", args: { subagent_type: "scout" } }],
        },
      ],
      subagent_runs: [],
    });
    expect(conversation.cards.c1).toMatchObject({ status: "running", childThreadId: "child" });
  });

  it("reports a stream error", () => {
    const failed = applyStreamEvent(emptyConversation(), "error", {
      error: "RUN_FAILED",
      message: "the model is unreachable",
    });
    expect(failed.error).toBe("the model is unreachable");
  });
});
