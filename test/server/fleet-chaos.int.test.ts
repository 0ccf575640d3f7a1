import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@langchain/langgraph-sdk";
import { afterEach, describe, expect, inject, it } from "vitest";
import { createRuntime, type Runtime } from "../../runtime.js";
import { type FakeOpenAIServer, startFakeOpenAIServer } from "../support/fake-openai-server.js";
import { human } from "../support/fleet.js";
import { createTestDatabase } from "../support/postgres-cluster.js";
import { mainAgentPayload, subagentPayload } from "../support/runtime-fixture.js";
import { cleanEnv, type ServerProcess, startServerProcess } from "../support/server-process.js";
import { until } from "../support/until.js";

const RUNS = 200;
const CHILDREN = 3;
const MODEL_MS = 50;
const WORKERS = 3;
/** How long after a model call's answer its result may still be unsaved when a kill comes. */
const SAVE_WINDOW_MS = 1000;

/** One model call as the fake server saw it: what it was for, and when it ran. */
interface Call {
  key: string;
  index: number;
  start: number;
  end: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Chaos, as the issue asks: 200 background runs of 3 subagents each (a 50 ms model) go through
 * a fleet of 3 workers while a random worker is SIGKILLed every few seconds and restarted. Every
 * run ends `success`; each task call has exactly one completed record; no child that had
 * finished ran again (its own thread holds one answer); and no run ran on two workers at once
 * (no two live model calls for the same step of the same run overlap).
 */
describe("a fleet under SIGKILL", { timeout: 600_000 }, () => {
  const servers: ServerProcess[] = [];
  const dirs: string[] = [];
  let fake: FakeOpenAIServer | undefined;
  let admin: Runtime | undefined;
  afterEach(async () => {
    for (const server of servers) server.child.kill("SIGKILL");
    await Promise.all(servers.map((server) => server.exited));
    await admin?.close();
    await fake?.close();
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  it("ends every run success, with every child run once", async () => {
    const databaseUrl = await createTestDatabase(inject("postgresUrl"), "chaos");
    const calls: Call[] = [];
    fake = await startFakeOpenAIServer(async (request, index) => {
      const humanText = request.messages.find((message) => message.role === "user")?.content;
      const steps = request.messages.filter((message) => message.role !== "system").length;
      const call: Call = { key: `${request.model}|${humanText}|${steps}`, index, start: 0, end: 0 };
      call.start = performance.now();
      await sleep(MODEL_MS);
      call.end = performance.now();
      calls.push(call);
      if (request.model === "child-model") return { content: `done: ${humanText}` };
      const answered = request.messages.at(-1)?.role === "tool";
      if (answered) return { content: "final answer" };
      return {
        content: "",
        toolCalls: Array.from({ length: CHILDREN }, (_, k) => ({
          name: "task",
          arguments: { description: `${humanText} / part ${k}`, subagent_type: "helper" },
        })),
      };
    });
    const env = cleanEnv({
      DATABASE_URL: databaseUrl,
      OPENAI_API_KEY: "sk-test",
      OPENAI_BASE_URL: fake.url,
      OPENAI_MAX_RETRIES: "0",
      SUBAGENT_THREAD_LEASE_MS: "1500",
      SUBAGENT_RUN_MAX_ATTEMPTS: "50",
    });
    const adminDir = await mkdtemp(join(tmpdir(), "chaos-admin-"));
    dirs.push(adminDir);
    admin = await createRuntime({ dataDir: adminDir, env });
    await admin.users.add("alice");
    const { token } = await admin.users.issueToken("alice");
    await admin.agents.create("alice", subagentPayload("helper", "openai:child-model"));
    const boss = await admin.agents.create(
      "alice",
      // Three task calls at once: the default cap (`max_parallel_subagents`, 3).
      mainAgentPayload("boss", "openai:boss-model", ["helper"]),
    );

    const start = async (role: string) => {
      const dir = await mkdtemp(join(tmpdir(), `chaos-${role}-`));
      dirs.push(dir);
      const server = startServerProcess(dir, { ...env, SUBAGENT_ROLE: role });
      servers.push(server);
      await until(() => server.base() !== "" || server.child.exitCode !== null, 60_000);
      expect(server.base(), server.output()).not.toBe("");
      return server;
    };
    const api = new Client({
      apiUrl: (await start("api")).base(),
      apiKey: token,
      defaultHeaders: {},
    });
    const workers = await Promise.all(Array.from({ length: WORKERS }, () => start("worker")));

    const runs: { threadId: string; runId: string }[] = [];
    for (let i = 0; i < RUNS; i += 1) {
      const thread = await api.threads.create();
      const run = await api.runs.create(thread.thread_id, boss.id, { input: human(`job ${i}`) });
      runs.push({ threadId: thread.thread_id, runId: run.run_id });
    }

    // Kill a random worker every few seconds and start a new one, until every run has ended.
    const ended = async () => {
      let count = 0;
      for (const { runId } of runs) {
        const status = (await admin?.runInfo("alice", runId))?.status;
        if (status !== "pending" && status !== "running") count += 1;
      }
      return count;
    };
    let kills = 0;
    const killedAt: number[] = [];
    const deadline = Date.now() + 480_000;
    while ((await ended()) < RUNS && Date.now() < deadline) {
      await sleep(2500);
      const victim = Math.floor(Math.random() * workers.length);
      const worker = workers[victim] as ServerProcess;
      killedAt.push(performance.now());
      worker.child.kill("SIGKILL");
      await worker.exited;
      kills += 1;
      workers[victim] = await start("worker");
    }
    console.log(`chaos: ${RUNS} runs, ${kills} kills, ${calls.length} model calls`);
    expect(kills).toBeGreaterThan(0);

    const attempts: number[] = [];
    for (const { threadId, runId } of runs) {
      const info = await admin.runInfo("alice", runId);
      expect(info?.status, `${runId}: ${info?.status_reason}`).toBe("success");
      attempts.push(Number(info?.attempt));
      // The run's record has every child it made, whichever attempt made it.
      expect(info?.subagent_runs.map((record) => record.status)).toEqual(
        Array(CHILDREN).fill("completed"),
      );
      // Each task call: exactly one completed record.
      const state = await admin.threads.state("alice", threadId);
      type Records = { status: string; id: string; child_thread_id: string }[];
      const records =
        (state?.values as { subagent_runs?: Records } | undefined)?.subagent_runs ?? [];
      expect(records.map((record) => record.status)).toEqual(Array(CHILDREN).fill("completed"));
      expect(new Set(records.map((record) => record.id)).size).toBe(CHILDREN);
      // A child never ran twice on its own thread: one question, at most one answer. (A worker
      // killed after a child's model call was saved as a pending write, before the step's
      // checkpoint, leaves the child's thread without its answer; the resumed run takes the
      // answer from the pending write, and the parent's record has it.)
      for (const record of records) {
        const child = await admin.childThread("alice", record.child_thread_id);
        const types = child.messages.map((message) => message.getType());
        expect(types.filter((type) => type === "human")).toHaveLength(1);
        expect(types.filter((type) => type === "ai").length).toBeLessThanOrEqual(1);
      }
    }
    console.log(
      `chaos: runs resumed by another worker: ${attempts.filter((n) => n > 1).length}, most attempts: ${Math.max(...attempts)}`,
    );
    expect(attempts.some((n) => n > 1)).toBe(true);

    const aborted = new Set(fake.aborted);
    // No child that had finished ran again: a child's model call is made again only when a kill
    // came while it ran or just after it was answered (before its result could be saved).
    const childCalls = new Map<string, Call[]>();
    for (const call of calls) {
      if (aborted.has(call.index) || !call.key.startsWith("child-model|")) continue;
      childCalls.set(call.key, [...(childCalls.get(call.key) ?? []), call]);
    }
    expect(childCalls.size).toBe(RUNS * CHILDREN);
    const unexplained = [...childCalls.entries()].filter(([, same]) =>
      same.slice(1).some((again, i) => {
        const before = same[i] as Call;
        return !killedAt.some(
          (kill) => kill > before.start && kill < before.end + SAVE_WINDOW_MS && kill < again.start,
        );
      }),
    );
    console.log(
      `chaos: child calls made again after a kill: ${[...childCalls.values()].filter((same) => same.length > 1).length}`,
    );
    expect(unexplained.map(([key]) => key)).toEqual([]);
    // No run on two workers at once: two calls for the same step of the same run, both answered
    // (neither cut by a kill), never overlap.
    const byKey = new Map<string, Call[]>();
    for (const call of calls) {
      if (aborted.has(call.index)) continue;
      byKey.set(call.key, [...(byKey.get(call.key) ?? []), call]);
    }
    const overlapping = [...byKey.entries()].filter(([, same]) =>
      same.some((a, i) => same.some((b, j) => i < j && a.start < b.end && b.start < a.end)),
    );
    expect(overlapping.map(([key]) => key)).toEqual([]);
  });
});
