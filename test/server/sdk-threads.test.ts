/**
 * What `@langchain/langgraph-sdk` users expect of threads and runs (issue 17, part 3), through
 * its `Client`: deleting a thread, `values` and `select` honoured, `state_updated_at` and an
 * empty thread's checkpoint as its types say, runs listed from the store (after a restart too),
 * and refused methods answered at once.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { Client } from "@langchain/langgraph-sdk";
import { afterEach, describe, expect, it } from "vitest";
import { ScriptedChatModel } from "../../models/scripted.js";
import { createRuntime, type Runtime } from "../../runtime.js";
import { createServer, type SubagentGraphServer } from "../../server/app.js";
import { scopedThreadId } from "../../server/thread-scope.js";
import {
  mainAgentPayload,
  makeRuntime,
  type RuntimeFixture,
  subagentPayload,
} from "../support/runtime-fixture.js";
import { until } from "../support/until.js";

const human = (content: string) => ({ messages: [{ type: "human", content }] });

/** The HTTP error the SDK threw: its status and our JSON body. */
function refusal(error: unknown) {
  const { status, text } = error as { status?: number; text?: string };
  return {
    status,
    body: JSON.parse(text ?? "{}") as { error?: { code?: string; message?: string } },
  };
}

async function failureOf(action: Promise<unknown>) {
  return refusal(
    await action.then(
      () => undefined,
      (error: unknown) => error,
    ),
  );
}

describe("threads and runs as the SDK expects them", { timeout: 30_000 }, () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  /** A server over `runtime`, and alice's client (and bob's) against it. */
  async function serve(runtime: Runtime) {
    const server: SubagentGraphServer = await createServer(runtime);
    cleanups.push(async () => {
      await server.runs.cancelAll();
      await server.app.close();
    });
    const base = await server.app.listen({ host: "127.0.0.1", port: 0 });
    const clientOf = async (uid: string) => {
      if (!(await runtime.users.get(uid))) await runtime.users.add(uid);
      const { token } = await runtime.users.issueToken(uid);
      return new Client({ apiUrl: base, apiKey: token });
    };
    return { server, base, alice: await clientOf("alice"), bob: await clientOf("bob") };
  }

  /**
   * Stops `server` and its runtime, and serves a new runtime over the same data folder (with
   * `models`, for agents whose model a script plays): a restart.
   */
  async function restart(
    fixture: RuntimeFixture,
    server: SubagentGraphServer,
    models: Record<string, BaseChatModel> = {},
  ) {
    await server.runs.cancelAll();
    await server.app.close();
    await fixture.runtime.close();
    const restarted = await createRuntime({
      dataDir: fixture.dataDir,
      checkpointer: "sqlite",
      env: {},
      warn: () => undefined,
      models,
    });
    cleanups.push(() => restarted.close());
    return serve(restarted);
  }

  /**
   * A SQLite runtime where alice has "boss" (offline, with two offline subagents) and
   * "slowboss", whose subagent answers only once its run is cancelled.
   */
  async function start() {
    const slow = new ScriptedChatModel("slow", [
      {
        reply: { text: "never" },
        hold: async (_call, signal) => {
          await new Promise((resolve) => signal?.addEventListener("abort", resolve));
        },
      },
    ]);
    const slowMain = new ScriptedChatModel("slow-main", [
      {
        reply: {
          toolCalls: [{ name: "task", args: { description: "wait", subagent_type: "slow" } }],
        },
      },
    ]);
    const fixture: RuntimeFixture = await makeRuntime({
      saver: "sqlite",
      models: {
        "scripted:slow": slow,
        "scripted:slow-main": slowMain,
        "scripted:broken": new ScriptedChatModel("broken", [
          { reply: new Error("the model is down") },
        ]),
      },
    });
    cleanups.push(() => fixture.dispose());
    const { runtime } = fixture;
    await runtime.users.add("alice");
    await runtime.agents.create("alice", subagentPayload("researcher", "offline"));
    await runtime.agents.create("alice", subagentPayload("reviewer", "offline"));
    await runtime.agents.create("alice", subagentPayload("slow", "scripted:slow"));
    const boss = await runtime.agents.create(
      "alice",
      mainAgentPayload("boss", "offline", ["researcher", "reviewer"]),
    );
    const slowBoss = await runtime.agents.create(
      "alice",
      mainAgentPayload("slowboss", "scripted:slow-main", ["slow"]),
    );
    return { fixture, boss, slowBoss, slow, ...(await serve(runtime)) };
  }

  it("deletes a thread with its children, files and runs: its owner only, never while it runs", async () => {
    const { fixture, boss, slowBoss, slow, alice, bob, base } = await start();
    const saver = fixture.runtime.checkpointer;
    const stored = scopedThreadId("alice", "mine");
    const hasCheckpoint = async (threadId: string) =>
      (await saver.getTuple({ configurable: { thread_id: threadId, checkpoint_ns: "" } })) !==
      undefined;

    await alice.threads.create({ threadId: "mine" });
    const form = new FormData();
    form.append("file", new Blob(["the moon\n"]), "brief.txt");
    const { token } = await fixture.runtime.users.issueToken("alice");
    const uploaded = await fetch(`${base}/threads/mine/files`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}` },
      body: form,
    });
    expect(uploaded.status).toBe(201);
    const values = (await alice.runs.wait("mine", boss.id, {
      input: human("Why are there tides?"),
    })) as { subagent_runs: { child_thread_id: string }[] };
    // Clients see their own ids; the store has the scoped ones.
    const children = values.subagent_runs.map((record) => record.child_thread_id);
    expect(children).toHaveLength(2);
    const storedChildren = children.map((child) => `${stored}${child.slice("mine".length)}`);
    for (const child of [stored, ...storedChildren]) expect(await hasCheckpoint(child)).toBe(true);
    expect(existsSync(join(fixture.dataDir, "threads", stored, "uploads", "brief.txt"))).toBe(true);
    const [finished] = await alice.runs.list("mine");

    // Bob has no thread "mine": a 404, as for any thread that is not his.
    expect(await failureOf(bob.threads.delete("mine"))).toMatchObject({
      status: 404,
      body: { error: { code: "NOT_FOUND", category: "input" } },
    });
    // Busy: refused while a run is on it, and kept whole; the error names the thread by the
    // caller's id (not the stored, scoped one) in its details.
    const running = await alice.runs.create("mine", slowBoss.id, { input: human("wait") });
    await until(() => slow.calls.length > 0);
    expect(await failureOf(alice.threads.delete("mine"))).toMatchObject({
      status: 409,
      body: {
        error: {
          code: "THREAD_BUSY",
          category: "conflict",
          message: expect.stringContaining("cancel the run"),
          details: { thread_id: "mine" },
        },
      },
    });
    expect((await alice.threads.get("mine")).status).toBe("busy");
    await alice.runs.cancel("mine", running.run_id, true);

    expect(await alice.threads.delete("mine")).toBeUndefined();

    expect(await failureOf(alice.threads.get("mine"))).toMatchObject({ status: 404 });
    expect(await failureOf(alice.runs.list("mine"))).toMatchObject({ status: 404 });
    for (const child of [stored, ...storedChildren]) expect(await hasCheckpoint(child)).toBe(false);
    expect(existsSync(join(fixture.dataDir, "threads", stored))).toBe(false);
    expect(await fixture.runtime.runInfo("alice", finished?.run_id ?? "")).toBeUndefined();
    expect(await fixture.runtime.runInfo("alice", running.run_id)).toBeUndefined();
    // The id is free again: a new, empty thread.
    await alice.threads.create({ threadId: "mine" });
    expect((await alice.threads.getState("mine")).checkpoint).toEqual({
      thread_id: "mine",
      checkpoint_ns: "",
      checkpoint_id: null,
      checkpoint_map: null,
    });
    expect(await alice.runs.list("mine")).toEqual([]);
    expect(await failureOf(alice.runs.get("mine", finished?.run_id ?? ""))).toMatchObject({
      status: 404,
    });
  });

  it("honours search values, state and history select, and shows state_updated_at", async () => {
    const { boss, alice } = await start();
    const ran = async (question: string) => {
      const thread = await alice.threads.create();
      await alice.runs.wait(thread.thread_id, boss.id, { input: human(question) });
      return thread.thread_id;
    };
    const tides = await ran("Why are there tides?");
    const tea = await ran("Compare tea and coffee");
    const empty = (await alice.threads.create({ threadId: "empty-one" })).thread_id;
    const ids = (threads: { thread_id: string }[]) => threads.map((t) => t.thread_id).sort();

    const asked = { messages: [{ type: "human", content: "Why are there tides?" }] };
    expect(ids(await alice.threads.search({ values: asked }))).toEqual([tides]);
    expect(ids(await alice.threads.search({ values: asked, status: "idle" }))).toEqual([tides]);
    expect(ids(await alice.threads.search({ values: asked, status: "busy" }))).toEqual([]);
    expect(
      ids(
        await alice.threads.search({ values: { subagent_runs: [{ subagent_type: "reviewer" }] } }),
      ),
    ).toEqual([tides, tea].sort());
    expect(ids(await alice.threads.search({ values: { messages: "Why" } }))).toEqual([]);
    expect(ids(await alice.threads.search({ values: {} }))).toEqual([tides, tea, empty].sort());
    expect(await alice.threads.count({ values: asked })).toBe(1);
    expect(await alice.threads.count()).toBe(3);

    const selectedHistory = await alice.threads.getHistory(tides, {
      limit: 3,
      select: ["values.messages", "checkpoint"],
    });
    expect(selectedHistory).toHaveLength(3);
    for (const state of selectedHistory) {
      expect(Object.keys(state).sort()).toEqual(["checkpoint", "values"]);
      expect(Object.keys(state.values)).toEqual(["messages"]);
    }
    const selectedState = await alice.threads.getState(tides, undefined, {
      select: ["next", "values.subagent_runs"],
    });
    expect(Object.keys(selectedState).sort()).toEqual(["next", "values"]);
    expect((selectedState.values as { subagent_runs: unknown[] }).subagent_runs).toHaveLength(2);
    expect(
      await failureOf(alice.threads.getHistory(tides, { select: ["bogus" as "values"] })),
    ).toMatchObject({
      status: 422,
      body: { error: { message: expect.stringMatching(/^select: "bogus"/) } },
    });
    // History filtered by checkpoint metadata, and a state read by a checkpoint object.
    const all = await alice.threads.getHistory(tides, { limit: 100 });
    const inputs = await alice.threads.getHistory(tides, {
      limit: 100,
      metadata: { source: "input" },
    });
    expect(inputs.length).toBeGreaterThan(0);
    expect(inputs.length).toBeLessThan(all.length);
    expect(inputs.every((state) => state.metadata?.source === "input")).toBe(true);
    const older = all[2]?.checkpoint;
    const byObject = await alice.threads.getState(tides, {
      thread_id: tides,
      checkpoint_ns: "",
      checkpoint_id: older?.checkpoint_id ?? null,
      checkpoint_map: null,
    });
    expect(byObject).toEqual(await alice.threads.getState(tides, older?.checkpoint_id ?? ""));
    // A history from a named checkpoint lists that checkpoint, as LangGraph lists such a config.
    const named = await alice.threads.getHistory(tides, {
      checkpoint: { checkpoint_id: older?.checkpoint_id ?? null, checkpoint_ns: "" },
    });
    expect(named.map((state) => state.checkpoint.checkpoint_id)).toEqual([older?.checkpoint_id]);
    expect(
      await failureOf(alice.threads.getHistory(tides, { checkpoint: { checkpoint_id: "nope" } })),
    ).toMatchObject({ status: 404, body: { error: { field: "checkpoint.checkpoint_id" } } });
    expect(
      await failureOf(
        alice.threads.getHistory(tides, { checkpoint: { checkpoint_ns: "tools:1" } }),
      ),
    ).toMatchObject({
      status: 422,
      body: { error: { message: expect.stringContaining("checkpoint_ns") } },
    });

    // An empty thread: a checkpoint naming it with no id (never null), state time = creation.
    const emptyState = await alice.threads.getState(empty);
    expect(emptyState).toMatchObject({
      values: {},
      next: [],
      created_at: null,
      parent_checkpoint: null,
      checkpoint: { thread_id: "empty-one", checkpoint_ns: "", checkpoint_id: null },
    });
    const emptyThread = await alice.threads.get(empty);
    expect(emptyThread.state_updated_at).toBe(emptyThread.created_at);
    // A thread with state: the latest checkpoint's time, unmoved by a metadata update.
    const latest = await alice.threads.getState(tides);
    expect((await alice.threads.get(tides)).state_updated_at).toBe(latest.created_at);
    const updated = await alice.threads.update(tides, { metadata: { topic: "sea" } });
    expect(updated.state_updated_at).toBe(latest.created_at);
    expect(
      await alice.threads.search({ ids: [tides], select: ["thread_id", "state_updated_at"] }),
    ).toEqual([{ thread_id: tides, state_updated_at: latest.created_at }]);
  });

  it("reads a thread `error` after its latest run failed, after a restart too, until a run succeeds", async () => {
    const { fixture, boss, alice, server } = await start();
    const broken = await fixture.runtime.agents.create(
      "alice",
      mainAgentPayload("broken", "scripted:broken", []),
    );
    await alice.threads.create({ threadId: "fails" });
    const failed = await alice.runs.create("fails", broken.id, { input: human("hello") });
    await alice.runs.join("fails", failed.run_id);
    expect((await alice.runs.get("fails", failed.run_id)).status).toBe("error");
    expect((await alice.threads.get("fails")).status).toBe("error");

    // A restart: the failure is read from the store, not from this process's memory.
    const { alice: again } = await restart(fixture, server, {
      "scripted:broken": new ScriptedChatModel("broken", []),
    });
    expect((await again.threads.get("fails")).status).toBe("error");
    expect(
      (await again.threads.search({ limit: 100 })).find((t) => t.thread_id === "fails")?.status,
    ).toBe("error");

    const fixed = await again.runs.create("fails", boss.id, { input: human("Why are tides?") });
    await again.runs.join("fails", fixed.run_id);
    expect((await again.threads.get("fails")).status).toBe("idle");
  });

  it("lists runs from the store, newest first, after a restart, by status, page and select", async () => {
    const { fixture, boss, slowBoss, slow, alice, server } = await start();
    await alice.threads.create({ threadId: "runs-here" });
    const first = await alice.runs.create("runs-here", boss.id, {
      input: human("Why are there tides?"),
      metadata: { n: 1 },
    });
    await alice.runs.join("runs-here", first.run_id);
    const second = await alice.runs.create("runs-here", boss.id, {
      input: human("And waves?"),
      metadata: { n: 2 },
    });
    await alice.runs.join("runs-here", second.run_id);
    const third = await alice.runs.create("runs-here", slowBoss.id, {
      input: human("wait"),
      metadata: { n: 3 },
    });
    await until(() => slow.calls.length > 0);
    await alice.runs.cancel("runs-here", third.run_id, true);
    // The cancelled run shows the child it cancelled, as the thread's state records it.
    const cancelled = (await alice.runs.get("runs-here", third.run_id)) as unknown as {
      status: string;
      subagent_runs: { subagent_type: string; status: string }[];
    };
    expect(cancelled.status).toBe("interrupted");
    expect(cancelled.subagent_runs.map((r) => [r.subagent_type, r.status])).toEqual([
      ["slow", "cancelled"],
    ]);

    // A restart: this process's memory is gone; the store is not.
    const { alice: again } = await restart(fixture, server);

    const listed = await again.runs.list("runs-here");
    expect(listed.map((run) => [run.run_id, run.status, run.metadata])).toEqual([
      [third.run_id, "interrupted", { n: 3 }],
      [second.run_id, "success", { n: 2 }],
      [first.run_id, "success", { n: 1 }],
    ]);
    expect(listed[0]).toMatchObject({ subagent_runs: cancelled.subagent_runs });
    const ids = (runs: { run_id?: string }[]) => runs.map((run) => run.run_id);
    expect(ids(await again.runs.list("runs-here", { limit: 1, offset: 1 }))).toEqual([
      second.run_id,
    ]);
    expect(ids(await again.runs.list("runs-here", { status: "interrupted" }))).toEqual([
      third.run_id,
    ]);
    expect(ids(await again.runs.list("runs-here", { status: "success" }))).toEqual([
      second.run_id,
      first.run_id,
    ]);
    expect(await again.runs.list("runs-here", { status: "pending" })).toEqual([]);
    expect(await again.runs.list("runs-here", { select: ["run_id", "status"], limit: 1 })).toEqual([
      { run_id: third.run_id, status: "interrupted" },
    ]);
    expect(await failureOf(again.runs.list("runs-here", { select: ["kwargs"] }))).toMatchObject({
      status: 422,
      body: { error: { message: expect.stringMatching(/^select: "kwargs"/) } },
    });
    expect(await again.runs.get("runs-here", first.run_id)).toMatchObject({
      status: "success",
      metadata: { n: 1 },
    });
  });

  it("refuses a method it does not serve at once: 405 on GET, PUT and DELETE, 501 otherwise", async () => {
    const { fixture, boss } = await start();
    const { token } = await fixture.runtime.users.issueToken("alice");
    const { base } = await serve(fixture.runtime);
    let requests = 0;
    const counted = new Client({
      apiUrl: base,
      apiKey: token,
      callerOptions: {
        fetch: (...args: Parameters<typeof fetch>) => {
          requests += 1;
          return fetch(...args);
        },
      },
    });
    // The SDK retries a GET answered 5xx four more times (some 20 s); a 405 it does not.
    const getItem = await counted.store.getItem(["notes"], "k").then(
      () => undefined,
      (error: { status?: number; response?: Response; text?: string }) => error,
    );
    expect(requests).toBe(1);
    expect(getItem?.status).toBe(405);
    expect(getItem?.response?.headers.get("allow")).toBe("");
    expect(JSON.parse(getItem?.text ?? "{}")).toEqual({
      error: {
        code: "UNSUPPORTED",
        category: "input",
        message: expect.stringMatching(/^store\.getItem is not supported by this server: /),
      },
    });
    requests = 0;
    const deleted = await counted.assistants.delete(boss.id).then(
      () => undefined,
      (error: { status?: number; response?: Response }) => error,
    );
    expect(requests).toBe(1);
    expect(deleted?.status).toBe(405);
    expect(deleted?.response?.headers.get("allow")).toBe("GET");

    const copied = await fetch(`${base}/threads/anything/copy`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}` },
    });
    expect(copied.status).toBe(501);
    expect(await copied.json()).toEqual({
      error: {
        code: "UNSUPPORTED",
        category: "input",
        message: expect.stringMatching(
          /^threads\.copy is not supported by this server: .*updateState/,
        ),
      },
    });
    // Unknown paths stay a plain 404.
    const unknown = await fetch(`${base}/no/such/route`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(unknown.status).toBe(404);
  });
});
