import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, inject, it } from "vitest";
import { createRuntime } from "../../runtime.js";
import { type FakeOpenAIServer, startFakeOpenAIServer } from "../support/fake-openai-server.js";
import { createTestDatabase } from "../support/postgres-cluster.js";
import { mainAgentPayload, subagentPayload } from "../support/runtime-fixture.js";
import {
  cleanEnv,
  type ServerProcess as Server,
  startServerProcess as startServer,
} from "../support/server-process.js";
import { until } from "../support/until.js";

/**
 * Two real server processes on one PostgreSQL database: a thread made on one runs on the
 * other, a cancel sent to one stops a run in the other, a thread never runs in both at once,
 * and a run whose process is killed mid-run is resumed by the other as its next attempt.
 */
describe("several server processes on one PostgreSQL database", { timeout: 90_000 }, () => {
  const servers: Server[] = [];
  let fake: FakeOpenAIServer | undefined;
  const dirs: string[] = [];
  afterEach(async () => {
    for (const server of servers) server.child.kill("SIGKILL");
    await Promise.all(servers.map((server) => server.exited));
    servers.length = 0;
    await fake?.close();
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  it("shares threads, runs, cancels and thread locks between processes", async () => {
    const databaseUrl = await createTestDatabase(inject("postgresUrl"), "scale");
    let hang = true;
    fake = await startFakeOpenAIServer((request) => {
      // The turn's task call was answered when the last message is its tool result.
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
      return hang ? { content: "late", delayMs: 60_000 } : { content: "slow done" };
    });
    const env = cleanEnv({
      DATABASE_URL: databaseUrl,
      OPENAI_API_KEY: "sk-test",
      OPENAI_BASE_URL: fake.url,
      OPENAI_MAX_RETRIES: "0",
      SUBAGENT_THREAD_LEASE_MS: "800",
    });

    // Alice, her token and her agents, written straight to the shared database.
    const adminDir = await mkdtemp(join(tmpdir(), "scale-admin-"));
    dirs.push(adminDir);
    const admin = await createRuntime({ dataDir: adminDir, env });
    await admin.users.add("alice");
    const { token } = await admin.users.issueToken("alice");
    await admin.agents.create("alice", subagentPayload("slow", "openai:slow-model"));
    const boss = await admin.agents.create(
      "alice",
      mainAgentPayload("boss", "openai:boss-model", ["slow"]),
    );

    // Two processes, each with its own data dir: only the database is shared.
    const start = async () => {
      const dir = await mkdtemp(join(tmpdir(), "scale-"));
      dirs.push(dir);
      const server = startServer(dir, env);
      servers.push(server);
      await until(() => server.base() !== "" || server.child.exitCode !== null, 30_000);
      expect(server.base(), server.output()).not.toBe("");
      return server;
    };
    const a = await start();
    const b = await start();
    const call = async (server: Server, method: string, path: string, body?: unknown) => {
      const response = await fetch(`${server.base()}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${token}`,
          ...(body === undefined ? {} : { "content-type": "application/json" }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const text = await response.text();
      return { status: response.status, body: text ? JSON.parse(text) : undefined };
    };
    const slowCalls = () => fake?.requests.filter((r) => r.model === "slow-model").length ?? 0;
    const input = (content: string) => ({ messages: [{ type: "human", content }] });

    // A thread created through A is run through B.
    const thread = (await call(a, "POST", "/threads", {})).body as { thread_id: string };
    const path = `/threads/${thread.thread_id}`;
    const started = await call(b, "POST", `${path}/runs`, {
      assistant_id: boss.id,
      input: input("go"),
    });
    expect(started.status).toBe(200);
    const runId = (started.body as { run_id: string }).run_id;
    await until(() => slowCalls() === 1, 20_000);

    // A sees the run (from the shared database) and cannot run the thread meanwhile.
    expect((await call(a, "GET", `${path}/runs/${runId}`)).body).toMatchObject({
      status: "running",
    });
    const second = await call(a, "POST", `${path}/runs`, {
      assistant_id: boss.id,
      input: input("x"),
    });
    expect(second.status).toBe(409);
    expect(second.body).toMatchObject({ error: { code: "THREAD_BUSY" } });

    // A cancel sent to A stops the run executing in B, model request included.
    const cancelled = await call(a, "POST", `${path}/runs/${runId}/cancel?wait=1`);
    expect(cancelled.status).toBe(204);
    // B's own view follows once its run has finished unwinding (it reads the final state).
    let onB = (await call(b, "GET", `${path}/runs/${runId}`)).body as { status: string };
    for (let tries = 0; onB.status === "running" && tries < 50; tries += 1) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      onB = (await call(b, "GET", `${path}/runs/${runId}`)).body as { status: string };
    }
    expect(onB.status).toBe("interrupted");
    await until(() => (fake?.aborted.length ?? 0) === 1);
    const state = (await call(a, "GET", `${path}/state`)).body as {
      values: { subagent_runs: { status: string }[] };
      next: string[];
    };
    expect(state.values.subagent_runs.map((run) => run.status)).toEqual(["cancelled"]);
    expect(state.next).toEqual([]);

    // The process running a run is killed mid-child: the other one finds the run's worker gone
    // (its pid is gone from this machine; a process on another machine would wait for its lease
    // to run out), claims it again as attempt 2 and resumes it from its last checkpoint.
    const again = await call(b, "POST", `${path}/runs`, {
      assistant_id: boss.id,
      input: input("again"),
    });
    expect(again.status).toBe(200);
    const killedRunId = (again.body as { run_id: string }).run_id;
    await until(() => slowCalls() === 2, 20_000);
    const victim = (await admin.runInfo("alice", killedRunId))?.runner_pid === a.child.pid ? a : b;
    const survivor = victim === a ? b : a;
    victim.child.kill("SIGKILL");
    await victim.exited;
    hang = false;
    const resumed = await call(survivor, "GET", `${path}/runs/${killedRunId}/join`);
    expect(resumed.status, JSON.stringify(resumed.body)).toBe(200);
    const values = resumed.body as {
      messages: { content: string }[];
      subagent_runs: { status: string }[];
    };
    expect(values.messages.at(-1)?.content).toBe("final answer");
    expect(values.subagent_runs.map((run) => run.status)).toEqual(["cancelled", "completed"]);
    // The resumed child continued its own thread: one more slow call, not a restart.
    expect(slowCalls()).toBe(3);
    expect((await call(survivor, "GET", `${path}/runs/${killedRunId}`)).body).toMatchObject({
      status: "success",
      attempt: 2,
    });
    expect((await admin.runInfo("alice", killedRunId))?.runner_pid).toBe(survivor.child.pid);
    await admin.close();
  });
});
