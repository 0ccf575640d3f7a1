import { Client } from "@langchain/langgraph-sdk";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { MAX_CLIENT_THREAD_ID } from "../../server/thread-scope.js";
import {
  type CallResult,
  expectError,
  type HttpServer,
  startHttpServer,
} from "../support/http-server.js";
import { mainAgentPayload, subagentPayload } from "../support/runtime-fixture.js";
import { namespacesByChildThread } from "../support/subagent-stream.js";

/**
 * Thread ids over HTTP are per user (issue 16, item 9; `server/thread-scope.ts`): a client that
 * creates a thread under an id another user holds gets exactly what it gets for an unused id,
 * and every answer shows it the id it chose.
 */

const human = (content: string) => ({ messages: [{ type: "human", content }] });

interface ThreadBody {
  thread_id: string;
  metadata: Record<string, unknown>;
  status: string;
  values: Record<string, unknown>;
}

interface FinalValues {
  messages: { type: string; content: unknown }[];
  subagent_runs: { child_thread_id: string }[];
}

/** An answer with ids and times masked, to compare two answers that differ only there. */
function shape(result: CallResult, ids: Record<string, string>): string {
  let text = JSON.stringify({ status: result.status, body: result.body });
  for (const [id, mask] of Object.entries(ids)) text = text.replaceAll(id, mask);
  return text.replace(/"\d{4}-\d\d-\d\dT[^"]+"/g, '"<time>"');
}

describe("thread ids over HTTP are each user's own", () => {
  let http: HttpServer;
  let demo: string;
  let bob: string;
  beforeEach(async () => {
    http = await startHttpServer({ users: ["demo", "bob"] });
    demo = http.tokenOf("demo");
    bob = http.tokenOf("bob");
    for (const uid of ["demo", "bob"]) {
      await http.fixture.runtime.agents.create(uid, subagentPayload("researcher", "offline"));
      await http.fixture.runtime.agents.create(uid, {
        ...mainAgentPayload("boss", "offline", ["researcher"]),
        is_default: true,
      });
    }
  });
  afterEach(async () => {
    await http.stop();
  });

  it("answers bob's create under demo's id as under an unused one, and his reads agree", async () => {
    // Demo's threads: one under an id she chose, one the server minted; both with a run.
    const chosen = await http.call<ThreadBody>("POST", "/threads", {
      token: demo,
      body: { thread_id: "ghost", metadata: { owner: "demo" } },
    });
    expect(chosen.body.thread_id).toBe("ghost");
    const minted = await http.call<ThreadBody>("POST", "/threads", {
      token: demo,
      body: { metadata: { owner: "demo" } },
    });
    for (const id of ["ghost", minted.body.thread_id]) {
      const run = await http.call("POST", `/threads/${id}/runs/wait`, {
        token: demo,
        body: { assistant_id: "boss", input: human("demo's question") },
      });
      expect(run.status).toBe(200);
    }

    for (const taken of ["ghost", minted.body.thread_id]) {
      const unused = `unused-${taken}`;
      const as = async (id: string) => ({
        create: await http.call("POST", "/threads", { token: bob, body: { thread_id: id } }),
        get: await http.call("GET", `/threads/${id}`, { token: bob }),
        again: await http.call("POST", "/threads", { token: bob, body: { thread_id: id } }),
        kept: await http.call("POST", "/threads", {
          token: bob,
          body: { thread_id: id, if_exists: "do_nothing" },
        }),
        state: await http.call("GET", `/threads/${id}/state`, { token: bob }),
      });
      const underTaken = await as(taken);
      const underUnused = await as(unused);
      for (const step of ["create", "get", "again", "kept", "state"] as const) {
        expect(shape(underTaken[step], { [taken]: "<id>" }), `${taken}: ${step}`).toBe(
          shape(underUnused[step], { [unused]: "<id>" }),
        );
      }
      // What those answers are: bob's own empty thread by that name, and 409 for his own id.
      expect(underTaken.create.status).toBe(200);
      expect(underTaken.get.body).toMatchObject({ thread_id: taken, metadata: {}, values: {} });
      expectError(underTaken.again, 409, "ALREADY_EXISTS");
      expect(underTaken.kept.body).toMatchObject({ thread_id: taken });
    }

    // Demo's threads are as she left them.
    for (const id of ["ghost", minted.body.thread_id]) {
      const thread = await http.call<ThreadBody>("GET", `/threads/${id}`, { token: demo });
      expect(thread.body.metadata).toMatchObject({ owner: "demo" });
      const values = thread.body.values as unknown as FinalValues;
      expect(values.messages[0]?.content).toBe("demo's question");
    }
  });

  it("shows each user the id they chose in every answer: thread, run, stream, state, children", async () => {
    const base = http.base;
    const results: Record<string, { text: string; children: string[] }> = {};
    for (const [uid, token] of [
      ["demo", demo],
      ["bob", bob],
    ] as const) {
      const client = new Client({ apiUrl: base, apiKey: token });
      const thread = await client.threads.create({ threadId: "project-x" });
      expect(thread.thread_id).toBe("project-x");
      let created: { run_id: string; thread_id?: string } | undefined;
      const events: { event: string; data: unknown }[] = [];
      for await (const part of client.runs.stream("project-x", "boss", {
        input: human(`${uid} asks`),
        streamMode: ["values", "updates", "messages-tuple"],
        streamSubgraphs: true,
        onRunCreated: (meta) => {
          created = meta;
        },
      })) {
        events.push(part);
      }
      expect(created?.thread_id).toBe("project-x");
      expect(events[0]).toMatchObject({ event: "metadata", data: { thread_id: "project-x" } });
      const final = events.at(-1)?.data as FinalValues;
      const children = final.subagent_runs.map((run) => run.child_thread_id);
      expect(children.length).toBeGreaterThan(0);
      const byChild = namespacesByChildThread(events);
      for (const child of children) {
        expect(child.startsWith("project-x_sub_researcher_")).toBe(true);
        // Its events come under the namespace LangGraph gives it, not named after its thread.
        const [namespace] = byChild.get(child) ?? [];
        expect(namespace).toMatch(/^tools:/);
        expect(events.some((event) => event.event === `updates|${namespace}`)).toBe(true);
        const view = await http.call<{ thread_id: string; parent_thread_id: string }>(
          "GET",
          `/threads/project-x/subagents/${child}`,
          { token },
        );
        expect(view.body).toMatchObject({ thread_id: child, parent_thread_id: "project-x" });
        const childHistory = await http.call(
          "GET",
          `/threads/project-x/subagents/${child}/history`,
          {
            token,
          },
        );
        expect(childHistory.status).toBe(200);
      }
      const run = await client.runs.get("project-x", created?.run_id ?? "");
      expect(run.thread_id).toBe("project-x");
      const state = await client.threads.getState("project-x");
      expect(state.checkpoint.thread_id).toBe("project-x");
      const history = await client.threads.getHistory("project-x", { limit: 3 });
      const searched = await client.threads.search({ ids: ["project-x"] });
      expect(searched.map((item) => item.thread_id)).toEqual(["project-x"]);
      const text = JSON.stringify({ events, run, state, history, searched, thread });
      results[uid] = { text, children };
    }
    // Two threads, one per user, each seeing only its own conversation and children.
    expect(results.demo?.text).toContain("demo asks");
    expect(results.demo?.text).not.toContain("bob asks");
    expect(results.bob?.text).toContain("bob asks");
    expect(results.bob?.text).not.toContain("demo asks");
    for (const result of Object.values(results)) expect(result.text).not.toContain("_own_");
    // Neither reads the other's child, though both children are named after "project-x".
    const demoChild = results.demo?.children[0] ?? "";
    expectError(
      await http.call("GET", `/threads/project-x/subagents/${demoChild}`, { token: bob }),
      404,
      "NOT_FOUND",
    );
  });

  it("refuses a chosen id by its shape alone, before looking at any thread", async () => {
    const cases: [string, string][] = [
      ["x".repeat(MAX_CLIENT_THREAD_ID + 1), `at most ${MAX_CLIENT_THREAD_ID}`],
      ["notes_own_0123456789abcdef", "stored thread id"],
      ["parent_sub_researcher_0123abcd", "child thread"],
      ["has space", "letters, digits"],
    ];
    for (const [id, hint] of cases) {
      const created = await http.call("POST", "/threads", { token: bob, body: { thread_id: id } });
      const error = expectError(created, 422, "INVALID_THREAD_ID");
      expect(error.field).toBe("thread_id");
      expect(error.message).toContain(hint);
    }
    const longest = "y".repeat(MAX_CLIENT_THREAD_ID);
    const ok = await http.call<ThreadBody>("POST", "/threads", {
      token: bob,
      body: { thread_id: longest },
    });
    expect(ok.body.thread_id).toBe(longest);
    const run = await http.call<FinalValues>("POST", `/threads/${longest}/runs/wait`, {
      token: bob,
      body: { assistant_id: "boss", input: human("a long id still runs subagents") },
    });
    expect(run.status, JSON.stringify(run.body).slice(0, 300)).toBe(200);
    expect(run.body.subagent_runs[0]?.child_thread_id.startsWith(`${longest}_sub_`)).toBe(true);
  });
});
