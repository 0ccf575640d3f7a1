/**
 * Background subagents in a fleet (issue 41, README "Background subagents"): two `serve`
 * processes on one PostgreSQL database, a fake OpenAI server whose child calls take about a
 * second each, and the official SDK. The process running a task is SIGKILLed mid-way through its
 * child's steps: the other takes the task over (the dead pid seen on this machine) and finishes
 * it from the child's own checkpoints, running no finished step again, while the parent thread
 * keeps answering on the surviving process.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@langchain/langgraph-sdk";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import type { AsyncTask } from "../../middleware/async-task-records.js";
import { createRuntime } from "../../runtime.js";
import {
  type ChatCompletionRequestBody,
  type FakeOpenAIServer,
  startFakeOpenAIServer,
} from "../support/fake-openai-server.js";
import { human } from "../support/fleet.js";
import { Gate } from "../support/gate.js";
import { createTestDatabase } from "../support/postgres-cluster.js";
import { mainAgentPayload, subagentPayload } from "../support/runtime-fixture.js";
import { cleanEnv, type ServerProcess, startServerProcess } from "../support/server-process.js";
import { until } from "../support/until.js";

/** The child's tool steps before its answer; each model call takes STEP_MS. */
const STEPS = 4;
const STEP_MS = 1000;
/** The step whose model call is under way when its process is killed (its first try hangs). */
const KILLED_STEP = 2;

/** A child request's step: how many tool results it carries. */
const stepOf = (request: ChatCompletionRequestBody) =>
  request.messages.filter((message) => message.role === "tool").length;
const lastText = (request: ChatCompletionRequestBody) =>
  String(request.messages.at(-1)?.content ?? "");

/** Polls an async condition every 50 ms; fails after `limitMs` with `describe()`. */
async function untilAsync(
  condition: () => Promise<boolean>,
  limitMs: number,
  describe: () => string,
): Promise<void> {
  const deadline = Date.now() + limitMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`not within ${limitMs} ms: ${describe()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe("background subagents in a fleet (postgres, two processes)", { timeout: 180_000 }, () => {
  const servers: ServerProcess[] = [];
  const dirs: string[] = [];
  let fake: FakeOpenAIServer;
  let database: pg.Client;
  let token = "";
  let foremanId = "";
  /** Holds the child's answer (its last step) until the test has talked to the parent. */
  const answerGate = new Gate();

  beforeAll(async () => {
    const databaseUrl = await createTestDatabase(inject("postgresUrl"), "async_fleet");
    fake = await startFakeOpenAIServer(async (request) => {
      if (request.model === "miner-model") {
        const step = stepOf(request);
        const tries = fake.requests.filter(
          (seen) => seen.model === "miner-model" && stepOf(seen) === step,
        ).length;
        // The first try of this step never answers: its process is killed while it waits.
        if (step === KILLED_STEP && tries === 1) return { hang: "before-reply" };
        if (step < STEPS) {
          return {
            content: "",
            toolCalls: [{ id: `step_${step}`, name: "current_time", arguments: {} }],
            delayMs: STEP_MS,
          };
        }
        await answerGate.pass(undefined);
        return { content: `dug ${STEPS} layers`, delayMs: STEP_MS };
      }
      // The foreman: starts the dig, then answers whatever it is told.
      const last = request.messages.at(-1);
      if (last?.role === "tool") return { content: "The dig runs in the background." };
      if (lastText(request) === "dig deep") {
        return {
          content: "",
          toolCalls: [
            {
              name: "start_async_task",
              arguments: { description: "dig four layers", subagent_type: "miner" },
            },
          ],
        };
      }
      return { content: `Still here (you said: ${lastText(request)})` };
    });
    const env = cleanEnv({
      DATABASE_URL: databaseUrl,
      OPENAI_API_KEY: "sk-test",
      OPENAI_BASE_URL: fake.url,
      OPENAI_MAX_RETRIES: "0",
      SUBAGENT_THREAD_LEASE_MS: "3000",
    });
    // Users and agents, then closed: an open runtime on the database would run tasks too.
    const adminDir = await mkdtemp(join(tmpdir(), "async-fleet-admin-"));
    dirs.push(adminDir);
    const admin = await createRuntime({ dataDir: adminDir, env });
    await admin.users.add("alice");
    token = (await admin.users.issueToken("alice")).token;
    await admin.agents.create(
      "alice",
      subagentPayload("miner", "openai:miner-model", { tools: ["current_time"] }),
    );
    const foreman = await admin.agents.create(
      "alice",
      mainAgentPayload("foreman", "openai:foreman-model", undefined, {
        async_subagents: ["miner"],
      }),
    );
    foremanId = foreman.id;
    await admin.close();
    database = new pg.Client({ connectionString: databaseUrl });
    await database.connect();
    const start = async () => {
      const dir = await mkdtemp(join(tmpdir(), "async-fleet-"));
      dirs.push(dir);
      const server = startServerProcess(dir, env, { serveArgs: ["--role", "all"] });
      servers.push(server);
      await until(() => server.base() !== "" || server.child.exitCode !== null, 60_000);
      expect(server.base(), server.output()).not.toBe("");
      return server;
    };
    await Promise.all([start(), start()]);
  }, 120_000);

  afterAll(async () => {
    for (const server of servers) server.child.kill("SIGKILL");
    await Promise.all(servers.map((server) => server.exited));
    await database?.end();
    await fake?.close();
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  const sdk = (server: ServerProcess) => new Client({ apiUrl: server.base(), apiKey: token });
  /** The task's row as the fleet shares it. */
  async function row(taskId: string) {
    const result = await database.query<{
      status: string;
      attempt: number;
      runner_pid: number | null;
    }>("select status, attempt, runner_pid from async_tasks where task_id = $1", [taskId]);
    return result.rows[0];
  }

  it("finishes a task whose process was SIGKILLed on the other process, re-running no finished step, the parent never blocked", async () => {
    const [first, second] = servers as [ServerProcess, ServerProcess];
    const { thread_id: threadId } = await sdk(first).threads.create();
    const started = (await sdk(first).runs.wait(threadId, foremanId, {
      input: human("dig deep"),
    })) as { messages: { content: unknown }[] };
    expect(started.messages.at(-1)?.content).toBe("The dig runs in the background.");
    const listed = await fetch(`${first.base()}/threads/${threadId}/async_tasks`, {
      headers: { authorization: `Bearer ${token}` },
    });
    const [task] = (await listed.json()) as AsyncTask[];
    const taskId = task?.id ?? "";
    expect(task?.description).toBe("dig four layers");

    // The steps before KILLED_STEP are done (their results are in its request); it hangs.
    await until(
      () => fake.requests.some((r) => r.model === "miner-model" && stepOf(r) === KILLED_STEP),
      60_000,
    );
    const before = await row(taskId);
    expect(before?.status).toBe("running");
    expect(before?.attempt).toBe(1);
    const victim = servers.find((server) => server.child.pid === before?.runner_pid);
    expect(victim, `runner pid ${before?.runner_pid}`).toBeDefined();
    const survivor = victim === first ? second : first;
    victim?.child.kill("SIGKILL");
    await victim?.exited;

    // The parent answers on the surviving process while the task is still under way (its
    // answer is held until this turn is done).
    const told = (await sdk(survivor).runs.wait(threadId, foremanId, {
      input: human("are you there?"),
    })) as { messages: { content: unknown }[] };
    expect(told.messages.at(-1)?.content).toBe("Still here (you said: are you there?)");
    expect(["pending", "running"]).toContain((await row(taskId))?.status);
    answerGate.release();

    let detail: (AsyncTask & { result: string | null }) | undefined;
    await untilAsync(
      async () => {
        const response = await fetch(
          `${survivor.base()}/threads/${threadId}/async_tasks/${taskId}`,
          {
            headers: { authorization: `Bearer ${token}` },
          },
        );
        detail = (await response.json()) as AsyncTask & { result: string | null };
        return detail.status !== "pending" && detail.status !== "running";
      },
      60_000,
      () => `task is ${detail?.status}\n${survivor.output()}`,
    );
    expect(detail?.status, detail?.error ?? "").toBe("completed");
    expect(detail?.result).toBe(`dug ${STEPS} layers`);
    const after = await row(taskId);
    expect(after?.attempt).toBe(2);
    expect(after?.runner_pid).toBe(survivor.child.pid);

    // Every step of the child was asked once, but the one killed in flight (cut: aborted).
    const childRequests = fake.requests
      .map((request, index) => ({ request, index }))
      .filter(({ request }) => request.model === "miner-model");
    const answered = childRequests.filter(({ index }) => !fake.aborted.includes(index));
    const cut = childRequests.filter(({ index }) => fake.aborted.includes(index));
    expect(answered.map(({ request }) => stepOf(request))).toEqual(
      Array.from({ length: STEPS + 1 }, (_, step) => step),
    );
    expect(cut.map(({ request }) => stepOf(request))).toEqual([KILLED_STEP]);
    // The child's thread holds each step once.
    const child = await fetch(
      `${survivor.base()}/threads/${threadId}/subagents/${detail?.child_thread_id}`,
      { headers: { authorization: `Bearer ${token}` } },
    );
    expect(child.status).toBe(200);
    const { values } = (await child.json()) as { values: { messages: { type: string }[] } };
    expect(values.messages.map((message) => message.type)).toEqual([
      "human",
      ...Array.from({ length: STEPS }, () => ["ai", "tool"]).flat(),
      "ai",
    ]);
    expect(fake.failures).toEqual([]);
  });
});
