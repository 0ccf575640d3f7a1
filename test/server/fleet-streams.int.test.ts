import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@langchain/langgraph-sdk";
import { afterEach, describe, expect, inject, it } from "vitest";
import { createRuntime } from "../../runtime.js";
import { type FakeOpenAIServer, startFakeOpenAIServer } from "../support/fake-openai-server.js";
import { createTestDatabase } from "../support/postgres-cluster.js";
import { mainAgentPayload, subagentPayload } from "../support/runtime-fixture.js";
import { cleanEnv, type ServerProcess, startServerProcess } from "../support/server-process.js";
import { until } from "../support/until.js";

interface Part {
  event: string;
  data: unknown;
}

async function collect(stream: AsyncIterable<Part>): Promise<Part[]> {
  const parts: Part[] = [];
  for await (const part of stream) parts.push({ event: part.event, data: part.data });
  return parts;
}

const human = (content: string) => ({ messages: [{ type: "human", content }] });

/**
 * A fleet of real server processes on one PostgreSQL database, driven by the official SDK only:
 * API-only processes queue runs, worker-only processes claim and run them; any process streams,
 * replays and joins any run (the events go through the database), a cancel sent anywhere
 * reaches it, and a worker killed mid-run has its run resumed by another as attempt 2.
 */
describe("a fleet: queued runs, streams from any process, takeover", { timeout: 180_000 }, () => {
  const servers: ServerProcess[] = [];
  let fake: FakeOpenAIServer | undefined;
  const dirs: string[] = [];
  afterEach(async () => {
    for (const server of servers) server.child.kill("SIGKILL");
    await Promise.all(servers.map((server) => server.exited));
    servers.length = 0;
    await fake?.close();
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  it("queues on A, runs on B, streams from C, cancels from A, and resumes after a kill", async () => {
    const databaseUrl = await createTestDatabase(inject("postgresUrl"), "fleetstreams");
    let childDelayMs = 600;
    fake = await startFakeOpenAIServer((request) => {
      const answered = request.messages.at(-1)?.role === "tool";
      if (request.model === "boss-model") {
        return answered
          ? { content: "final answer" }
          : {
              content: "",
              toolCalls: [
                { name: "task", arguments: { description: "dig", subagent_type: "slow" } },
              ],
            };
      }
      return { content: "slow done", delayMs: childDelayMs };
    });
    const env = cleanEnv({
      DATABASE_URL: databaseUrl,
      OPENAI_API_KEY: "sk-test",
      OPENAI_BASE_URL: fake.url,
      OPENAI_MAX_RETRIES: "0",
      SUBAGENT_THREAD_LEASE_MS: "900",
    });
    const adminDir = await mkdtemp(join(tmpdir(), "fleet-admin-"));
    dirs.push(adminDir);
    const admin = await createRuntime({ dataDir: adminDir, env });
    await admin.users.add("alice");
    const { token } = await admin.users.issueToken("alice");
    await admin.agents.create("alice", subagentPayload("slow", "openai:slow-model"));
    const boss = await admin.agents.create(
      "alice",
      mainAgentPayload("boss", "openai:boss-model", ["slow"]),
    );

    const start = async (role: string) => {
      const dir = await mkdtemp(join(tmpdir(), `fleet-${role}-`));
      dirs.push(dir);
      const server = startServerProcess(dir, { ...env, SUBAGENT_ROLE: role });
      servers.push(server);
      await until(() => server.base() !== "" || server.child.exitCode !== null, 30_000);
      expect(server.base(), server.output()).not.toBe("");
      return server;
    };
    const a = await start("api");
    const b = await start("worker");
    const c = await start("api");
    const sdk = (server: ServerProcess) =>
      new Client({ apiUrl: server.base(), apiKey: token, defaultHeaders: {} });
    const onA = sdk(a);
    const onC = sdk(c);
    const slowCalls = () => fake?.requests.filter((r) => r.model === "slow-model").length ?? 0;
    const runner = async (runId: string) => (await admin.runInfo("alice", runId))?.runner_pid;

    // A worker serves no API, only its health and metrics.
    expect((await fetch(`${b.base()}/ok`)).status).toBe(200);
    const onWorker = await fetch(`${b.base()}/threads`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: "{}",
    });
    expect(onWorker.status).toBe(404);

    // Queued on A (an API-only process), run by B (the only worker), followed live from C.
    const thread = await onA.threads.create();
    const run = await onA.runs.create(thread.thread_id, boss.id, {
      input: human("go"),
      streamMode: ["values", "updates"],
      streamSubgraphs: true,
    });
    expect(run.status).toMatch(/pending|running/);
    const live = await collect(onC.runs.joinStream(thread.thread_id, run.run_id));
    expect(await runner(run.run_id)).toBe(b.child.pid);
    expect(slowCalls()).toBe(1);
    expect(live[0]).toMatchObject({ event: "metadata", data: { run_id: run.run_id, attempt: 1 } });
    // The subagent's own events came too, under its namespace.
    expect(live.some((part) => part.event.startsWith("updates|subagent:"))).toBe(true);
    const lastValues = live.filter((part) => part.event === "values").at(-1)?.data as {
      messages: { content: string }[];
    };
    expect(lastValues.messages.at(-1)?.content).toBe("final answer");
    // A replays the finished run from the start, and from any event on; C joins it.
    expect(
      await collect(onA.runs.joinStream(thread.thread_id, run.run_id, { lastEventId: "-1" })),
    ).toEqual(live);
    expect(
      await collect(onA.runs.joinStream(thread.thread_id, run.run_id, { lastEventId: "2" })),
    ).toEqual(live.slice(3));
    const joined = (await onC.runs.join(thread.thread_id, run.run_id)) as {
      messages: { content: string }[];
    };
    expect(joined.messages.at(-1)?.content).toBe("final answer");
    expect(await onA.runs.get(thread.thread_id, run.run_id)).toMatchObject({
      status: "success",
      attempt: 1,
    });

    // A run whose child hangs, followed from C and cancelled from A.
    childDelayMs = 60_000;
    const hanging = await onA.runs.create(thread.thread_id, boss.id, {
      input: human("again"),
      streamMode: ["values"],
    });
    const followed = collect(onC.runs.joinStream(thread.thread_id, hanging.run_id));
    await until(() => slowCalls() === 2, 20_000);
    await onA.runs.cancel(thread.thread_id, hanging.run_id);
    expect((await followed)[0]).toMatchObject({ event: "metadata" });
    expect((await onC.runs.get(thread.thread_id, hanging.run_id)).status).toBe("interrupted");
    await until(() => (fake?.aborted.length ?? 0) === 1);

    // A second worker joins; the worker running the next run is killed mid-child: the other
    // resumes it as attempt 2, the child going on on its own thread, and C's stream goes on to
    // the end of the run.
    const d = await start("worker");
    childDelayMs = 2000;
    const doomed = await onA.runs.create(thread.thread_id, boss.id, {
      input: human("once more"),
      streamMode: ["values"],
    });
    const resumed = collect(onC.runs.joinStream(thread.thread_id, doomed.run_id));
    await until(() => slowCalls() === 3, 20_000);
    const victim = (await runner(doomed.run_id)) === b.child.pid ? b : d;
    victim.child.kill("SIGKILL");
    await victim.exited;
    const parts = await resumed;
    expect(parts.filter((part) => part.event === "metadata").map((part) => part.data)).toEqual([
      { run_id: doomed.run_id, thread_id: expect.any(String), attempt: 1 },
      { run_id: doomed.run_id, thread_id: expect.any(String), attempt: 2 },
    ]);
    const finalValues = parts.filter((part) => part.event === "values").at(-1)?.data as {
      messages: { content: string }[];
      subagent_runs: { status: string }[];
    };
    expect(finalValues.messages.at(-1)?.content).toBe("final answer");
    expect(await onC.runs.get(thread.thread_id, doomed.run_id)).toMatchObject({
      status: "success",
      attempt: 2,
    });
    const survivor = victim === b ? d : b;
    expect(await runner(doomed.run_id)).toBe(survivor.child.pid);
    // The child's call in flight at the kill was made again, once; nothing else ran twice.
    expect(slowCalls()).toBe(4);
    expect(finalValues.subagent_runs.map((record) => record.status)).toEqual([
      "completed",
      "cancelled",
      "completed",
    ]);
    await admin.close();
  });
});
