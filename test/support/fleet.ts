import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@langchain/langgraph-sdk";
import { expect } from "vitest";
import { createRuntime, type Runtime } from "../../runtime.js";
import { type FakeOpenAIServer, startFakeOpenAIServer } from "./fake-openai-server.js";
import { createTestDatabase } from "./postgres-cluster.js";
import { mainAgentPayload, subagentPayload } from "./runtime-fixture.js";
import { cleanEnv, type ServerProcess, startServerProcess } from "./server-process.js";
import { until } from "./until.js";

/** One event of a run's stream as the SDK yields it. */
export interface StreamPart {
  event: string;
  data: unknown;
}

/** Every part of an SDK stream. */
export async function collect(stream: AsyncIterable<StreamPart>): Promise<StreamPart[]> {
  const parts: StreamPart[] = [];
  for await (const part of stream) parts.push({ event: part.event, data: part.data });
  return parts;
}

/** A human message as the API's input. */
export const human = (content: string) => ({ messages: [{ type: "human", content }] });

/**
 * A fleet on a fresh PostgreSQL database, as a user sets one up: the `boss` main agent, whose
 * every turn calls the `slow` subagent once (a fake OpenAI server answers both; the child waits
 * `childDelayMs`), alice's token, and server processes started with a role.
 */
export interface TestFleet {
  token: string;
  bossId: string;
  fake: FakeOpenAIServer;
  /** How long the subagent's model call takes from now on. */
  childDelayMs: number;
  /** A runtime on the same database, for reading run records as the store has them. */
  admin: Runtime;
  start(role: "all" | "api" | "worker", extraEnv?: NodeJS.ProcessEnv): Promise<ServerProcess>;
  sdk(server: ServerProcess): Client;
  /** How many model calls the subagent has received. */
  slowCalls(): number;
  /** The pid of the process that runs (or last ran) `runId`. */
  runner(runId: string): Promise<number | null | undefined>;
  close(): Promise<void>;
}

/** Starts the database, the fake model server and the admin runtime of a {@link TestFleet}. */
export async function startTestFleet(clusterUrl: string, name: string): Promise<TestFleet> {
  const databaseUrl = await createTestDatabase(clusterUrl, name);
  const servers: ServerProcess[] = [];
  const dirs: string[] = [];
  const fleet = {} as TestFleet;
  fleet.childDelayMs = 600;
  const fake = await startFakeOpenAIServer((request) => {
    const answered = request.messages.at(-1)?.role === "tool";
    if (request.model === "boss-model") {
      return answered
        ? { content: "final answer" }
        : {
            content: "",
            toolCalls: [{ name: "task", arguments: { description: "dig", subagent_type: "slow" } }],
          };
    }
    return { content: "slow done", delayMs: fleet.childDelayMs };
  });
  const env = cleanEnv({
    DATABASE_URL: databaseUrl,
    OPENAI_API_KEY: "sk-test",
    OPENAI_BASE_URL: fake.url,
    OPENAI_MAX_RETRIES: "0",
    SUBAGENT_THREAD_LEASE_MS: "900",
  });
  const adminDir = await mkdtemp(join(tmpdir(), `${name}-admin-`));
  dirs.push(adminDir);
  const admin = await createRuntime({ dataDir: adminDir, env });
  await admin.users.add("alice");
  const { token } = await admin.users.issueToken("alice");
  await admin.agents.create("alice", subagentPayload("slow", "openai:slow-model"));
  const boss = await admin.agents.create(
    "alice",
    mainAgentPayload("boss", "openai:boss-model", ["slow"]),
  );
  return Object.assign(fleet, {
    token,
    bossId: boss.id,
    fake,
    admin,
    async start(role: string, extraEnv: NodeJS.ProcessEnv = {}) {
      const dir = await mkdtemp(join(tmpdir(), `${name}-${role}-`));
      dirs.push(dir);
      // The role as the README types it (the chaos test sets SUBAGENT_ROLE instead).
      const server = startServerProcess(
        dir,
        { ...env, ...extraEnv },
        { serveArgs: ["--role", role, ...(role === "worker" ? ["--workers", "4"] : [])] },
      );
      servers.push(server);
      await until(() => server.base() !== "" || server.child.exitCode !== null, 30_000);
      expect(server.base(), server.output()).not.toBe("");
      return server;
    },
    sdk: (server: ServerProcess) =>
      new Client({ apiUrl: server.base(), apiKey: token, defaultHeaders: {} }),
    slowCalls: () => fake.requests.filter((r) => r.model === "slow-model").length,
    runner: async (runId: string) => (await admin.runInfo("alice", runId))?.runner_pid,
    async close() {
      for (const server of servers) server.child.kill("SIGKILL");
      await Promise.all(servers.map((server) => server.exited));
      await admin.close();
      await fake.close();
      for (const dir of dirs) await rm(dir, { recursive: true, force: true });
    },
  });
}
