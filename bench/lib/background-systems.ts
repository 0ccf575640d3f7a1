/**
 * The systems of the background scenario (`scenarios/background.ts`):
 * - ours: `createRuntime` on SQLite (saver and agent store in a temp data dir, as
 *   `subagent-graph serve` keeps them), `boss` (main, `async_subagents: ["researcher"]`, no
 *   tools, no `task` subagents) and `researcher` (its one tool `lookup`);
 * - Deep Agents 1.14.1: a `createDeepAgent` supervisor on a memory saver whose `subagents` hold
 *   one `AsyncSubAgent` (`graphId: "researcher"`, `url` of the documented minimal server,
 *   `deep-async-server.ts`), as the example's `supervisor.ts` builds it.
 * Both on the same scripted models (`background-scripts.ts`).
 */
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { HumanMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { MemorySaver } from "@langchain/langgraph-checkpoint";
import { createDeepAgent } from "deepagents";
import { z } from "zod";
import type { AsyncTask } from "../../middleware/async-task-records.js";
import { createRuntime, type Runtime } from "../../runtime.js";
import { mainAgentPayload, subagentPayload } from "../../test/support/runtime-fixture.js";
import {
  DEEP_DIALECT,
  mainReplyFor,
  OURS_DIALECT,
  RESEARCHER,
  RESEARCHER_DESCRIPTION,
  RESEARCHER_PROMPT,
  researcherReply,
} from "./background-scripts.js";
import { startDeepAsyncServer } from "./deep-async-server.js";
import { BenchModel } from "./model.js";
import { freshPostgresDatabase } from "./postgres.js";
import { MAIN_PROMPT } from "./scripts.js";

export const BG_UID = "bench-bg";
export const BG_MAIN = "boss";

/** Results the parent's model has seen: tag → when (hrtime ns) it first answered with it. */
export class ResultWatch {
  private readonly seen = new Map<string, bigint>();
  private readonly callsAt = new Map<string, number>();
  private readonly waiters = new Map<string, (at: bigint) => void>();
  /** The parent model's calls so far. */
  calls = 0;

  /** Called from the parent model's answer: these results are in its input. */
  record(tags: string[]): void {
    const at = process.hrtime.bigint();
    for (const tag of tags) {
      if (this.seen.has(tag)) continue;
      this.seen.set(tag, at);
      this.callsAt.set(tag, this.calls);
      this.waiters.get(tag)?.(at);
      this.waiters.delete(tag);
    }
  }

  has(tag: string): boolean {
    return this.seen.has(tag);
  }

  /** {@link calls} as the parent first saw `tag`'s result (that call included). */
  callsWhenSeen(tag: string): number | undefined {
    return this.callsAt.get(tag);
  }

  /** When the parent first saw `tag`'s result (waits for it; rejects after `timeoutMs`). */
  when(tag: string, timeoutMs: number): Promise<bigint> {
    const at = this.seen.get(tag);
    if (at !== undefined) return Promise.resolve(at);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters.delete(tag);
        reject(new Error(`the parent never saw the result of ${tag} within ${timeoutMs} ms`));
      }, timeoutMs);
      this.waiters.set(tag, (seenAt) => {
        clearTimeout(timer);
        resolve(seenAt);
      });
    });
  }
}

/** A tool the busy researcher calls between its slow model calls. */
const lookup = tool(async ({ text }: { text: string }) => `looked up ${text}`, {
  name: "lookup",
  description: "Looks something up.",
  schema: z.object({ text: z.string() }),
});

export interface OursBackground {
  runtime: Runtime;
  watch: ResultWatch;
  /** One turn of `boss` on `threadId`: its final text. */
  turn(threadId: string, input: string): Promise<string>;
  tasks(threadId: string): Promise<AsyncTask[]>;
  cancel(threadId: string, taskId: string): Promise<AsyncTask>;
  dispose(): Promise<void>;
}

/**
 * Ours with every main-model call taking `mainLatencyMs` and every researcher call
 * `researcherLatencyMs`; `notifyParent` sets the main agent's `context.notify_parent`.
 */
export async function openOursBackground(options: {
  mainLatencyMs: number;
  researcherLatencyMs: number;
  notifyParent: boolean;
}): Promise<OursBackground> {
  const watch = new ResultWatch();
  const reply = mainReplyFor(OURS_DIALECT, (tags) => watch.record(tags));
  const main = new BenchModel(
    "bg-main",
    (call) => {
      watch.calls += 1;
      return reply(call);
    },
    { latencyMs: options.mainLatencyMs },
  );
  const researcher = new BenchModel("bg-researcher", researcherReply, {
    latencyMs: options.researcherLatencyMs,
  });
  const dataDir = mkdtempSync(join(tmpdir(), "subagent-graph-bench-bg-"));
  const runtime = await createRuntime({
    dataDir,
    checkpointer: "sqlite",
    env: {},
    warn: () => {},
    models: { "bench:bg-main": main, "bench:bg-researcher": researcher },
    tools: [lookup],
  });
  await runtime.agents.create(
    BG_UID,
    subagentPayload(RESEARCHER, "bench:bg-researcher", { tools: ["lookup"] }),
  );
  await runtime.agents.create(BG_UID, {
    ...mainAgentPayload(BG_MAIN, "bench:bg-main", [], {
      tools: [],
      async_subagents: [RESEARCHER],
      ...(options.notifyParent ? { notify_parent: true } : {}),
    }),
    is_default: true,
  });
  return {
    runtime,
    watch,
    async turn(threadId, input) {
      const result = await runtime.run({ uid: BG_UID, agent: BG_MAIN, threadId, input });
      return result.output;
    },
    tasks: (threadId) => runtime.asyncTasks.list(BG_UID, threadId),
    cancel: (threadId, taskId) => runtime.asyncTasks.cancel(BG_UID, threadId, taskId),
    async dispose() {
      try {
        await runtime.close();
      } finally {
        rmSync(dataDir, { recursive: true, force: true });
      }
    },
  };
}

export interface DeepBackground {
  watch: ResultWatch;
  /** One supervisor turn on `threadId`: its final text and the task ids in its state. */
  turn(threadId: string, input: string): Promise<{ output: string; taskIds: string[] }>;
  serverRunStatuses(): Promise<Record<string, number>>;
  dispose(): Promise<void>;
}

/**
 * Deep Agents: the documented minimal server on a fresh database of the bench's PostgreSQL
 * cluster, hosting the researcher, and the supervisor pointing at it. Undefined when PostgreSQL
 * is not installed (the example's server needs it).
 */
export async function openDeepBackground(options: {
  mainLatencyMs: number;
  researcherLatencyMs: number;
}): Promise<DeepBackground | undefined> {
  const databaseUrl = await freshPostgresDatabase("deepasync");
  if (!databaseUrl) return undefined;
  const researcher = new BenchModel("deep-researcher", researcherReply, {
    latencyMs: options.researcherLatencyMs,
  });
  const server = await startDeepAsyncServer(databaseUrl, researcher, RESEARCHER_PROMPT);
  const watch = new ResultWatch();
  const reply = mainReplyFor(DEEP_DIALECT, (tags) => watch.record(tags));
  const main = new BenchModel(
    "deep-main",
    (call) => {
      watch.calls += 1;
      return reply(call);
    },
    { latencyMs: options.mainLatencyMs },
  );
  const supervisor = createDeepAgent({
    model: main,
    systemPrompt: MAIN_PROMPT,
    tools: [],
    checkpointer: new MemorySaver(),
    subagents: [
      {
        name: RESEARCHER,
        description: RESEARCHER_DESCRIPTION,
        graphId: RESEARCHER,
        url: server.url,
      },
    ],
  });
  return {
    watch,
    async turn(threadId, input) {
      const result = (await supervisor.invoke(
        { messages: [new HumanMessage(input)] },
        { configurable: { thread_id: threadId } },
      )) as { messages: { content: unknown }[]; asyncTasks?: Record<string, unknown> };
      const last = result.messages.at(-1);
      return {
        output: typeof last?.content === "string" ? last.content : JSON.stringify(last?.content),
        taskIds: Object.keys(result.asyncTasks ?? {}),
      };
    },
    serverRunStatuses: () => server.runStatuses(),
    dispose: () => server.close(),
  };
}

/** A fresh thread id. */
export function bgThread(prefix: string): string {
  return `${prefix}-${randomUUID()}`;
}
