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
 * Two real server processes on one PostgreSQL database, driven by the official SDK only: a run
 * that one process runs is streamed live, replayed from any event and joined through the other
 * (the events go through the database), cancelled from the other, and a stream followed from
 * the other ends when the running process is killed.
 */
describe("a run's stream from any process of a fleet", { timeout: 120_000 }, () => {
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

  it("streams, replays, joins and cancels a run of another process", async () => {
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
    await admin.close();

    const start = async () => {
      const dir = await mkdtemp(join(tmpdir(), "fleet-"));
      dirs.push(dir);
      const server = startServerProcess(dir, env);
      servers.push(server);
      await until(() => server.base() !== "" || server.child.exitCode !== null, 30_000);
      expect(server.base(), server.output()).not.toBe("");
      return server;
    };
    const a = await start();
    const b = await start();
    const sdk = (server: ServerProcess) =>
      new Client({ apiUrl: server.base(), apiKey: token, defaultHeaders: {} });
    const onA = sdk(a);
    const onB = sdk(b);
    const slowCalls = () => fake?.requests.filter((r) => r.model === "slow-model").length ?? 0;

    // A background run on A, followed live from B from its first event.
    const thread = await onA.threads.create();
    const run = await onA.runs.create(thread.thread_id, boss.id, {
      input: human("go"),
      streamMode: ["values", "updates"],
      streamSubgraphs: true,
    });
    const live = await collect(onB.runs.joinStream(thread.thread_id, run.run_id));
    expect(slowCalls()).toBe(1);
    expect(live[0]).toMatchObject({ event: "metadata", data: { run_id: run.run_id } });
    // The subagent's own events came too, under its namespace.
    expect(live.some((part) => part.event.startsWith("updates|subagent:"))).toBe(true);
    const lastValues = live.filter((part) => part.event === "values").at(-1)?.data as {
      messages: { content: string }[];
    };
    expect(lastValues.messages.at(-1)?.content).toBe("final answer");

    // The process that ran it has the same events, in the same order.
    const local = await collect(
      onA.runs.joinStream(thread.thread_id, run.run_id, { lastEventId: "-1" }),
    );
    expect(live).toEqual(local);
    // B replays the finished run from the start, and from any event on.
    expect(
      await collect(onB.runs.joinStream(thread.thread_id, run.run_id, { lastEventId: "-1" })),
    ).toEqual(local);
    expect(
      await collect(onB.runs.joinStream(thread.thread_id, run.run_id, { lastEventId: "2" })),
    ).toEqual(local.slice(3));
    // Joined from B: the thread's final values.
    const joined = (await onB.runs.join(thread.thread_id, run.run_id)) as {
      messages: { content: string }[];
    };
    expect(joined.messages.at(-1)?.content).toBe("final answer");

    // A run on A whose child hangs, followed from B and cancelled from B.
    childDelayMs = 60_000;
    const hanging = await onA.runs.create(thread.thread_id, boss.id, {
      input: human("again"),
      streamMode: ["values"],
    });
    const followed = collect(onB.runs.joinStream(thread.thread_id, hanging.run_id));
    await until(() => slowCalls() === 2, 20_000);
    await onB.runs.cancel(thread.thread_id, hanging.run_id);
    const cancelledParts = await followed;
    expect(cancelledParts[0]).toMatchObject({ event: "metadata" });
    expect((await onB.runs.get(thread.thread_id, hanging.run_id)).status).toBe("interrupted");
    expect(fake.aborted).toHaveLength(1);

    // A is killed mid-run while B follows the run: B's stream ends, the run reads interrupted,
    // and B resumes the thread (a run without input).
    const doomed = await onA.runs.create(thread.thread_id, boss.id, {
      input: human("once more"),
      streamMode: ["values"],
    });
    const orphaned = collect(onB.runs.joinStream(thread.thread_id, doomed.run_id));
    await until(() => slowCalls() === 3, 20_000);
    a.child.kill("SIGKILL");
    await a.exited;
    const orphanedParts = await orphaned;
    expect(orphanedParts[0]).toMatchObject({ event: "metadata" });
    expect(orphanedParts.some((part) => part.event === "error")).toBe(false);
    expect((await onB.runs.get(thread.thread_id, doomed.run_id)).status).toBe("interrupted");
    childDelayMs = 0;
    const after = (await onB.runs.wait(thread.thread_id, boss.id)) as {
      messages: { content: string }[];
    };
    expect(after.messages.at(-1)?.content).toBe("final answer");
  });
});
