import { Client } from "@langchain/langgraph-sdk/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seedDemo } from "../../agents/demo.js";
import {
  type Conversation,
  conversationFromValues,
  emptyConversation,
  withHumanMessage,
} from "../../web/src/chat-state.js";
import { RunConversation } from "../../web/src/run-conversation.js";
import { type HttpServer, startHttpServer } from "../support/http-server.js";

/**
 * The chat page's stream handling (the SDK's stream manager, `web/src/run-conversation.ts`, with
 * our own reading of cards and records), fed with a real run's events from the HTTP server (the
 * demo agents on the offline model: a main agent delegating to two subagents).
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
    const run = new RunConversation(
      withHumanMessage(emptyConversation(), "Compare solar and wind power"),
    );
    for await (const part of client.runs.stream(threadId, main?.id ?? "", {
      input: { messages: [{ type: "human", content: "Compare solar and wind power" }] },
      streamMode: ["values", "updates", "messages-tuple", "custom"],
      streamSubgraphs: true,
    })) {
      run.push(part.event, part.data);
      snapshots.push({ event: part.event, conversation: await run.settled() });
    }
    snapshots.push({ event: "end", conversation: await run.end() });
  });
  afterAll(() => http.stop());

  const last = () => snapshots.at(-1)?.conversation as Conversation;

  it("learns the run id first", () => {
    expect(snapshots[0]?.event).toBe("metadata");
    expect(snapshots[0]?.conversation.runId).toMatch(/[0-9a-f-]{36}/);
  });

  it("shows each subagent running on its child thread, with its own messages, before it finishes", () => {
    const running = snapshots.find((s) =>
      Object.values(s.conversation.cards).some((c) => c.status === "running" && c.childThreadId),
    );
    expect(running, "a card was running with its child thread known").toBeDefined();
    // The child's tokens (under its tools:<task id> namespace) went to its card while it ran.
    for (const slug of ["researcher", "reviewer"]) {
      const live = snapshots.find((s) =>
        Object.values(s.conversation.cards).some(
          (c) =>
            c.subagentType === slug &&
            c.status === "running" &&
            c.rounds === 1 &&
            c.messages.some((m) => m.role === "assistant" && m.text.includes(`as: You are`)),
        ),
      );
      expect(live, `the ${slug} card showed its own message while it ran`).toBeDefined();
    }
  });

  it("never shows a subagent's message in the main conversation", () => {
    const childIds = new Set(
      Object.values(last().cards).flatMap((card) => card.messages.map((m) => m.id)),
    );
    expect(childIds.size).toBeGreaterThanOrEqual(2);
    for (const { event, conversation } of snapshots) {
      const leaked = conversation.messages.filter(
        (m) =>
          childIds.has(m.id) ||
          // A subagent's answer; the main agent's start "Delegating" or "Here is what".
          (m.role === "assistant" && m.text.startsWith("[offline model] Speaking as:")),
      );
      expect(leaked, `after ${event}`).toEqual([]);
    }
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
    // Each card keeps its subagent's own answer, not the parent's copy of the task's result.
    for (const card of cards) {
      expect(card.messages.map((m) => m.role)).toEqual(["assistant"]);
      expect(card.messages.some((m) => m.toolCallId === card.id)).toBe(false);
    }
    expect(final.messages.at(-1)?.role).toBe("assistant");
    expect(final.messages.at(-1)?.text).toContain("researcher");
    expect(final.error).toBeUndefined();
  });
});

/** Feeds `events` to a run over `base` and returns the conversation once they are applied. */
async function fold(
  events: [string, unknown][],
  base: Conversation = emptyConversation(),
): Promise<RunConversation> {
  const run = new RunConversation(base);
  for (const [event, data] of events) run.push(event, data);
  await run.settled();
  return run;
}

const taskCalls = {
  type: "ai",
  id: "m1",
  content: [{ type: "text", text: "Delegating" }],
  tool_calls: [
    { id: "c1", name: "task", args: { subagent_type: "scout", description: "look" } },
    { id: "c2", name: "read_file", args: { path: "/x" } },
  ],
};
const started = {
  type: "subagent_started",
  id: "c1",
  subagent_type: "scout",
  child_thread_id: "t_sub_scout_1",
  description: "look",
  started_at: "2026-01-01T00:00:00.000Z",
};

describe("chat state events", () => {
  it("merges tokens into the message with the chunk's id, and a state's message replaces them", async () => {
    const run = await fold(
      ["Hel", "lo"].map((text) => ["messages", [{ type: "ai", id: "m1", content: text }, {}]]),
    );
    expect(run.conversation.messages).toMatchObject([
      { id: "m1", role: "assistant", text: "Hello" },
    ]);
    run.push("values", { messages: [{ type: "ai", id: "m1", content: "Hello!", tool_calls: [] }] });
    expect((await run.end()).messages.map((m) => m.text)).toEqual(["Hello!"]);
  });

  it("a rejoined stream's replay of a stored message does not double it", async () => {
    const base = conversationFromValues({ messages: [{ type: "ai", id: "m1", content: "Hello" }] });
    const run = new RunConversation(base, { replay: true });
    for (const text of ["Hel", "lo"])
      run.push("messages", [{ type: "ai", id: "m1", content: text }, {}]);
    expect((await run.end()).messages.map((m) => m.text)).toEqual(["Hello"]);
  });

  it("turns task calls into cards, and a subagent's tokens into its card's messages", async () => {
    const run = await fold([
      ["updates", { model_request: { messages: [taskCalls] } }],
      ["values", { messages: [{ type: "human", id: "h1", content: "go" }, taskCalls] }],
      ["custom", started],
      // The subagent's graph starts under the namespace of the tools task that runs it.
      ["values|tools:task-1", { messages: [{ type: "human", id: "k0", content: "look" }] }],
      [
        "messages|tools:task-1",
        [
          { type: "ai", id: "k1", content: "found it" },
          { langgraph_checkpoint_ns: "tools:task-1|model_request:1" },
        ],
      ],
    ]);
    const { conversation } = run;
    expect(conversation.messages.map((m) => m.text)).toEqual(["go", "Delegating"]);
    expect(Object.keys(conversation.cards)).toEqual(["c1"]);
    expect(conversation.cards.c1).toMatchObject({
      status: "running",
      childThreadId: "t_sub_scout_1",
      preview: "found it",
      rounds: 1,
      messages: [{ id: "k1", role: "assistant", text: "found it" }],
    });
    // A subagent's own events change none of our cards' records.
    run.push("updates|tools:task-1", { model_request: { subagent_runs: [] } });
    expect((await run.end()).cards.c1?.status).toBe("running");
  });

  it("gives a card of the stored state its resumed subagent's messages", async () => {
    const base = conversationFromValues({
      messages: [{ type: "human", id: "h1", content: "go" }, taskCalls],
    });
    const run = await fold(
      [
        ["values|tools:task-2", { messages: [{ type: "human", id: "k0", content: "look" }] }],
        ["messages|tools:task-2", [{ type: "ai", id: "k2", content: "resumed" }, {}]],
      ],
      base,
    );
    expect(run.conversation.cards.c1?.messages.map((m) => m.text)).toEqual(["resumed"]);
    expect(run.conversation.messages.map((m) => m.id)).toEqual(["h1", "m1"]);
  });

  it("keeps a running card across a values event that has no record for it yet", async () => {
    const run = await fold([
      ["custom", { ...started, child_thread_id: "child" }],
      [
        "values",
        {
          messages: [
            {
              type: "ai",
              id: "m1",
              content: "",
              tool_calls: [{ id: "c1", name: "task", args: { subagent_type: "scout" } }],
            },
          ],
          subagent_runs: [],
        },
      ],
    ]);
    expect(run.conversation.cards.c1).toMatchObject({ status: "running", childThreadId: "child" });
  });

  it("reports a stream error", async () => {
    const run = await fold([
      ["error", { error: "RUN_FAILED", message: "the model is unreachable" }],
    ]);
    expect((await run.end()).error).toBe("the model is unreachable");
  });
});
