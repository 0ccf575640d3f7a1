import { randomUUID } from "node:crypto";
import { join, resolve } from "node:path";
import { type ProcessSettings, processLimits, settingsFileReader } from "./agents/limits.js";
import { AgentRepository } from "./agents/repository.js";
import type { AgentRecord } from "./agents/schema.js";
import { parseChildThreadId } from "./checkpoints/child-thread-id.js";
import { borrowSaver, type ManagedSaver, openSaver } from "./checkpoints/savers.js";
import { ErrorCode, SubagentGraphError } from "./errors.js";
import { AgentGraphs } from "./graphs/agent-graphs.js";
import type { SubagentRun } from "./middleware/subagent-runs.js";
import { createModelFactory, defaultModelSpec, OFFLINE_MODEL } from "./models/factory.js";
import { ModelRequestLog } from "./models/request-log.js";
import { AbandonedRuns } from "./runs/abandoned-runs.js";
import { translateChunk } from "./runs/events.js";
import { runInfoOf } from "./runs/run-info.js";
import { type ActiveRun, createRunLifecycle } from "./runs/run-lifecycle.js";
import { createThreadsApi } from "./runs/thread-api.js";
import { ThreadDeleter } from "./runs/thread-delete.js";
import { validateThreadId } from "./runs/thread-id.js";
import { readHistory, readThreadState } from "./runs/thread-state.js";
import type {
  AgentsApi,
  FilesApi,
  GraphStreamMode,
  McpApi,
  RawRunItem,
  RunRequest,
  Runtime,
  RuntimeOptions,
  SkillsApi,
} from "./runtime-types.js";
import { SandboxLayout } from "./sandbox/layout.js";
import { DEFAULT_FILE_TOOL_LIMITS, type FileToolLimits } from "./sandbox/limits.js";
import { prepareAgentSkills } from "./sandbox/skills/agent-skills.js";
import { SkillLibrary } from "./sandbox/skills/library.js";
import { ThreadFiles } from "./sandbox/thread-files.js";
import { createFileTools } from "./sandbox/tools/file-tools.js";
import { prepareDataDir } from "./store/data-dir.js";
import { openDatabase } from "./store/database.js";
import { RunRepository } from "./store/runs.js";
import { ThreadRepository } from "./store/threads.js";
import { UserRepository } from "./store/users.js";
import { builtinTools } from "./tools/builtin.js";
import { loadMcpServers, MCP_CONFIG_ENV } from "./tools/mcp/config.js";
import { McpManager } from "./tools/mcp/manager.js";
import { ToolRegistry } from "./tools/registry.js";
import { currentProcess } from "./util/process-identity.js";

export type {
  AgentsApi,
  Catalog,
  ChildThreadView,
  FilesApi,
  GraphStreamMode,
  McpApi,
  RawRunItem,
  RunRequest,
  Runtime,
  RuntimeOptions,
  SkillsApi,
} from "./runtime-types.js";

/**
 * Creates a runtime. With no options it keeps agents and checkpoints in SQLite files under
 * `./data` and uses the offline model unless `OPENAI_API_KEY` is set.
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

  const ownsDatabase = typeof options.database !== "object";
  const databaseUrl = env.DATABASE_URL?.trim() || undefined;
  // SQLite files go into the data folder (the agent store unless a database is named, the
  // checkpoints with the sqlite saver): a folder that cannot be made or written fails here, with
  // one error naming it. A runtime that keeps nothing there makes it only when a file is written.
  const kind = options.checkpointer ?? (databaseUrl ? "postgres" : "sqlite");
  if ((options.database === undefined && databaseUrl === undefined) || kind === "sqlite") {
    prepareDataDir(dataDir);
  }
  const database =
    typeof options.database === "object"
      ? options.database
      : await openDatabase(options.database ?? databaseUrl ?? join(dataDir, "agents.sqlite"));
  const hosted = options.checkpointer === "host";
  // A hosted runtime never runs a graph itself; its saver only backs the read APIs (empty).
  let saver: ManagedSaver;
  try {
    saver =
      typeof kind === "object"
        ? borrowSaver(kind)
        : kind === "postgres"
          ? await openSaver("postgres", postgresTarget(databaseUrl, options.database))
          : openSaver(kind === "host" ? "memory" : kind, join(dataDir, "checkpoints.sqlite"));
  } catch (error) {
    if (ownsDatabase) await database.close();
    throw error;
  }

  const repository = new AgentRepository(database.db);
  const threads = new ThreadRepository(database.db);
  const runRows = new RunRepository(database.db);
  const threadLeaseMs =
    options.threadLeaseMs ?? (Number(env.SUBAGENT_THREAD_LEASE_MS?.trim()) || 30_000);
  // This runtime's process, as the rows of its runs name it.
  const runner = currentProcess(randomUUID());
  const abandoned = new AbandonedRuns({
    runs: runRows,
    saver: saver.saver,
    self: runner,
    leaseMs: threadLeaseMs,
    warn,
  });
  // Runs a stopped process left `running` (the embedded default after a crash: that process
  // was this data dir's last user) are recorded interrupted and their threads freed at once.
  if (!hosted) await abandoned.sweep();
  const users = new UserRepository(database.db);
  const layout = new SandboxLayout(dataDir);
  const activeRuns = new Map<string, ActiveRun>();
  const busyThreads = new Set<string>();
  const deleter = new ThreadDeleter({
    threads,
    runs: runRows,
    abandoned,
    saver: saver.saver,
    layout,
    isBusy: (threadId) => busyThreads.has(threadId),
    warn,
  });
  // Thread deletions a stopped process left half-done are finished (the thread is invisible
  // meanwhile, see runs/thread-delete.ts).
  if (!hosted) await deleter.sweep();
  const fileLimits: FileToolLimits = { ...DEFAULT_FILE_TOOL_LIMITS, ...options.fileToolLimits };
  const skillLibrary = new SkillLibrary(layout.skillLibrary());
  const threadFiles = new ThreadFiles(layout, fileLimits);
  const maxUploadBytes = options.maxUploadBytes ?? 50 * 1024 * 1024;
  const tools = new ToolRegistry([
    ...builtinTools(),
    ...(options.fileTools === false ? [] : createFileTools(layout, fileLimits)),
    ...(options.tools ?? []),
  ]);
  const models = createModelFactory({ env, ...(options.models ? { models: options.models } : {}) });
  const mcp = new McpManager(mcpServers, {
    reservedNames: tools.names(),
    source:
      options.mcpServers !== undefined
        ? "the mcpServers option"
        : env[MCP_CONFIG_ENV]?.trim() || join(dataDir, "mcp.json"),
    warn,
  });
  let closed = false;

  const settingsFile = settingsFileReader(
    env.SUBAGENT_GRAPH_SETTINGS?.trim() || join(dataDir, "settings.json"),
    warn,
  );
  // Settings are read on every dispatch and model call: a bad environment value is reported
  // once, not at every call.
  const reported = new Set<string>();
  const warnOnce = (message: string) => {
    if (reported.has(message)) return;
    reported.add(message);
    warn(message);
  };
  /** Built-ins < environment < settings file < the `limits` option; read on every dispatch. */
  const currentSettings = (): ProcessSettings => {
    const overrides = typeof options.limits === "function" ? options.limits() : options.limits;
    return processLimits(env, { ...settingsFile(), ...overrides }, warnOnce);
  };
  const requestLog = options.recordModelRequests ? new ModelRequestLog() : undefined;
  const graphs = new AgentGraphs({
    repository,
    requestLog,
    backend: {
      models,
      tools,
      checkpointer: hosted ? undefined : saver.saver,
      hosted,
      modelFor: options.modelFor,
    },
    processLimits: currentSettings,
    mcp,
    prepareSkills: (record, skillsThreadId) =>
      prepareAgentSkills(
        skillLibrary,
        layout,
        { slug: record.slug, skills: record.config_json.context.skills },
        skillsThreadId,
      ),
    warn,
  });

  function ensureOpen(): void {
    if (closed) {
      throw new SubagentGraphError(ErrorCode.Closed, "the runtime is closed: create a new one");
    }
  }

  /** The main agent `uid` named (default: their default agent), refusing subagents. */
  async function mainAgent(uid: string, agent: string | undefined): Promise<AgentRecord> {
    const record = agent ? await repository.get(uid, agent) : await repository.getDefault(uid);
    if (!record) {
      throw new SubagentGraphError(
        ErrorCode.NotFound,
        `user "${uid}" has no default agent: pass an agent id or slug, or mark one of your agents is_default`,
        { field: "agent" },
      );
    }
    if (record.is_subagent) {
      throw new SubagentGraphError(
        ErrorCode.AgentIsSubagent,
        `agent "${record.slug}" is a subagent (SubAgentBackend): it runs only through a main agent's task tool; run a chat agent that lists it in context.subagents`,
        { field: "agent" },
      );
    }
    return record;
  }

  const lifecycle = createRunLifecycle({
    ensureOpen,
    hosted,
    threads,
    runRows,
    graphs,
    saver: saver.saver,
    threadLeaseMs,
    abandoned,
    runner,
    busyThreads,
    activeRuns,
    mainAgent,
  });

  /** A run yielding LangGraph's own chunks (see {@link Runtime.streamChunks}). */
  async function* streamChunks(
    request: RunRequest,
    streamMode: readonly GraphStreamMode[],
  ): AsyncGenerator<RawRunItem> {
    const prepared = await lifecycle.prepare(request);
    try {
      yield {
        kind: "started",
        runId: prepared.runId,
        threadId: prepared.threadId,
        agentId: prepared.record.id,
        agentSlug: prepared.record.slug,
      };
      for await (const chunk of lifecycle.chunks(prepared, streamMode))
        yield { kind: "chunk", chunk };
      yield { kind: "finished", result: await lifecycle.finish(prepared) };
    } catch (error) {
      throw await lifecycle.failure(prepared, error);
    } finally {
      await prepared.release(prepared.outcome.status);
    }
  }

  /** Repository calls, refused once the runtime is closed. */
  const agents: AgentsApi = {
    create: async (uid, payload) => open().create(uid, payload),
    ensure: async (uid, payload) => open().ensure(uid, payload),
    get: async (uid, idOrSlug) => open().get(uid, idOrSlug),
    list: async (uid, listOptions) => open().list(uid, listOptions),
    update: async (uid, id, patch) => open().update(uid, id, patch),
    delete: async (uid, id, deleteOptions) => open().delete(uid, id, deleteOptions),
    getDefault: async (uid) => open().getDefault(uid),
  };

  function open(): AgentRepository {
    ensureOpen();
    return repository;
  }

  /** The file scope of a main thread of `uid` (its uploads/outputs, their workspace). */
  const threadScope = (uid: string, threadId: string) => ({
    uid,
    fileThreadId: threadId,
    skillsThreadId: threadId,
  });

  const files: FilesApi = {
    async upload(uid, threadId, name, content, uploadOptions) {
      ensureOpen();
      validateThreadId(threadId);
      if (!(await threads.get(uid, threadId))) {
        const record = await mainAgent(uid, uploadOptions?.agent);
        await threads.claim(uid, threadId, record.id);
      }
      return threadFiles.upload(threadScope(uid, threadId), name, content, maxUploadBytes);
    },
    async list(uid, threadId, folder) {
      ensureOpen();
      await threadsApi.get(uid, threadId);
      return threadFiles.list(threadScope(uid, threadId), folder);
    },
    async read(uid, threadId, path) {
      ensureOpen();
      await threadsApi.get(uid, threadId);
      return (await threadFiles.read(threadScope(uid, threadId), path)).bytes;
    },
  };

  const library = () => {
    ensureOpen();
    return skillLibrary;
  };
  const skills: SkillsApi = {
    list: async () => library().list(),
    get: async (name) => library().get(name),
    install: async (sourceDir, installOptions) => library().install(sourceDir, installOptions),
    installFiles: async (skillFiles, installOptions) =>
      library().installFiles(skillFiles, installOptions),
    remove: async (name) => library().remove(name),
  };

  const threadsApi = createThreadsApi({
    threads,
    agents: repository,
    saver: saver.saver,
    graphOf: (uid, record) => graphs.mainGraph(uid, record),
    isBusy: (threadId) => busyThreads.has(threadId),
    validateThreadId,
    ensureOpen,
    deleteThread: (uid, threadId) => deleter.delete(uid, threadId),
  });

  const mcpApi: McpApi = {
    list: async (listOptions) => {
      ensureOpen();
      return mcp.list(listOptions);
    },
  };

  return {
    agents,
    users,
    threads: threadsApi,
    mcp: mcpApi,

    async catalog() {
      const defaultModel = defaultModelSpec(env);
      return {
        models: [...new Set([defaultModel, OFFLINE_MODEL, ...Object.keys(options.models ?? {})])],
        defaultModel,
        tools: tools.describe(),
        skills: (await skills.list()).map(({ name, description }) => ({ name, description })),
        mcpServers: (await mcp.list({ connect: false })).map((server) => server.name),
      };
    },

    async graph(uid, agent, graphOptions) {
      ensureOpen();
      const record = await mainAgent(uid, agent);
      const narrowed = graphOptions?.subagents;
      if (narrowed === undefined) return graphs.mainGraph(uid, record);
      const context = record.config_json.context;
      const subagents = (context.subagents ?? []).filter((slug) => narrowed.includes(slug));
      return graphs.mainGraph(uid, {
        ...record,
        config_json: { context: { ...context, subagents } },
      });
    },
    files,
    skills,
    checkpointer: saver.saver,
    modelRequest: (messageId) => requestLog?.requestFor(messageId),

    async run(request) {
      const prepared = await lifecycle.prepare(request);
      try {
        await prepared.graph.invoke(prepared.input, prepared.config);
        return await lifecycle.finish(prepared);
      } catch (error) {
        throw await lifecycle.failure(prepared, error);
      } finally {
        await prepared.release(prepared.outcome.status);
      }
    },

    async *stream(request) {
      // The same run as streamChunks, its chunks turned into events.
      let threadId = "";
      for await (const item of streamChunks(request, ["updates", "messages", "custom"])) {
        if (item.kind === "started") {
          threadId = item.threadId;
          yield {
            type: "run_started",
            runId: item.runId,
            threadId: item.threadId,
            agent: item.agentSlug,
          };
        } else if (item.kind === "chunk") {
          yield* translateChunk(threadId, item.chunk);
        } else {
          yield { type: "run_finished", result: item.result };
        }
      }
    },

    streamChunks,

    async history(uid, threadId) {
      ensureOpen();
      await threadsApi.get(uid, threadId);
      return readHistory(saver.saver, threadId);
    },

    async childThread(uid, childThreadId) {
      const { parts, run } = await recordedChild(uid, childThreadId);
      const state = await readThreadState(saver.saver, childThreadId);
      return {
        threadId: childThreadId,
        parentThreadId: parts.parentThreadId,
        subagentType: parts.slug,
        run,
        messages: state.messages,
      };
    },

    async childHistory(uid, childThreadId) {
      await recordedChild(uid, childThreadId);
      return readHistory(saver.saver, childThreadId);
    },

    async requestCancel(uid, runId) {
      ensureOpen();
      const active = activeRuns.get(runId);
      if (active?.uid === uid) {
        active.controller.abort(new Error(`run ${runId} cancelled`));
        return true;
      }
      return runRows.requestCancel(uid, runId);
    },

    async runInfo(uid, runId) {
      ensureOpen();
      const row = await runRows.get(uid, runId);
      // A row left running by a stopped process is recorded interrupted before it is shown.
      return row ? runInfoOf(await abandoned.settle(row)) : undefined;
    },

    async listRuns(uid, threadId, listOptions = {}) {
      await threadsApi.get(uid, threadId);
      // Rows left running by a stopped process are recorded interrupted first, so the status
      // filter and the pages see them as they truly stand.
      for (const row of await runRows.running(threadId)) await abandoned.settle(row);
      return (await runRows.listForThread(uid, threadId, listOptions)).map(runInfoOf);
    },

    cancel(uid, runId) {
      const active = activeRuns.get(runId);
      if (!active || active.uid !== uid) return false;
      active.controller.abort(new Error(`run ${runId} cancelled`));
      return true;
    },

    async close() {
      if (closed) return;
      closed = true;
      for (const active of activeRuns.values())
        active.controller.abort(new Error("runtime closed"));
      graphs.clear();
      try {
        await mcp.close();
      } finally {
        await saver.close();
        if (ownsDatabase) await database.close();
      }
    },
  };

  /**
   * A child thread `uid` may read: its parent thread is theirs and records it (in the latest
   * checkpoint, or an older one for a child left behind by a later fork or replay).
   */
  async function recordedChild(uid: string, childThreadId: string) {
    ensureOpen();
    const parts = parseChildThreadId(childThreadId);
    const notFound = new SubagentGraphError(
      ErrorCode.NotFound,
      `child thread "${childThreadId}" not found: pass a child_thread_id from one of your threads' subagent_runs`,
      { field: "childThreadId" },
    );
    if (!parts || !(await threads.get(uid, parts.parentThreadId))) throw notFound;
    const recordsChild = (runs: SubagentRun[]) =>
      runs.find((record) => record.child_thread_id === childThreadId);
    const run =
      recordsChild((await readThreadState(saver.saver, parts.parentThreadId)).subagentRuns) ??
      recordsChild(
        (await readHistory(saver.saver, parts.parentThreadId)).flatMap((c) => c.subagentRuns),
      );
    if (!run) throw notFound;
    return { parts, run };
  }
}

/** Where Postgres checkpoints go: `DATABASE_URL`, else the store's own `postgres://` URL. */
function postgresTarget(
  databaseUrl: string | undefined,
  store: RuntimeOptions["database"],
): string {
  const url =
    databaseUrl ??
    (typeof store === "string" && /^postgres(ql)?:\/\//.test(store) ? store : undefined);
  if (!url) {
    throw new SubagentGraphError(
      ErrorCode.Validation,
      'checkpointer "postgres" needs a PostgreSQL URL: set DATABASE_URL or pass database: "postgres://…"',
      { field: "checkpointer" },
    );
  }
  return url;
}
