import { randomUUID } from "node:crypto";
import { join, resolve } from "node:path";
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { type BaseMessage, HumanMessage } from "@langchain/core/messages";
import type { StructuredToolInterface } from "@langchain/core/tools";
import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";
import { type ProcessSettings, processLimits, settingsFileReader } from "./agents/limits.js";
import { AgentRepository } from "./agents/repository.js";
import type { AgentRecord } from "./agents/schema.js";
import type { AgentGraph } from "./backends/registry.js";
import { isChildThreadId, parseChildThreadId } from "./checkpoints/child-thread-id.js";
import { borrowSaver, type ManagedSaver, openSaver } from "./checkpoints/savers.js";
import { ErrorCode, SubagentGraphError } from "./errors.js";
import { AgentGraphs } from "./graphs/agent-graphs.js";
import { addUsage } from "./middleware/run-records.js";
import type { SubagentRun } from "./middleware/subagent-runs.js";
import { createModelFactory, defaultModelSpec, OFFLINE_MODEL } from "./models/factory.js";
import {
  type GraphStreamChunk,
  type RunEvent,
  type RunResult,
  translateChunk,
} from "./runs/events.js";
import { repairCancelledTurn } from "./runs/repair.js";
import { RunLease } from "./runs/run-lease.js";
import { createThreadsApi, type ThreadsApi } from "./runs/thread-api.js";
import { readHistory, readThreadState, type ThreadCheckpoint } from "./runs/thread-state.js";
import { SandboxLayout } from "./sandbox/layout.js";
import { DEFAULT_FILE_TOOL_LIMITS, type FileToolLimits } from "./sandbox/limits.js";
import { prepareAgentSkills } from "./sandbox/skills/agent-skills.js";
import {
  type SkillInstallOptions,
  SkillLibrary,
  type SkillSummary,
} from "./sandbox/skills/library.js";
import { type ThreadFileEntry, ThreadFiles } from "./sandbox/thread-files.js";
import { createFileTools } from "./sandbox/tools/file-tools.js";
import { type Database, openDatabase } from "./store/database.js";
import { RunRepository, type RunRow } from "./store/runs.js";
import { ThreadRepository } from "./store/threads.js";
import { UserRepository } from "./store/users.js";
import { builtinTools } from "./tools/builtin.js";
import { loadMcpServers, MCP_CONFIG_ENV, type McpServerConfig } from "./tools/mcp/config.js";
import { McpManager, type McpServerInfo } from "./tools/mcp/manager.js";
import { ToolRegistry } from "./tools/registry.js";
import { messageText } from "./util/message-text.js";

/** Options of {@link createRuntime}. Every field is optional: the defaults run offline. */
export interface RuntimeOptions {
  /** Folder for the SQLite files (agents, checkpoints). Default `./data`. */
  dataDir?: string;
  /**
   * Where checkpoints go: `"sqlite"` (default, `<dataDir>/checkpoints.sqlite`), `"memory"`, or a
   * saver you own (it is not closed by `close()`). `"host"`: graphs are compiled without a
   * saver, for a server that brings its own (the LangGraph dev server); such a runtime only
   * hands out graphs ({@link Runtime.graph}) and refuses to run them itself.
   */
  checkpointer?: "sqlite" | "memory" | "postgres" | "host" | BaseCheckpointSaver;
  /**
   * The agent store: a SQLite file path, `":memory:"`, a `postgres://` URL, or an open
   * {@link Database} you own. Default: `DATABASE_URL` when set (PostgreSQL for the store and,
   * unless `checkpointer` says otherwise, for the checkpoints too), else `<dataDir>/agents.sqlite`.
   */
  database?: string | Database;
  /** Extra models by spec, e.g. `{ "scripted:main": model }`, usable in `context.model`. */
  models?: Record<string, BaseChatModel>;
  /**
   * A model to use instead of the one an agent's config names, per agent (e.g. a `ReplayModel`
   * serving a recorded thread back); return undefined to keep the configured one.
   */
  modelFor?: (agent: AgentRecord) => BaseChatModel | undefined;
  /** Extra tools, registered beside the built-in ones. */
  tools?: StructuredToolInterface[];
  /**
   * MCP servers by name (`^[a-z0-9][a-z0-9-]{0,30}$`): `{ command, args?, env?, cwd? }` for a
   * local process over stdio, or `{ url, headers? }` for Streamable HTTP. Wins over the file
   * `SUBAGENT_GRAPH_MCP` names, else `<dataDir>/mcp.json` (`{ "servers": { … } }`), read once
   * here. Agents get their tools as `mcp_<server>_<tool>` through `context.mcp_servers`.
   */
  mcpServers?: Record<string, McpServerConfig>;
  /** Environment for model keys and limit defaults. Default `process.env`, read on each use. */
  env?: NodeJS.ProcessEnv;
  /**
   * Process-wide setting overrides (limits, `enabled`); a function is called again on every
   * dispatch. They override the environment and the settings file (`SUBAGENT_GRAPH_SETTINGS`,
   * default `<dataDir>/settings.json`), which are also read on every dispatch.
   */
  limits?: Partial<ProcessSettings> | (() => Partial<ProcessSettings>);
  /** Where warnings go (dropped subagents, ignored settings). Default `console.warn`. */
  warn?: (message: string) => void;
  /**
   * Registers the sandboxed file tools (`ls`, `read_file`, `write_file`, `edit_file`, `glob`,
   * `grep`). Default true.
   */
  fileTools?: boolean;
  /** Bounds of the file tools (read/write sizes, result caps, search time). */
  fileToolLimits?: Partial<FileToolLimits>;
  /** Largest upload {@link FilesApi.upload} accepts. Default 50 MiB. */
  maxUploadBytes?: number;
  /**
   * How long a run's hold on its thread lasts without renewal (it is renewed while the run
   * lives): after a process dies mid-run, another may resume the thread this much later.
   * Default `SUBAGENT_THREAD_LEASE_MS`, else 30 s.
   */
  threadLeaseMs?: number;
}

/** Arguments of {@link Runtime.run} and {@link Runtime.stream}. */
export interface RunRequest {
  /** The acting user: only their agents and threads (and what is shared with them) are reachable. */
  uid: string;
  /** Agent id or slug; default: the user's default agent. */
  agent?: string;
  /** Thread to continue; default: a new thread. */
  threadId?: string;
  /**
   * The user's message. Leave it out to run what the thread (or `checkpointId`) has next: a
   * run that stopped mid-way (a crash) resumes, a replay re-executes from that checkpoint.
   */
  input?: string;
  /**
   * Replay/branch from this checkpoint of the thread instead of its latest one (see
   * {@link Runtime.history}); the run writes a new branch, the old checkpoints stay readable.
   */
  checkpointId?: string;
  /** Cancels the run (and every running subagent) when aborted. */
  signal?: AbortSignal;
  /** The run's id (default a new UUID); the HTTP layer picks it to announce it first. */
  runId?: string;
}

/** LangGraph stream modes {@link Runtime.streamChunks} passes through. */
export type GraphStreamMode = "values" | "updates" | "messages" | "custom";

/** What {@link Runtime.streamChunks} yields: a start, LangGraph's own chunks, then the result. */
export type RawRunItem =
  | { kind: "started"; runId: string; threadId: string; agentId: string }
  | { kind: "chunk"; chunk: GraphStreamChunk }
  | { kind: "finished"; result: RunResult };

/** A subagent's thread as seen through its parent. */
export interface ChildThreadView {
  threadId: string;
  parentThreadId: string;
  subagentType: string;
  /** The parent's record of the call that made this child. */
  run: SubagentRun;
  messages: BaseMessage[];
}

/** Agent management, every call on behalf of `uid`. */
export interface AgentsApi {
  create(uid: string, payload: unknown): Promise<AgentRecord>;
  get(uid: string, idOrSlug: string): Promise<AgentRecord>;
  list(uid: string, options?: { include_subagents?: boolean }): Promise<AgentRecord[]>;
  update(uid: string, id: string, patch: unknown): Promise<AgentRecord>;
  /** `detach`: also remove a subagent from its owner's main agents' lists (else `AGENT_IN_USE`). */
  delete(uid: string, id: string, options?: { detach?: boolean }): Promise<void>;
  getDefault(uid: string): Promise<AgentRecord | undefined>;
}

/** A thread's files, every call on behalf of `uid` (who must own the thread). */
export interface FilesApi {
  /**
   * Adds a file to the thread's uploads (`/home/gem/user-data/uploads/<name>`), where its
   * agents and their subagents can read it. A new thread id is claimed for `uid` (with
   * `options.agent`, default the user's default agent), as a run would.
   */
  upload(
    uid: string,
    threadId: string,
    name: string,
    content: string | Uint8Array,
    options?: { agent?: string },
  ): Promise<ThreadFileEntry>;
  /**
   * Files under a folder of the thread (default its outputs, where agents and their subagents
   * put results), with sizes and modification times.
   */
  list(uid: string, threadId: string, folder?: string): Promise<ThreadFileEntry[]>;
  /** A file of the thread (outputs, uploads or the user's workspace) by virtual path. */
  read(uid: string, threadId: string, path: string): Promise<Buffer>;
}

/** The skill library (process-wide: every agent may list any installed skill). */
export interface SkillsApi {
  list(): Promise<SkillSummary[]>;
  get(name: string): Promise<SkillSummary | undefined>;
  /** Installs a skill folder (`SKILL.md` with `name`/`description` front matter, plus files). */
  install(sourceDir: string, options?: SkillInstallOptions): Promise<SkillSummary>;
  /** Installs a skill from files in memory, keyed by relative path. */
  installFiles(
    files: Record<string, string | Uint8Array>,
    options?: SkillInstallOptions,
  ): Promise<SkillSummary>;
  /** Removes a skill; false when it was not installed. Running agents keep their copies. */
  remove(name: string): Promise<boolean>;
}

/** The runtime's MCP servers (defined in `mcp.json` or the `mcpServers` option). */
export interface McpApi {
  /**
   * Every defined server with its transport, status, tool names (`mcp_<server>_<tool>`) and the
   * error that made it unavailable. Servers not connected yet are connected first unless
   * `connect` is false (a lost one is reconnected).
   */
  list(options?: { connect?: boolean }): Promise<McpServerInfo[]>;
}

/** What agents can be configured with, for forms and clients (`GET /api/catalog`). */
export interface Catalog {
  /** Model specs an agent's `context.model` can name without a custom one (`openai:<name>` too). */
  models: string[];
  /** The spec used when an agent sets no model. */
  defaultModel: string;
  /** Registered tools (`context.tools`). */
  tools: { name: string; description: string }[];
  /** Installed skills (`context.skills`). */
  skills: { name: string; description: string }[];
  /** Defined MCP servers (`context.mcp_servers`), not connected for this. */
  mcpServers: string[];
}

/** The library entry point: agents, runs and threads over one store and one saver. */
export interface Runtime {
  /** Models, tools, skills and MCP servers agents can be configured with. */
  catalog(): Promise<Catalog>;
  agents: AgentsApi;
  /** Uploads and outputs of threads. */
  files: FilesApi;
  /** Skills agents can be given (`context.skills`). */
  skills: SkillsApi;
  /** MCP servers agents can be given (`context.mcp_servers`). */
  mcp: McpApi;
  /** Users and their API tokens (for the HTTP server and the CLI). */
  users: UserRepository;
  /** Runs the agent on the thread until it answers. */
  run(request: RunRequest): Promise<RunResult>;
  /** Same as {@link run}, yielding events as they happen; the last is `run_finished`. */
  stream(request: RunRequest): AsyncGenerator<RunEvent>;
  /**
   * Same as {@link run}, yielding LangGraph's own stream chunks `[namespace, mode, data]` for
   * `streamMode` (with subgraphs: a subagent's chunks come under `subagent:<child thread id>`,
   * its tokens with the child's `thread_id` in their metadata). For protocol adapters.
   */
  streamChunks(
    request: RunRequest,
    streamMode: readonly GraphStreamMode[],
  ): AsyncGenerator<RawRunItem>;
  /** Threads: created ahead of runs, searched, and their LangGraph state. */
  threads: ThreadsApi;
  /**
   * The compiled graph of `uid`'s chat agent (default: their default agent), as runs use it,
   * for hosting it elsewhere (the LangGraph dev server). `subagents` narrows its allow-list.
   */
  graph(
    uid: string,
    agent?: string,
    options?: { subagents?: readonly string[] },
  ): Promise<AgentGraph>;
  /** The thread's checkpoints, newest first, each with its messages and subagent runs. */
  history(uid: string, threadId: string): Promise<ThreadCheckpoint[]>;
  /** A child thread's messages, only if its parent thread is the caller's and records it. */
  childThread(uid: string, childThreadId: string): Promise<ChildThreadView>;
  /** A child thread's checkpoints, newest first (same permission as {@link childThread}). */
  childHistory(uid: string, childThreadId: string): Promise<ThreadCheckpoint[]>;
  /** Aborts a running run of `uid` in this process; false when no such run is active here. */
  cancel(uid: string, runId: string): boolean;
  /**
   * Stops a running run of `uid` whichever process runs it (this one at once, another at its
   * next heartbeat); false when no such run is running.
   */
  requestCancel(uid: string, runId: string): Promise<boolean>;
  /** A run's row, whichever process ran it: its thread, agent and status. */
  runInfo(uid: string, runId: string): Promise<RunRow | undefined>;
  /** The saver in use (for tools that read checkpoints directly). */
  readonly checkpointer: BaseCheckpointSaver;
  /**
   * Waits for nothing, closes the store and the saver it opened and the MCP connections (stdio
   * servers' processes end). Idempotent.
   */
  close(): Promise<void>;
}

/** User-supplied thread ids: safe as file names, and never shaped like a child thread id. */
const THREAD_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_-]{0,159}$/;

interface ActiveRun {
  uid: string;
  threadId: string;
  controller: AbortController;
}

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
  const database =
    typeof options.database === "object"
      ? options.database
      : await openDatabase(options.database ?? databaseUrl ?? join(dataDir, "agents.sqlite"));
  const hosted = options.checkpointer === "host";
  const kind = options.checkpointer ?? (databaseUrl ? "postgres" : "sqlite");
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
  const users = new UserRepository(database.db);
  const layout = new SandboxLayout(dataDir);
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
  const activeRuns = new Map<string, ActiveRun>();
  const busyThreads = new Set<string>();
  let closed = false;

  const settingsFile = settingsFileReader(
    env.SUBAGENT_GRAPH_SETTINGS?.trim() || join(dataDir, "settings.json"),
    warn,
  );
  /** Built-ins < environment < settings file < the `limits` option; read on every dispatch. */
  const currentSettings = (): ProcessSettings => {
    const overrides = typeof options.limits === "function" ? options.limits() : options.limits;
    return processLimits(env, { ...settingsFile(), ...overrides }, warn);
  };
  const graphs = new AgentGraphs({
    repository,
    backend: {
      models,
      tools,
      checkpointer: hosted ? undefined : saver.saver,
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

  async function prepareRun(request: RunRequest) {
    ensureOpen();
    if (hosted) {
      throw new SubagentGraphError(
        ErrorCode.Unsupported,
        'this runtime hosts graphs for a server that brings its own checkpointer (checkpointer: "host"): run them there, or create a runtime with "sqlite" or "memory"',
      );
    }
    const threadId = request.threadId ?? randomUUID();
    validateThreadId(threadId);
    // An existing thread keeps running the agent it was started with unless told otherwise.
    const existing = request.threadId ? await threads.get(request.uid, threadId) : undefined;
    const record = await mainAgent(request.uid, request.agent ?? (existing?.agent_id || undefined));
    await threads.claim(request.uid, threadId, record.id);
    if (busyThreads.has(threadId)) {
      throw new SubagentGraphError(
        ErrorCode.ThreadBusy,
        `thread "${threadId}" already has a run in progress: wait for it to finish or cancel it`,
        { field: "threadId" },
      );
    }
    const graph = await graphs.mainGraph(request.uid, record);
    const runId = request.runId ?? randomUUID();
    const controller = new AbortController();
    // The caller's signal is forwarded into the run's own controller until the run is released,
    // not combined with AbortSignal.any: LangGraph never removes the abort listener it adds to a
    // run's signal, and Node keeps a composite signal with listeners alive until it aborts, so
    // every run given a signal (every HTTP run) would stay in memory for good.
    const forwardAbort = () => controller.abort(request.signal?.reason);
    if (request.signal?.aborted) forwardAbort();
    else request.signal?.addEventListener("abort", forwardAbort, { once: true });
    const stopForwarding = () => request.signal?.removeEventListener("abort", forwardAbort);
    const signal = controller.signal;
    busyThreads.add(threadId);
    activeRuns.set(runId, { uid: request.uid, threadId, controller });
    let lease: RunLease;
    try {
      lease = await RunLease.acquire({
        runs: runRows,
        runId,
        threadId,
        uid: request.uid,
        agentId: record.id,
        leaseMs: threadLeaseMs,
        abort: (reason) => controller.abort(reason),
      });
    } catch (error) {
      stopForwarding();
      busyThreads.delete(threadId);
      activeRuns.delete(runId);
      throw error;
    }
    const release = async (status: "success" | "error" | "interrupted") => {
      stopForwarding();
      busyThreads.delete(threadId);
      activeRuns.delete(runId);
      await lease.release(status);
      await threads.touch(threadId);
    };
    const config = {
      configurable: {
        thread_id: threadId,
        ...(request.checkpointId ? { checkpoint_id: request.checkpointId } : {}),
      },
      context: { uid: request.uid, thread_id: threadId, is_subagent_runtime: false },
      signal,
      runId,
      // Each task call is a model turn plus a child's own loop; LangGraph counts only ours.
      recursionLimit: 100,
      // Each step's checkpoint is saved before the next step starts. LangGraph's default
      // ("async") saves it while the next step runs, so a crash while children run could lose
      // the step that called them: the thread would look finished, the user's message gone and
      // the children's threads orphaned (seen on a loaded machine in the scale-out test).
      durability: "sync" as const,
    };
    const input =
      request.input === undefined ? null : { messages: [new HumanMessage(request.input)] };
    try {
      await checkStartingPoint(graph, config.configurable, input === null);
    } catch (error) {
      await release("error");
      throw error;
    }
    const startedAt = new Date().toISOString();
    // How the run ended, for its row: set by `finish` and `failure`; a stream its consumer
    // abandoned stays "interrupted".
    const outcome: { status: "success" | "error" | "interrupted" } = { status: "interrupted" };
    return { record, graph, threadId, runId, config, input, release, startedAt, outcome };
  }

  type PreparedRun = Awaited<ReturnType<typeof prepareRun>>;

  /**
   * A run from a checkpoint needs that checkpoint; a run without input needs something to do
   * there (a turn that stopped mid-way), else it would silently do nothing.
   */
  async function checkStartingPoint(
    graph: AgentGraph,
    configurable: { thread_id: string; checkpoint_id?: string },
    withoutInput: boolean,
  ): Promise<void> {
    const { thread_id: threadId, checkpoint_id: checkpointId } = configurable;
    if (
      checkpointId &&
      !(await saver.saver.getTuple({ configurable: { ...configurable, checkpoint_ns: "" } }))
    ) {
      throw new SubagentGraphError(
        ErrorCode.NotFound,
        `checkpoint "${checkpointId}" not found in thread "${threadId}": pass a checkpoint id from the thread's history`,
        { field: "checkpointId" },
      );
    }
    if (!withoutInput) return;
    const state = await graph.getState({ configurable });
    if (state.next.length === 0) {
      throw new SubagentGraphError(
        ErrorCode.Validation,
        `thread "${threadId}" has nothing to run${checkpointId ? ` from checkpoint "${checkpointId}"` : ""}: its turn is complete, so pass input (a new message), or a checkpoint_id from before the step to replay`,
        { field: "input" },
      );
    }
  }

  /** The graph's stream with subgraphs, so subagents' chunks come too. */
  async function* graphChunks(
    prepared: PreparedRun,
    streamMode: readonly string[],
  ): AsyncGenerator<GraphStreamChunk> {
    const chunks = await prepared.graph.stream(prepared.input, {
      ...prepared.config,
      streamMode: [...streamMode],
      subgraphs: true,
    });
    for await (const chunk of chunks) yield chunk as GraphStreamChunk;
  }

  async function finish({ threadId, runId, startedAt, outcome }: PreparedRun): Promise<RunResult> {
    outcome.status = "success";
    const state = await readThreadState(saver.saver, threadId);
    const last = state.messages.at(-1);
    return {
      threadId,
      runId,
      output: last?.getType() === "ai" ? messageText(last) : "",
      messages: state.messages,
      subagentRuns: state.subagentRuns,
      // Records of this run are the ones started since it began (earlier runs had finished).
      subagentUsage: addUsage(
        state.subagentRuns.filter((run) => run.started_at >= startedAt).map((run) => run.usage),
      ),
    };
  }

  /**
   * What a failed run throws. A cancelled one (its signal fired) first gets its thread repaired
   * (unanswered calls answered, cancelled children recorded), then becomes `RUN_CANCELLED`.
   */
  async function failure(prepared: PreparedRun, error: unknown): Promise<unknown> {
    if (!prepared.config.signal.aborted) {
      prepared.outcome.status = "error";
      return typedCause(error);
    }
    prepared.outcome.status = "interrupted";
    await repairCancelledTurn(prepared.graph, saver.saver, prepared.threadId, prepared.startedAt);
    return new SubagentGraphError(
      ErrorCode.Cancelled,
      `run ${prepared.runId} was cancelled; thread "${prepared.threadId}" is consistent and takes the next message`,
      { cause: error },
    );
  }

  /** Repository calls, refused once the runtime is closed. */
  const agents: AgentsApi = {
    create: async (uid, payload) => open().create(uid, payload),
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

    async run(request) {
      const prepared = await prepareRun(request);
      try {
        await prepared.graph.invoke(prepared.input, prepared.config);
        return await finish(prepared);
      } catch (error) {
        throw await failure(prepared, error);
      } finally {
        await prepared.release(prepared.outcome.status);
      }
    },

    async *stream(request) {
      const prepared = await prepareRun(request);
      try {
        yield {
          type: "run_started",
          runId: prepared.runId,
          threadId: prepared.threadId,
          agent: prepared.record.slug,
        };
        for await (const chunk of graphChunks(prepared, ["updates", "messages", "custom"])) {
          for (const event of translateChunk(prepared.threadId, chunk)) yield event;
        }
        yield { type: "run_finished", result: await finish(prepared) };
      } catch (error) {
        throw await failure(prepared, error);
      } finally {
        await prepared.release(prepared.outcome.status);
      }
    },

    async *streamChunks(request, streamMode) {
      const prepared = await prepareRun(request);
      try {
        yield {
          kind: "started",
          runId: prepared.runId,
          threadId: prepared.threadId,
          agentId: prepared.record.id,
        };
        for await (const chunk of graphChunks(prepared, streamMode)) yield { kind: "chunk", chunk };
        yield { kind: "finished", result: await finish(prepared) };
      } catch (error) {
        throw await failure(prepared, error);
      } finally {
        await prepared.release(prepared.outcome.status);
      }
    },

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
      return runRows.get(uid, runId);
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

/**
 * The first of our typed errors in `error`'s cause chain, else `error`: langchain wraps what a
 * model or middleware throws (`MiddlewareError`), which would hide the code callers switch on.
 */
function typedCause(error: unknown): unknown {
  let current: unknown = error;
  for (let depth = 0; current !== undefined && depth < 10; depth += 1) {
    if (SubagentGraphError.isInstance(current) && !isLangchainWrapper(current)) return current;
    current = (current as { cause?: unknown } | null)?.cause;
  }
  return error;
}

function isLangchainWrapper(error: unknown): boolean {
  return (error as { "~brand"?: unknown })["~brand"] === "MiddlewareError";
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

function validateThreadId(threadId: string): void {
  if (!THREAD_ID_PATTERN.test(threadId)) {
    throw new SubagentGraphError(
      ErrorCode.InvalidThreadId,
      `thread id ${JSON.stringify(threadId.slice(0, 80))} is invalid: use 1-160 letters, digits, "_" or "-", starting with a letter or digit (or omit it for a new thread)`,
      { field: "threadId" },
    );
  }
  if (isChildThreadId(threadId)) {
    throw new SubagentGraphError(
      ErrorCode.InvalidThreadId,
      `thread id "${threadId}" has the shape of a subagent's child thread (<parent>_sub_<slug>_<hex>), which only the task tool creates: choose another id`,
      { field: "threadId" },
    );
  }
}
