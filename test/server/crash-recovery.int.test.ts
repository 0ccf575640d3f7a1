/**
 * The embedded default (one server process on a SQLite data dir) killed mid-run, and a new
 * process started on the same data dir: the killed run's record reads `interrupted` with the
 * reason and the children it finished, and the thread takes its next run at once (the dead
 * process's 30 s lease is not waited out).
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { afterEach, describe, expect, it } from "vitest";
import type { SubagentRun } from "../../middleware/subagent-runs.js";
import { createRuntime } from "../../runtime.js";
import {
  type ChatCompletionRequestBody,
  type FakeOpenAIServer,
  type FakeReply,
  startFakeOpenAIServer,
} from "../support/fake-openai-server.js";
import { mainAgentPayload, subagentPayload } from "../support/runtime-fixture.js";
import {
  cleanEnv,
  type ServerProcess as Server,
  startServerProcess as startServer,
} from "../support/server-process.js";
import { until } from "../support/until.js";

const toolResults = (request: ChatCompletionRequestBody) =>
  request.messages.filter((message) => message.role === "tool");

/**
 * The `fast` child's record once the killed process had made it durable: a pending write of the
 * parent's unfinished step (the slow sibling still running), found in any thread of the file.
 */
async function durableFastRecord(checkpoints: string): Promise<SubagentRun | undefined> {
  const saver = SqliteSaver.fromConnString(checkpoints);
  try {
    for await (const tuple of saver.list({ configurable: {} })) {
      const record = (tuple.pendingWrites ?? [])
        .filter(([, channel]) => channel === "subagent_runs")
        .flatMap(([, , value]) => (Array.isArray(value) ? (value as SubagentRun[]) : []))
        .find((run) => run.subagent_type === "fast" && run.status === "completed");
      if (record) return record;
    }
    return undefined;
  } finally {
    saver.db.close();
  }
}

describe("a crash of the embedded default (sqlite)", { timeout: 120_000 }, () => {
  const servers: Server[] = [];
  let fake: FakeOpenAIServer | undefined;
  let dataDir = "";
  afterEach(async () => {
    for (const server of servers) server.child.kill("SIGKILL");
    await Promise.all(servers.map((server) => server.exited));
    servers.length = 0;
    await fake?.close();
    fake = undefined;
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
    dataDir = "";
  });

  it("records the killed run interrupted with its finished children, and runs the thread again at once", async () => {
    dataDir = await mkdtemp(join(tmpdir(), "crash-recovery-"));
    // Set once the first process is dead: from then on the slow child answers.
    let hang = true;
    fake = await startFakeOpenAIServer((request): FakeReply => {
      const results = toolResults(request);
      if (request.model === "boss-model") {
        if (results.length === 2) return { content: "final answer" };
        return {
          content: "",
          toolCalls: [
            {
              id: "call_fast",
              name: "task",
              arguments: { description: "fast research", subagent_type: "fast" },
            },
            {
              id: "call_slow",
              name: "task",
              arguments: { description: "slow research", subagent_type: "slow" },
            },
          ],
        };
      }
      if (request.model === "fast-model") return { content: "fast done" };
      return hang ? { content: "slow done", delayMs: 60_000 } : { content: "slow done" };
    });
    // The default thread lease (30 s): the new process must not wait it out.
    const env = cleanEnv({
      OPENAI_API_KEY: "sk-test",
      OPENAI_BASE_URL: fake.url,
      OPENAI_MAX_RETRIES: "0",
    });

    // Alice, her token and her agents, in the data dir both processes use (one at a time).
    const admin = await createRuntime({ dataDir, env });
    await admin.users.add("alice");
    const { token } = await admin.users.issueToken("alice");
    await admin.agents.create("alice", subagentPayload("fast", "openai:fast-model"));
    await admin.agents.create("alice", subagentPayload("slow", "openai:slow-model"));
    const boss = await admin.agents.create(
      "alice",
      mainAgentPayload("boss", "openai:boss-model", ["fast", "slow"]),
    );
    await admin.close();

    const start = async () => {
      const server = startServer(dataDir, env);
      servers.push(server);
      await until(() => server.base() !== "" || server.child.exitCode !== null, 30_000);
      expect(server.base(), server.output()).not.toBe("");
      return server;
    };
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
      return {
        status: response.status,
        body: text ? JSON.parse(text) : undefined,
        location: response.headers.get("content-location") ?? "",
      };
    };
    const slowCalls = () => fake?.requests.filter((r) => r.model === "slow-model").length ?? 0;

    // 1. The first process: boss delegates to fast and slow; fast finishes, slow hangs.
    const first = await start();
    const thread = (await call(first, "POST", "/threads", {})).body as { thread_id: string };
    const path = `/threads/${thread.thread_id}`;
    const started = await call(first, "POST", `${path}/runs`, {
      assistant_id: boss.id,
      input: { messages: [{ type: "human", content: "research both" }] },
    });
    expect(started.status, JSON.stringify(started.body)).toBe(200);
    const killedRunId = (started.body as { run_id: string }).run_id;
    await until(() => slowCalls() === 1, 30_000);
    const checkpoints = join(dataDir, "checkpoints.sqlite");
    let fastBeforeCrash: SubagentRun | undefined;
    const deadline = Date.now() + 20_000;
    while (fastBeforeCrash === undefined && Date.now() < deadline) {
      fastBeforeCrash = await durableFastRecord(checkpoints);
      if (fastBeforeCrash === undefined) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(fastBeforeCrash, first.output()).toBeDefined();

    // 2. The crash.
    const killedPid = first.child.pid;
    first.child.kill("SIGKILL");
    await first.exited;
    hang = false;

    // 3. A new process on the same data dir tells the truth about the killed run.
    const second = await start();
    const killed = await call(second, "GET", `${path}/runs/${killedRunId}`);
    expect(killed.status).toBe(200);
    expect(killed.body).toMatchObject({
      run_id: killedRunId,
      thread_id: thread.thread_id,
      status: "interrupted",
      subagent_runs: [fastBeforeCrash],
    });
    const reason = (killed.body as { status_reason: string }).status_reason;
    expect(reason).toContain(`pid ${killedPid}`);
    expect(reason).toContain("run the thread again without input to resume it");

    // 4. The thread takes a run at once (no 409 while the dead process's lease runs out), and
    // the resumed turn finishes the slow child only.
    const resumed = await call(second, "POST", `${path}/runs/wait`, { assistant_id: boss.id });
    expect(resumed.status, JSON.stringify(resumed.body)).toBe(200);
    const values = resumed.body as {
      messages: { content: string }[];
      subagent_runs: SubagentRun[];
    };
    expect(values.messages.at(-1)?.content).toBe("final answer");
    expect(values.subagent_runs.map((run) => [run.subagent_type, run.status])).toEqual([
      ["fast", "completed"],
      ["slow", "completed"],
    ]);
    expect(fake.requests.filter((r) => r.model === "fast-model")).toHaveLength(1);

    // 5. The killed run stays interrupted; the resuming run shows the child it finished.
    expect((await call(second, "GET", `${path}/runs/${killedRunId}`)).body).toMatchObject({
      status: "interrupted",
      status_reason: reason,
      subagent_runs: [fastBeforeCrash],
    });
    expect((await call(second, "GET", resumed.location)).body).toMatchObject({
      status: "success",
      status_reason: null,
      subagent_runs: [expect.objectContaining({ subagent_type: "slow", status: "completed" })],
    });
    expect(fake.failures).toEqual([]);
  });
});
