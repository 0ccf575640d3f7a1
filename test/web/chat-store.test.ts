import { describe, expect, it, vi } from "vitest";
import { ApiError } from "../../web/src/api-error.js";
import { STREAM_MODES } from "../../web/src/chat-requests.js";
import { ChatStore } from "../../web/src/chat-store.js";
import { agent, ScriptedChatApi, ScriptedRun, thread } from "./scripted-chat-api.js";

/**
 * The chat page's state and operations (`web/src/chat-store.ts`) against a scripted API, in Node:
 * what the page shows while a run goes on and after it, what a refusal gives back, and which
 * conversation a run's end may draw on.
 */

const human = (id: string, content: string) => ({ id, type: "human" as const, content });
const ai = (id: string, content: string) => ({ id, type: "ai" as const, content });

/** A store over `api`, with the routes it went to and how often it asked to be drawn. */
function storeOf(api: ScriptedChatApi) {
  const routes: string[] = [];
  const changes = { count: 0 };
  const chat = new ChatStore(api, {
    onChange: () => {
      changes.count += 1;
    },
    navigate: (hash) => routes.push(hash),
  });
  return { chat, routes, changes };
}

/** An API with a default agent, another one and a subagent. */
function apiWithAgents(): ScriptedChatApi {
  const api = new ScriptedChatApi();
  api.agents = [
    agent("helper"),
    agent("boss", { is_default: true }),
    agent("scout", { is_subagent: true, name: "Scout" }),
  ];
  return api;
}

describe("ChatStore", () => {
  it("offers chat agents only, chooses the default one, and a thread's own agent when opened", async () => {
    const api = apiWithAgents();
    api.threads = [thread("t9", "helper", "Old talk")];
    const { chat } = storeOf(api);
    await chat.load();
    expect(chat.state.agents?.map((a) => a.id)).toEqual(["helper", "boss"]);
    expect(chat.state.agentId).toBe("boss");
    // A subagent is named on its card, by slug.
    expect(chat.names.get("scout")).toBe("Scout");
    await chat.open("t9");
    expect(chat.state.agentId).toBe("helper");
    expect(chat.thread?.metadata?.title).toBe("Old talk");
  });

  it("sends a first message: a thread titled by it, the route to it, the run followed, then the stored state", async () => {
    const api = apiWithAgents();
    const { chat, routes } = storeOf(api);
    await chat.load();
    await chat.open(undefined);
    const run = new ScriptedRun("r1");
    api.runs.push(run);
    chat.setDraft("  What is in the report?  ");
    const sending = chat.send();
    await vi.waitFor(() => expect(api.started).toHaveLength(1));
    expect(routes).toEqual(["#/chat/t1"]);
    expect(api.calls).toContain('createThread {"title":"What is in the report?"}');
    expect(api.started[0]).toEqual({
      threadId: "t1",
      body: {
        assistantId: "boss",
        input: { messages: [{ type: "human", content: "What is in the report?" }] },
        streamMode: STREAM_MODES,
        streamSubgraphs: true,
      },
    });
    // While it runs: the message on screen, the draft empty, sending refused, the thread running.
    expect(chat.state.draft).toBe("");
    expect(chat.conversation.messages.map((m) => m.text)).toEqual(["What is in the report?"]);
    expect(chat.live?.threadId).toBe("t1");
    expect(chat.running.has("t1")).toBe(true);
    run.announce().push("values", {
      messages: [human("h1", "What is in the report?"), ai("a1", "Figures.")],
    });
    await vi.waitFor(() => expect(chat.live?.runId).toBe("r1"));
    await vi.waitFor(() => expect(chat.conversation.messages).toHaveLength(2));
    api.stored.set("t1", [human("h1", "What is in the report?"), ai("a1", "Figures (stored).")]);
    run.end();
    await sending;
    // Ended: the thread's stored state is on screen, and the run is forgotten.
    expect(chat.followed).toBeUndefined();
    expect(chat.conversation.messages.map((m) => m.text)).toEqual([
      "What is in the report?",
      "Figures (stored).",
    ]);
    expect(chat.state.filesVersion).toBe(1);
    expect(chat.state.error).toBeUndefined();
  });

  it("names the attached files in the message, and a conversation started by an upload gets its title from the first message", async () => {
    const api = apiWithAgents();
    const { chat, routes } = storeOf(api);
    await chat.load();
    await chat.open(undefined);
    await chat.attach(new File(["x"], "notes.md"));
    expect(routes).toEqual(["#/chat/t1"]);
    expect(chat.state.attached).toEqual(["/home/gem/user-data/uploads/notes.md"]);
    expect(chat.state.filesVersion).toBe(1);
    // The route now names the new thread: the page opens it.
    await chat.open("t1");
    api.runs.push(new ScriptedRun("r1").announce().end());
    chat.setDraft("Summarise");
    await chat.send();
    expect(api.calls).toContain('updateThread t1 {"title":"Summarise"}');
    expect(api.started[0]?.body.input).toEqual({
      messages: [
        {
          type: "human",
          content: "Summarise\n\n(Attached: `/home/gem/user-data/uploads/notes.md`)",
        },
      ],
    });
    expect(chat.state.attached).toEqual([]);
  });

  it("gives a refused message back: its draft, its files and the conversation before it, with what to do", async () => {
    const api = apiWithAgents();
    api.threads = [thread("t1", "boss", "Busy one")];
    api.stored.set("t1", [human("h0", "Earlier"), ai("a0", "Answer")]);
    const { chat } = storeOf(api);
    await chat.load();
    await chat.open("t1");
    api.runs.push(new ScriptedRun("r1").fail(new ApiError(409, "THREAD_BUSY", "thread is busy")));
    chat.setDraft("Again");
    await chat.send();
    expect(chat.state.draft).toBe("Again");
    expect(chat.conversation.messages.map((m) => m.text)).toEqual(["Earlier", "Answer"]);
    expect(chat.state.error).toBe("thread is busy (wait for the running answer, or cancel it)");
    // Refused runs leave nothing to read: the stored state is not read again.
    expect(api.calls.filter((call) => call === "threadState t1")).toHaveLength(1);
  });

  it("refuses to send without an agent, or with the conversation's deleted agent", async () => {
    const api = new ScriptedChatApi();
    const { chat } = storeOf(api);
    await chat.load();
    chat.setDraft("Hello");
    await chat.send();
    expect(chat.state.error).toMatch(/^Choose an agent first/);
    api.agents = [agent("boss", { is_default: true })];
    api.threads = [thread("t1", "gone")];
    await chat.load();
    await chat.open("t1");
    expect(chat.agentMissing).toBe(true);
    await chat.send();
    expect(chat.state.error).toMatch(/^This conversation's agent no longer exists/);
    expect(api.started).toEqual([]);
    expect(chat.state.draft).toBe("Hello");
  });

  it("rejoins a conversation's running run from its first event when the conversation is opened", async () => {
    const api = apiWithAgents();
    api.threads = [thread("t1", "boss")];
    api.stored.set("t1", [human("h1", "Long job")]);
    api.runningRuns.set("t1", "r7");
    const run = new ScriptedRun("r7");
    api.runs.push(run);
    const { chat } = storeOf(api);
    await chat.load();
    const opening = chat.open("t1");
    await vi.waitFor(() =>
      expect(api.joined).toEqual([{ threadId: "t1", runId: "r7", lastEventId: "-1" }]),
    );
    expect(chat.live?.runId).toBe("r7");
    run.push("values", { messages: [human("h1", "Long job"), ai("a1", "Done.")] }).end();
    api.stored.set("t1", [human("h1", "Long job"), ai("a1", "Done.")]);
    await opening;
    expect(chat.live).toBeUndefined();
    expect(chat.conversation.messages.map((m) => m.text)).toEqual(["Long job", "Done."]);
  });

  it("a run that ends while another conversation is on screen draws nothing there", async () => {
    const api = apiWithAgents();
    api.threads = [thread("t1", "boss"), thread("t2", "boss")];
    api.stored.set("t2", [human("x", "Other conversation")]);
    const { chat } = storeOf(api);
    await chat.load();
    await chat.open("t1");
    const run = new ScriptedRun("r1");
    api.runs.push(run);
    chat.setDraft("Slow question");
    const sending = chat.send();
    await vi.waitFor(() => expect(api.started).toHaveLength(1));
    await chat.open("t2");
    // Still followed, and still marked running in the list.
    expect(chat.running.has("t1")).toBe(true);
    expect(chat.live).toBeUndefined();
    run.announce().push("error", { message: "the model failed" }).end();
    await sending;
    expect(chat.state.error).toBeUndefined();
    expect(chat.conversation.messages.map((m) => m.text)).toEqual(["Other conversation"]);
  });

  it("cancels the run on screen only, and says so once it has ended", async () => {
    const api = apiWithAgents();
    api.threads = [thread("t1", "boss")];
    const { chat } = storeOf(api);
    await chat.load();
    await chat.open("t1");
    const run = new ScriptedRun("r1");
    api.runs.push(run);
    chat.setDraft("Stop me");
    const sending = chat.send();
    run.announce();
    await vi.waitFor(() => expect(chat.live?.runId).toBe("r1"));
    await chat.cancel();
    expect(api.cancelled).toEqual(["r1"]);
    expect(chat.live?.cancelRequested).toBe(true);
    run.end();
    await sending;
    expect(chat.state.notice).toBe("The run was cancelled.");
  });

  it("resends an edited message from the checkpoint before it, and says when the history no longer has it", async () => {
    const api = apiWithAgents();
    api.threads = [thread("t1", "boss")];
    api.stored.set("t1", [human("h1", "First"), ai("a1", "One"), human("h2", "Second")]);
    api.history.set("t1", [
      {
        values: { messages: [{ id: "h1" }, { id: "a1" }] },
        next: [],
        checkpoint: { checkpoint_id: "c2" },
      },
    ]);
    const { chat } = storeOf(api);
    await chat.load();
    await chat.open("t1");
    chat.edit({ id: "h2", text: "Second, better" });
    api.runs.push(new ScriptedRun("r1").announce().end());
    await chat.resend("h2", " Second, better ");
    expect(chat.state.editing).toBeUndefined();
    expect(api.started[0]?.body).toMatchObject({
      checkpointId: "c2",
      input: { messages: [{ type: "human", content: "Second, better" }] },
    });
    api.history.set("t1", []);
    await chat.resend("h1", "First again");
    expect(chat.state.error).toMatch(/^Cannot resend this message: the thread's history/);
    expect(api.started).toHaveLength(1);
  });

  it("an answer the server refuses is returned for its card, not shown on the page", async () => {
    const api = apiWithAgents();
    api.threads = [thread("t1", "boss")];
    const { chat } = storeOf(api);
    await chat.load();
    await chat.open("t1");
    api.runs.push(
      new ScriptedRun("r1").fail(new ApiError(422, "VALIDATION", "2 decisions for 1 call")),
    );
    const refusal = await chat.answer("i1", [{ type: "approve" }]);
    expect(refusal).toBe("2 decisions for 1 call");
    expect(chat.state.error).toBeUndefined();
    expect(api.started[0]?.body.command).toEqual({
      resume: { i1: { decisions: [{ type: "approve" }] } },
    });
  });

  it("deleting the conversation on screen starts a new one; a failed delete names the conversation", async () => {
    const api = apiWithAgents();
    api.threads = [thread("t1", "boss", "Doomed"), thread("t2", "boss", "Kept")];
    const { chat, routes } = storeOf(api);
    await chat.load();
    await chat.open("t1");
    chat.setDrawerOpen(true);
    await chat.remove(api.threads[0] ?? thread("", ""));
    expect(routes).toEqual(["#/chat"]);
    expect(chat.state.drawerOpen).toBe(false);
    expect(chat.state.threads.map((t) => t.thread_id)).toEqual(["t2"]);
    api.failures.set("deleteThread", new ApiError(404, "NOT_FOUND", "thread not found"));
    await chat.remove(thread("t2", "boss", "Kept"));
    expect(chat.state.error).toBe('Cannot delete "Kept": thread not found');
  });

  it("an opening overtaken by another is dropped", async () => {
    const api = apiWithAgents();
    api.stored.set("t1", [human("h1", "One")]);
    api.stored.set("t2", [human("h2", "Two")]);
    let release = () => {};
    api.held.set(
      "t1",
      new Promise((resolve) => {
        release = resolve;
      }),
    );
    const { chat } = storeOf(api);
    const first = chat.open("t1");
    await chat.open("t2");
    release();
    await first;
    expect(chat.conversation.messages.map((m) => m.text)).toEqual(["Two"]);
    expect(api.calls).not.toContain("runningRun t1");
  });
});
