import { resolve } from "node:path";
import { readCatalog } from "./agents/catalog.js";
import { mainAgentResolver, narrowSubagents } from "./agents/main-agent.js";
import { AgentRepository } from "./agents/repository.js";
import { openStorage } from "./checkpoints/open-storage.js";
import { ErrorCode, SubagentGraphError } from "./errors.js";
import { openAgentParts } from "./graphs/agent-parts.js";
import { openKnowledge } from "./knowledge/open.js";
import { modelSpecCheck } from "./models/model-spec.js";
import { BackgroundSlot, openBackgroundTasks } from "./runs/async-tasks/open.js";
import { createHealthApi } from "./runs/health.js";
import { createRunApi } from "./runs/run-api.js";
import { createRunLifecycle } from "./runs/run-lifecycle.js";
import { RunMetrics } from "./runs/run-metrics.js";
import { openRunStore } from "./runs/run-store.js";
import {
  AGENTS_METHODS,
  ASYNC_TASKS_METHODS,
  KNOWLEDGE_METHODS,
  type Runtime,
  type RuntimeOptions,
  SKILLS_METHODS,
  USERS_METHODS,
} from "./runtime-types.js";
import { SandboxLayout } from "./sandbox/layout.js";
import { ThreadFiles } from "./sandbox/thread-files.js";
import { StampedReads } from "./store/stamped-reads.js";
import { UserRepository } from "./store/users.js";
import { createFilesApi } from "./threads/files-api.js";
import { createThreadsApi } from "./threads/thread-api.js";
import { createThreadHistoryApi } from "./threads/thread-history.js";
import { validateThreadId } from "./threads/thread-id.js";
import { AGENT_STATE_REDUCERS } from "./threads/thread-state.js";
import { loadMcpServers } from "./tools/mcp/config.js";
import { guardMethods } from "./util/guard-methods.js";

export type * from "./runtime-types.js";

/**
 * Creates a runtime. With no options it keeps agents and checkpoints in SQLite files under
 * `./data` and uses the offline model unless `OPENAI_API_KEY` is set. It only opens the parts
 * and wires them; each concern lives in its own module (ARCHITECTURE.md lists them).
 *
 * @example
 * const runtime = await createRuntime({ dataDir: "./data" });
 * const result = await runtime.run({ uid: "alice", agent: "assistant", input: "Compare X and Y" });
 * console.log(result.output, result.subagentRuns);
 * await runtime.close();
 */
export async function createRuntime(options: RuntimeOptions = {}): Promise<Runtime> {
  const dataDir = resolve(options.dataDir ?? "data");
  const env = options.env ?? process.env;
  const warn = options.warn ?? ((message: string) => console.warn(`[subagent-graph] ${message}`));
  // Before anything is opened: a bad config fails here without leaving a store open.
  const mcpServers = loadMcpServers({ option: options.mcpServers, env, dataDir });
  const storage = await openStorage({
    ...options,
    dataDir,
    env,
    // Send packets carry the agent's whole state: its growing channels go by reference.
    sendRefReducers: AGENT_STATE_REDUCERS,
  });
  const { database, saver, hosted, channelStorage } = storage;
  let closed = false;
  const ensureOpen = () => {
    if (closed)
      throw new SubagentGraphError(ErrorCode.Closed, "the runtime is closed: create a new one");
  };

  // A model no factory could build is refused when the agent is saved, not at its first chat.
  // Agents and knowledge bases are looked up on every run and task call and rarely written.
  const reads = new StampedReads(() => database.changeStamp());
  const customModels = Object.keys(options.models ?? {});
  const agentRows = new AgentRepository(database.db, {
    checkModel: modelSpecCheck(customModels),
    reads,
  });
  const layout = new SandboxLayout(dataDir);
  const { threadLeaseMs } = options;
  // The storage's database, saver and whether it is hosted.
  const runStore = await openRunStore({ ...storage, layout, env, warn, threadLeaseMs });
  const { threads, running, deleter } = runStore;
  const knowledge = openKnowledge(database, {
    warn,
    env,
    reads,
    maxFileBytes: options.maxKnowledgeFileBytes,
    ingest: options.knowledgeIngest,
    leaseMs: options.knowledgeLeaseMs,
  });
  const background = new BackgroundSlot();
  const { graphs, tools, mcp, skillLibrary, fileLimits, requestLog } = openAgentParts(options, {
    dataDir,
    env,
    warn,
    layout,
    repository: agentRows,
    checkpointer: hosted ? undefined : saver,
    mcpServers,
    storage: channelStorage,
    knowledge: knowledge.api,
    // Hosted too: the children run on `saver`, lent to them (`runs/async-tasks/open.ts`).
    asyncTasks: (parent) => background.service.hostFor(parent),
  });

  const mainAgent = mainAgentResolver(agentRows);
  const threadsApi = createThreadsApi({
    threads,
    agents: agentRows,
    saver,
    graphOf: (uid, record) => graphs.mainGraph(uid, record),
    isBusy: (threadId) => running.isBusy(threadId),
    runStates: runStore.threadRunStates,
    validateThreadId,
    ensureOpen,
    deleteThread: (uid, threadId) => deleter.delete(uid, threadId),
  });
  const checkThread = (uid: string, threadId: string) => threadsApi.check(uid, threadId);
  const lifecycle = createRunLifecycle({
    ...runStore,
    ensureOpen,
    hosted,
    graphs,
    saver,
    mainAgent,
    asyncTasksSince: (threadId, since) => background.service.since(threadId, since),
  });
  const skills = guardMethods(ensureOpen, skillLibrary, SKILLS_METHODS);
  const metrics = new RunMetrics();
  const queue = runStore.fleet?.queue;
  const runApi = createRunApi({ ...runStore, ensureOpen, lifecycle, checkThread, metrics, queue });
  const { service: tasks, runner: taskRunner } = background.fill(
    openBackgroundTasks({
      database,
      saver,
      graphs,
      agents: agentRows,
      runStore,
      checkThread,
      run: (request) => runApi.run(request),
      hosted,
      warn,
    }),
  );

  const backgroundTask = (uid: string, childThread: string) =>
    tasks.ofChildThread(uid, childThread);
  return {
    ...runApi,
    health: createHealthApi({ database, saver, running, metrics }),
    ...createThreadHistoryApi({ ensureOpen, threads, saver, checkThread, backgroundTask }),
    agents: guardMethods(ensureOpen, agentRows, AGENTS_METHODS),
    users: guardMethods(ensureOpen, new UserRepository(database.db), USERS_METHODS),
    threads: threadsApi,
    asyncTasks: {
      ...guardMethods(ensureOpen, tasks, ASYNC_TASKS_METHODS),
      setParentNotifier: (notifier) => tasks.setParentNotifier(notifier),
    },
    mcp: guardMethods(ensureOpen, mcp, ["list"]),
    files: createFilesApi({
      ensureOpen,
      threads,
      threadFiles: new ThreadFiles(layout, fileLimits),
      mainAgent,
      checkThread,
      maxUploadBytes: options.maxUploadBytes ?? 50 * 1024 * 1024,
    }),
    skills,
    kb: guardMethods(ensureOpen, knowledge.api, KNOWLEDGE_METHODS),
    checkpointer: saver,
    runEvents: runStore.runEvents,
    fleet: runStore.fleet,
    catalog: () => readCatalog({ env, customModels, tools, skills: skills.list, mcp }),
    graph: async (uid, agent, graphOptions) => {
      ensureOpen();
      const record = await mainAgent(uid, agent);
      return graphs.mainGraph(uid, narrowSubagents(record, graphOptions?.subagents));
    },
    modelRequest: (messageId) => requestLog?.requestFor(messageId),
    async close() {
      if (closed) return;
      closed = true;
      running.abortAll("runtime closed");
      await taskRunner.close();
      graphs.clear();
      try {
        await knowledge.close();
        await mcp.close();
      } finally {
        await storage.close();
      }
    },
  };
}
