import { tool } from "@langchain/core/tools";
import { Client } from "@langchain/langgraph-sdk/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { ScriptedChatModel } from "../../models/scripted.js";
import { type PendingApproval, pendingFromThread, resumeCommand } from "../../web/src/approvals.js";
import {
  type Conversation,
  conversationFromState,
  emptyConversation,
  withApprovalSent,
  withHumanMessage,
} from "../../web/src/chat-state.js";
import { RunConversation } from "../../web/src/run-conversation.js";
import { type HttpServer, startHttpServer } from "../support/http-server.js";
import { mainAgentPayload, subagentPayload } from "../support/runtime-fixture.js";

/** The stream modes the chat page asks for (web/src/chat-requests.ts). */
const STREAM_MODES = ["values", "updates", "messages-tuple", "custom"] as const;

/** The text a writer child notes: its task, from its first (human) message. */
const taskOf = (call: { messages: { content: unknown }[] }) => String(call.messages[0]?.content);

/**
 * The chat page's handling of requests for approval, fed with a real server's streams through
 * the SDK as the console reads them: two subagents pause in one turn, each request is answered
 * from its own card (a resume naming only its id) while the other stays pending.
 */
describe("approvals in the chat state, from a real server", () => {
  const noted: string[] = [];
  const main = new ScriptedChatModel("main", [
    {
      reply: {
        toolCalls: [
          { name: "task", args: { subagent_type: "writer", description: "one" } },
          { name: "task", args: { subagent_type: "writer", description: "two" } },
        ],
      },
    },
    { reply: { text: "all done" } },
  ]);
  const writer = new ScriptedChatModel("writer", [
    { reply: (call) => ({ toolCalls: [{ name: "note", args: { text: taskOf(call) } }] }) },
    { reply: (call) => ({ toolCalls: [{ name: "note", args: { text: taskOf(call) } }] }) },
    { reply: (call) => ({ text: `finished ${taskOf(call)}` }) },
    { reply: (call) => ({ text: `finished ${taskOf(call)}` }) },
  ]);
  const note = tool(
    async ({ text }: { text: string }) => {
      noted.push(text);
      return `noted ${text}`;
    },
    { name: "note", description: "write a note", schema: z.object({ text: z.string() }) },
  );
  let http: HttpServer;
  let client: Client;
  let assistantId: string;
  let threadId: string;

  beforeAll(async () => {
    http = await startHttpServer({
      runtime: { models: { "scripted:main": main, "scripted:writer": writer }, tools: [note] },
    });
    const { runtime } = http.fixture;
    await runtime.agents.create(
      "alice",
      subagentPayload("writer", "scripted:writer", {
        tools: ["note"],
        interrupt_on: { note: true },
      }),
    );
    assistantId = (
      await runtime.agents.create("alice", mainAgentPayload("boss", "scripted:main", ["writer"]))
    ).id;
    client = new Client({
      apiUrl: http.base,
      apiKey: null,
      defaultHeaders: { authorization: `Bearer ${http.tokenOf("alice")}` },
      callerOptions: { maxRetries: 0 },
    });
    threadId = (await client.threads.create()).thread_id;
  });
  afterAll(() => http?.stop());

  /** Streams a run as the console does, folding each event into `base`. */
  async function follow(
    base: Conversation,
    payload: { input?: Record<string, unknown>; command?: { resume: unknown } },
  ): Promise<Conversation> {
    const run = new RunConversation(base);
    for await (const part of client.runs.stream(threadId, assistantId, {
      ...payload,
      streamMode: [...STREAM_MODES],
      streamSubgraphs: true,
      onDisconnect: "continue",
    })) {
      run.push(part.event, part.data);
    }
    return run.end();
  }

  /** The conversation a reload shows: the thread's state, read as the page reads it. */
  async function reloaded(): Promise<Conversation> {
    return conversationFromState(await client.threads.getState(threadId));
  }

  const ids = (approvals: readonly PendingApproval[]) => approvals.map((entry) => entry.id);

  it("shows both requests live and after a reload, and answers them one at a time", async () => {
    const paused = await follow(withHumanMessage(emptyConversation(), "go"), {
      input: { messages: [{ type: "human", content: "go" }] },
    });
    expect(paused.error).toBeUndefined();
    // The interrupt notices did not wipe the conversation.
    expect(paused.messages.map((message) => message.role)).toEqual(["human", "assistant"]);
    expect(paused.approvals).toHaveLength(2);
    expect(paused.approvals.map((entry) => entry.value.subagent?.description).sort()).toEqual([
      "one",
      "two",
    ]);
    expect(Object.values(paused.cards).map((card) => card.status)).toEqual(["waiting", "waiting"]);
    expect(noted).toEqual([]);

    const afterReload = await reloaded();
    expect(ids(afterReload.approvals).sort()).toEqual(ids(paused.approvals).sort());
    expect(Object.values(afterReload.cards).map((card) => card.status)).toEqual([
      "waiting",
      "waiting",
    ]);
    // The thread lists the same requests (LangGraph's `thread.interrupts`).
    const thread = await client.threads.get(threadId);
    expect(thread.status).toBe("interrupted");
    expect(ids(pendingFromThread(thread)).sort()).toEqual(ids(paused.approvals).sort());

    // The first card answers its own request only: the other stays pending.
    const first = afterReload.approvals.find(
      (entry) => entry.value.subagent?.description === "one",
    );
    if (!first) throw new Error("no request of the subagent told 'one'");
    const base = withApprovalSent(afterReload, first.id);
    expect(ids(base.approvals)).toHaveLength(1);
    const resumed = await follow(base, {
      command: resumeCommand(first.id, [{ type: "approve" }]),
    });
    expect(noted).toEqual(["one"]);
    // The resumed child's own messages reached its card, through the SDK's stream handling.
    const resumedCard = Object.values(resumed.cards).find((card) => card.description === "one");
    expect(resumedCard?.messages.map((message) => message.text)).toContain("finished one");
    expect(
      resumed.messages.filter((m) => m.role === "assistant" && m.text === "finished one"),
    ).toEqual([]);
    const halfway = await reloaded();
    expect(halfway.approvals.map((entry) => entry.value.subagent?.description)).toEqual(["two"]);
    const statuses = Object.fromEntries(
      Object.values(halfway.cards).map((card) => [card.description, card.status]),
    );
    expect(statuses).toEqual({ one: "completed", two: "waiting" });
    expect(main.calls).toHaveLength(1);

    // The second, rejected with a reason: the tool never runs, and the turn finishes.
    const second = halfway.approvals[0] as PendingApproval;
    const done = await follow(withApprovalSent(halfway, second.id), {
      command: resumeCommand(second.id, [{ type: "reject", message: "not this one" }]),
    });
    expect(done.approvals).toEqual([]);
    expect(done.messages.at(-1)?.text).toBe("all done");
    expect(noted).toEqual(["one"]);
    const final = await reloaded();
    expect(final.approvals).toEqual([]);
    expect(Object.values(final.cards).map((card) => card.status)).toEqual([
      "completed",
      "completed",
    ]);
    expect(main.calls).toHaveLength(2);
    expect(writer.calls).toHaveLength(4);
  });
});
