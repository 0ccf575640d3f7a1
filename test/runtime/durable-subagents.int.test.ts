import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { AIMessage, ToolMessage } from "@langchain/core/messages";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { afterEach, describe, expect, it } from "vitest";
import type { SubagentRun } from "../../middleware/subagent-runs.js";
import { createRuntime, type Runtime } from "../../runtime.js";
import { readHistory, readThreadState } from "../../threads/thread-state.js";
import {
  type ChatCompletionRequestBody,
  type FakeOpenAIServer,
  type FakeReply,
  startFakeOpenAIServer,
} from "../support/fake-openai-server.js";
import { nodeEntry } from "../support/node-entry.js";
import { until } from "../support/until.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const THREAD_ID = "durable-thread";

interface Worker {
  child: ChildProcess;
  output: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** `test/support/durable-worker.ts` in its own process, stdout and stderr collected. */
function startWorker(dataDir: string, env: NodeJS.ProcessEnv): Worker {
  const child = spawn(
    process.execPath,
    [...nodeEntry("test/support/durable-worker.ts"), dataDir, THREAD_ID],
    { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] },
  );
  let output = "";
  const collect = (text: string) => {
    output += text;
  };
  child.stdout?.setEncoding("utf8").on("data", collect);
  child.stderr?.setEncoding("utf8").on("data", collect);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on("exit", (code, signal) => resolve({ code, signal })),
  );
  return { child, output: () => output, exited };
}

/** The parent environment without model keys or subagent settings, plus `extra`. */
function cleanEnv(extra: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const env = Object.fromEntries(
    Object.entries(process.env).filter(
      ([key]) => !key.startsWith("OPENAI_") && !key.startsWith("SUBAGENT_"),
    ),
  );
  return { ...env, ...extra };
}

/** Polls an async condition every 20 ms; fails after `limitMs` with `describe()` attached. */
async function untilAsync(
  condition: () => Promise<boolean>,
  limitMs: number,
  describe: () => string,
): Promise<void> {
  const deadline = Date.now() + limitMs;
  while (!(await condition())) {
    if (Date.now() > deadline) {
      throw new Error(`condition not met within ${limitMs} ms\n${describe()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const toolResults = (request: ChatCompletionRequestBody) =>
  request.messages.filter((message) => message.role === "tool");

const callsOf = (requests: ChatCompletionRequestBody[]) => ({
  boss: requests.filter((r) => r.model === "boss-model").length,
  fast: requests.filter((r) => r.model === "fast-model").length,
  slow: requests.filter((r) => r.model === "slow-model").length,
});

describe("subagents survive a SIGKILL of the process (sqlite)", { timeout: 120_000 }, () => {
  let dataDir = "";
  let fake: FakeOpenAIServer | undefined;
  let worker: Worker | undefined;
  let probe: SqliteSaver | undefined;
  let runtime: Runtime | undefined;

  afterEach(async () => {
    try {
      if (worker && worker.child.exitCode === null && worker.child.signalCode === null) {
        worker.child.kill("SIGKILL");
      }
      await worker?.exited;
      probe?.db.close();
      await runtime?.close();
      await fake?.close();
    } finally {
      worker = undefined;
      probe = undefined;
      runtime = undefined;
      fake = undefined;
      if (dataDir) await rm(dataDir, { recursive: true, force: true });
      dataDir = "";
    }
  });

  it("resumes after the crash: the finished child is kept, the running one continues its own thread", async () => {
    dataDir = await mkdtemp(join(tmpdir(), "durable-subagents-"));
    // Set once the first process is dead: from then on the slow child's second call answers.
    let resumed = false;
    fake = await startFakeOpenAIServer((request): FakeReply => {
      const results = toolResults(request);
      switch (request.model) {
        case "boss-model":
          if (results.length === 0) {
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
          if (results.length === 2) return { content: "final answer" };
          break;
        case "fast-model":
          if (results.length === 0) return { content: "fast done" };
          break;
        case "slow-model":
          if (results.length === 0) {
            return {
              content: "",
              toolCalls: [{ id: "call_time", name: "current_time", arguments: {} }],
            };
          }
          if (results.length === 1) {
            // The first process hangs here until it is killed.
            return resumed ? { content: "slow done" } : { content: "slow done", delayMs: 60_000 };
          }
          break;
      }
      throw new Error(`unexpected ${request.model} request with ${results.length} tool result(s)`);
    });
    const modelEnv = {
      OPENAI_API_KEY: "sk-test",
      OPENAI_BASE_URL: fake.url,
      OPENAI_MAX_RETRIES: "0",
    };

    // 1. The first process: boss delegates to fast and slow; fast finishes, slow hangs.
    // Its thread lease is the default 30 s, which the next process need not wait out.
    worker = startWorker(dataDir, cleanEnv(modelEnv));
    const running = worker;
    const server = fake;
    const diagnostics = () =>
      `worker output:\n${running.output()}\nrequests: ${JSON.stringify(callsOf(server.requests))}\nfailures: ${JSON.stringify(server.failures)}`;
    try {
      await until(() => callsOf(server.requests).slow >= 2, 60_000);
    } catch (error) {
      throw new Error(`${(error as Error).message}\n${diagnostics()}`);
    }
    const hangingIndex = server.requests.findLastIndex((r) => r.model === "slow-model");

    // What the first process made durable before the crash, read from its sqlite file: the
    // fast task's result as a pending write on the parent's checkpoint, and the slow child's
    // thread at human → tool call → tool result (about to call its model a second time).
    probe = SqliteSaver.fromConnString(join(dataDir, "checkpoints.sqlite"));
    const saver = probe;
    let fastRecordBeforeCrash: SubagentRun | undefined;
    let slowChildThreadId: string | undefined;
    let slowCheckpointBeforeCrash: string | undefined;
    await untilAsync(
      async () => {
        const parent = await saver.getTuple({
          configurable: { thread_id: THREAD_ID, checkpoint_ns: "" },
        });
        fastRecordBeforeCrash = (parent?.pendingWrites ?? [])
          .filter(([, channel]) => channel === "subagent_runs")
          .flatMap(([, , value]) => (Array.isArray(value) ? (value as SubagentRun[]) : []))
          .find((run) => run.subagent_type === "fast");
        const slowThreads = new Set<string>();
        for await (const tuple of saver.list({ configurable: {} })) {
          const id = tuple.config.configurable?.thread_id;
          if (typeof id === "string" && id.startsWith(`${THREAD_ID}_sub_slow_`)) {
            slowThreads.add(id);
          }
        }
        if (slowThreads.size !== 1) return false;
        slowChildThreadId = [...slowThreads][0];
        const slowState = await readThreadState(saver, slowChildThreadId ?? "");
        slowCheckpointBeforeCrash = slowState.checkpointId;
        return (
          fastRecordBeforeCrash?.status === "completed" &&
          slowState.messages.map((m) => m.getType()).join(",") === "human,ai,tool"
        );
      },
      20_000,
      diagnostics,
    );
    probe.db.close();
    probe = undefined;

    // 2. The crash: SIGKILL while the slow child's second model call is in flight.
    running.child.kill("SIGKILL");
    expect(await running.exited).toEqual({ code: null, signal: "SIGKILL" });
    await until(() => server.aborted.includes(hangingIndex), 10_000);
    const atCrash = callsOf(server.requests);
    expect(atCrash).toEqual({ boss: 1, fast: 1, slow: 2 });
    expect(running.output()).toContain("run starting on thread durable-thread");
    expect(running.output()).not.toContain("run finished");

    // 3. A new runtime on the same data dir resumes the thread: a run with no input.
    resumed = true;
    runtime = await createRuntime({ dataDir, env: modelEnv });
    // The killed process's lease would hold the thread for 30 s; this process sees that
    // process's pid is gone and takes the thread at once.
    const result = await runtime.run({ uid: "alice", threadId: THREAD_ID });

    expect(server.failures).toEqual([]);
    const afterResume = callsOf(server.requests);
    expect({
      boss: afterResume.boss - atCrash.boss,
      fast: afterResume.fast - atCrash.fast,
      slow: afterResume.slow - atCrash.slow,
    }).toEqual({ boss: 1, fast: 0, slow: 1 });

    // The slow child's one new call continued its own conversation: it already carries the
    // tool call and the current_time result of the first process.
    const resumedSlow = server.requests.findLast((r) => r.model === "slow-model");
    expect(resumedSlow?.messages.map((m) => m.role)).toEqual([
      "system",
      "user",
      "assistant",
      "tool",
    ]);
    expect(resumedSlow?.messages[3]).toMatchObject({ role: "tool", tool_call_id: "call_time" });

    expect(result.output).toBe("final answer");
    expect(result.subagentRuns).toHaveLength(2);
    const fastRecord = result.subagentRuns.find((run) => run.subagent_type === "fast");
    const slowRecord = result.subagentRuns.find((run) => run.subagent_type === "slow");
    expect(fastRecord?.status).toBe("completed");
    expect(slowRecord?.status).toBe("completed");
    // The fast task was not run again: its record is the one the first process wrote.
    expect(fastRecord).toEqual(fastRecordBeforeCrash);
    // The slow task resumed on the same child thread, and its two rounds span both processes.
    expect(slowRecord?.child_thread_id).toBe(slowChildThreadId);
    expect(slowRecord?.rounds).toBe(2);

    const toolMessages = result.messages.filter((m) => m.getType() === "tool") as ToolMessage[];
    expect(toolMessages.map((m) => [m.tool_call_id, m.content]).sort()).toEqual([
      ["call_fast", "fast done"],
      ["call_slow", "slow done"],
    ]);
    const bossFinal = server.requests.findLast((r) => r.model === "boss-model");
    expect(toolResults(bossFinal as ChatCompletionRequestBody)).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ tool_call_id: "call_fast", content: "fast done" }),
        expect.objectContaining({ tool_call_id: "call_slow", content: "slow done" }),
      ]),
    );

    const slowChild = await runtime.childThread("alice", slowRecord?.child_thread_id ?? "");
    const messages = slowChild.messages;
    expect(messages.map((m) => m.getType())).toEqual(["human", "ai", "tool", "ai"]);
    expect(messages[0]?.content).toBe("slow research");
    expect((messages[1] as AIMessage).tool_calls?.map((call) => call.name)).toEqual([
      "current_time",
    ]);
    expect((messages[2] as ToolMessage).tool_call_id).toBe("call_time");
    expect(messages[3]?.content).toBe("slow done");
    // Its new checkpoints descend from the last one the killed process wrote.
    const history = await runtime.childHistory("alice", slowChild.threadId);
    const byId = new Map(history.map((checkpoint) => [checkpoint.checkpointId, checkpoint]));
    const ancestors: string[] = [];
    for (let id = history[0]?.checkpointId; id !== undefined; ) {
      ancestors.push(id);
      id = byId.get(id)?.parentCheckpointId;
    }
    expect(ancestors).toContain(slowCheckpointBeforeCrash);
    expect(ancestors[0]).not.toBe(slowCheckpointBeforeCrash);
    // The parent's history is one line too: nothing in it was started over.
    const parentHistory = await readHistory(runtime.checkpointer, THREAD_ID);
    expect(parentHistory.filter((checkpoint) => checkpoint.source === "input")).toHaveLength(1);
  });
});
