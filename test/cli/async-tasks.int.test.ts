import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AsyncTask } from "../../middleware/async-task-records.js";
import { createRuntime, type Runtime } from "../../runtime.js";
import { cli, cliInTerminal, offlineEnv } from "../support/cli.js";
import {
  type ChatCompletionRequestBody,
  type FakeOpenAIServer,
  startFakeOpenAIServer,
} from "../support/fake-openai-server.js";

const TASK = "find the tide tables of the bay";
const RESEARCHER_ANSWER = "RESEARCHER: high tide at 6am, low tide at noon.";
const BOSS_STARTED = "BOSS: the researcher is on it.";
const BOSS_OTHER = "BOSS: noted.";

/**
 * The models of `boss` (which may start `researcher` in the background) and `researcher`, told
 * apart by their system prompts: boss starts a background task when asked to research and says
 * so once the tool has answered; anything else (a follow-up, the notice of an ended task) gets
 * a plain answer. The researcher answers at once.
 */
function script(request: ChatCompletionRequestBody) {
  const system = JSON.stringify(request.messages[0]?.content ?? "");
  if (system.includes("You are researcher.")) return { content: RESEARCHER_ANSWER };
  const last = request.messages.at(-1);
  if (last?.role === "tool") return { content: BOSS_STARTED };
  if (last?.role === "user" && String(last.content).startsWith("research")) {
    return {
      content: "",
      toolCalls: [
        { name: "start_async_task", arguments: { description: TASK, subagent_type: "researcher" } },
      ],
    };
  }
  return { content: BOSS_OTHER };
}

/** Polls the thread's background tasks until `done` holds (a safety net of 30 s, not asserted). */
async function tasksWhen(
  runtime: Runtime,
  uid: string,
  threadId: string,
  done: (tasks: AsyncTask[]) => boolean,
): Promise<AsyncTask[]> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const tasks = await runtime.asyncTasks.list(uid, threadId);
    if (done(tasks)) return tasks;
    if (Date.now() > deadline) throw new Error(`tasks never got there: ${JSON.stringify(tasks)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

// Each case spawns CLI processes (a few seconds each on a busy machine).
describe("background tasks in the CLI (cli/main.ts processes)", { timeout: 120_000 }, () => {
  let fake: FakeOpenAIServer;
  let dataDir: string;
  let env: NodeJS.ProcessEnv;
  /** A thread of alice's whose one background task completed before any CLI ran. */
  let threadId: string;
  let taskId: string;

  beforeAll(async () => {
    fake = await startFakeOpenAIServer(script);
    dataDir = await mkdtemp(join(tmpdir(), "cli-async-tasks-int-"));
    env = {
      ...offlineEnv(),
      OPENAI_API_KEY: "test-key",
      OPENAI_BASE_URL: fake.url,
      OPENAI_MAX_RETRIES: "0",
    };
    const runtime = await createRuntime({ dataDir, env, warn: () => undefined });
    try {
      await runtime.agents.create("alice", {
        slug: "researcher",
        name: "researcher",
        description: "looks things up",
        is_subagent: true,
        config_json: {
          context: { model: "openai:fake-model", system_prompt: "You are researcher." },
        },
      });
      await runtime.agents.create("alice", {
        slug: "boss",
        name: "boss",
        description: "starts research in the background",
        config_json: {
          context: {
            model: "openai:fake-model",
            system_prompt: "You are boss.",
            async_subagents: ["researcher"],
          },
        },
      });
      const result = await runtime.run({ uid: "alice", agent: "boss", input: "research tides" });
      threadId = result.threadId;
      const [task] = await tasksWhen(runtime, "alice", threadId, (tasks) =>
        tasks.some((entry) => entry.status === "completed"),
      );
      taskId = task?.id ?? "";
    } finally {
      await runtime.close();
    }
  });
  afterAll(async () => {
    await fake.close();
    await rm(dataDir, { recursive: true, force: true });
    expect(fake.failures).toEqual([]);
  });

  it("threads show lists the thread's background task: id, subagent, status, task, result", async () => {
    const shown = await cli(["threads", "show", threadId, "--uid", "alice", "--data", dataDir], {
      env,
    });

    expect(shown.stderr).toBe("");
    expect(shown.code).toBe(0);
    const lines = shown.stdout.split("\n");
    expect(lines).toContain("background tasks: 1 (0 active)");
    const row = lines.find((line) => line.startsWith(taskId.slice(0, 8)));
    expect(row?.split(/\s{2,}/)).toEqual([
      taskId.length > 8 ? `${taskId.slice(0, 8)}…` : taskId,
      "researcher",
      "completed",
      "find the tide tables of the bay",
      RESEARCHER_ANSWER,
    ]);
  });

  it("threads show prints no background section for a thread without background tasks", async () => {
    const runtime = await createRuntime({ dataDir, env, warn: () => undefined });
    let plain: string;
    try {
      plain = (await runtime.run({ uid: "alice", agent: "boss", input: "hello" })).threadId;
    } finally {
      await runtime.close();
    }
    const shown = await cli(["threads", "show", plain, "--uid", "alice", "--data", dataDir], {
      env,
    });
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain("status:     idle, not waiting for approval\n");
    expect(shown.stdout).not.toContain("background");
  });

  it("a chat on the thread does not tell the task that had ended before it opened", async () => {
    const result = await cli(
      ["chat", "--uid", "alice", "--data", dataDir, "--thread", threadId, "anything else?"],
      { env },
    );
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(BOSS_OTHER);
    expect(result.stdout).not.toContain("[background]");
  });

  it("the interactive chat prints one line when its thread's background task ends", async () => {
    const result = await cliInTerminal(
      ["chat", "--uid", "alice", "--data", dataDir, "--agent", "boss"],
      [
        { after: "› ", type: "research the tides" },
        { after: "[background] researcher task ", type: "/exit" },
      ],
      { env, killAfterMs: 60_000 },
    );

    expect(result.code).toBe(0);
    // Its answer (the task may have ended before boss's second call, whose last message is then
    // the notice, not the tool's answer).
    expect(result.output).toContain("BOSS: ");
    const told = result.output.split(/\r?\n/).filter((line) => line.includes("[background]"));
    expect(told).toHaveLength(1);
    expect(told[0]).toMatch(
      /\[background\] researcher task \S+ completed: RESEARCHER: high tide at 6am, low tide at noon\./,
    );
  });
});
