/**
 * The parts of `runs/` wired as `createRuntime` wires them, on real components: an in-memory
 * SQLite store, a MemorySaver, the real agent graphs (strict scripted models only), the real run
 * store. No runtime around them, so each test reaches the module it tests directly and can
 * close it (`close()` makes `ensureOpen` throw) without closing anything else.
 */

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { MemorySaver } from "@langchain/langgraph";
import { mainAgentResolver } from "../../agents/main-agent.js";
import { AgentRepository } from "../../agents/repository.js";
import type { AgentRecord } from "../../agents/schema.js";
import { resolveChannelStorage } from "../../checkpoints/channel-storage.js";
import { ErrorCode, SubagentGraphError } from "../../errors.js";
import { openAgentParts } from "../../graphs/agent-parts.js";
import { createRunApi, type RunApi } from "../../runs/run-api.js";
import { createRunLifecycle, type RunLifecycle } from "../../runs/run-lifecycle.js";
import { RunMetrics } from "../../runs/run-metrics.js";
import { openRunStore, type RunStore } from "../../runs/run-store.js";
import { SandboxLayout } from "../../sandbox/layout.js";
import { DEFAULT_FILE_TOOL_LIMITS } from "../../sandbox/limits.js";
import { ThreadFiles } from "../../sandbox/thread-files.js";
import { type Database, openDatabase } from "../../store/database.js";
import { createFilesApi, type FilesApi } from "../../threads/files-api.js";
import { createThreadsApi, type ThreadsApi } from "../../threads/thread-api.js";
import { createThreadHistoryApi, type ThreadHistoryApi } from "../../threads/thread-history.js";
import { validateThreadId } from "../../threads/thread-id.js";

export interface RunsKit {
  database: Database;
  saver: MemorySaver;
  agents: AgentRepository;
  store: RunStore;
  threadsApi: ThreadsApi;
  lifecycle: RunLifecycle;
  runApi: RunApi;
  history: ThreadHistoryApi;
  files: FilesApi;
  /** Makes every `ensureOpen` throw `RUNTIME_CLOSED`, as a closed runtime's does. */
  close(): void;
  dispose(): Promise<void>;
}

/** Opens the kit in a fresh temp dir; `hosted` builds the lifecycle of a hosting runtime. */
export async function openRunsKit(
  options: {
    models?: Record<string, BaseChatModel>;
    hosted?: boolean;
    maxUploadBytes?: number;
  } = {},
): Promise<RunsKit> {
  const dataDir = mkdtempSync(join(tmpdir(), "runs-unit-"));
  const database = await openDatabase(":memory:");
  const saver = new MemorySaver();
  const warn = () => undefined;
  let closed = false;
  const ensureOpen = () => {
    if (closed) throw new SubagentGraphError(ErrorCode.Closed, "the runtime is closed");
  };
  const agents = new AgentRepository(database.db);
  const layout = new SandboxLayout(dataDir);
  const store = await openRunStore({
    database,
    saver,
    layout,
    env: {},
    threadLeaseMs: undefined,
    hosted: false,
    warn,
  });
  const { graphs, mcp } = openAgentParts(
    { ...(options.models ? { models: options.models } : {}) },
    {
      dataDir,
      env: {},
      warn,
      layout,
      repository: agents,
      checkpointer: saver,
      mcpServers: {},
      storage: resolveChannelStorage(),
    },
  );
  const mainAgent = mainAgentResolver(agents);
  const threadsApi = createThreadsApi({
    threads: store.threads,
    agents,
    saver,
    graphOf: (uid, record) => graphs.mainGraph(uid, record),
    isBusy: (threadId) => store.running.isBusy(threadId),
    runStates: (threadIds) => store.runRows.threadRunStates(threadIds),
    validateThreadId,
    ensureOpen,
    deleteThread: (uid, threadId) => store.deleter.delete(uid, threadId),
  });
  const checkThread = (uid: string, threadId: string) => threadsApi.get(uid, threadId);
  const lifecycle = createRunLifecycle({
    ...store,
    ensureOpen,
    hosted: options.hosted ?? false,
    graphs,
    saver,
    mainAgent,
  });
  const { running, runRows, abandoned, threads } = store;
  return {
    database,
    saver,
    agents,
    store,
    threadsApi,
    lifecycle,
    runApi: createRunApi({
      ensureOpen,
      lifecycle,
      running,
      runRows,
      abandoned,
      checkThread,
      metrics: new RunMetrics(),
    }),
    history: createThreadHistoryApi({ ensureOpen, threads, saver, checkThread }),
    files: createFilesApi({
      ensureOpen,
      threads,
      threadFiles: new ThreadFiles(layout, DEFAULT_FILE_TOOL_LIMITS),
      mainAgent,
      checkThread,
      maxUploadBytes: options.maxUploadBytes ?? 1024 * 1024,
    }),
    close: () => {
      closed = true;
    },
    dispose: async () => {
      closed = true;
      store.running.abortAll("test over");
      graphs.clear();
      await mcp.close();
      await database.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Creates `uid`'s main agent `slug` on `model` (a spec such as `scripted:main`). */
export function mainAgent(
  kit: RunsKit,
  uid: string,
  slug: string,
  model: string,
  extra: { is_default?: boolean; subagents?: string[] } = {},
): Promise<AgentRecord> {
  return kit.agents.create(uid, {
    slug,
    name: slug,
    description: `the ${slug} main agent`,
    ...(extra.is_default ? { is_default: true } : {}),
    config_json: {
      context: {
        model,
        system_prompt: `You are ${slug}.`,
        ...(extra.subagents ? { subagents: extra.subagents } : {}),
      },
    },
  });
}

/** Creates `uid`'s subagent `slug` on `model`. */
export function subagent(kit: RunsKit, uid: string, slug: string, model: string) {
  return kit.agents.create(uid, {
    slug,
    name: slug,
    description: `the ${slug} subagent`,
    backend_id: "SubAgentBackend",
    config_json: { context: { model, system_prompt: `You are ${slug}.` } },
  });
}

/** Every row of `threads` and `runs`, to show that a refusal wrote nothing. */
export async function rowCounts(kit: RunsKit): Promise<{ threads: number; runs: number }> {
  const threads = await kit.database.db.selectFrom("threads").select("thread_id").execute();
  const runs = await kit.database.db.selectFrom("runs").select("run_id").execute();
  return { threads: threads.length, runs: runs.length };
}
