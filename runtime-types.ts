/**
 * The runtime's public contract: its options, requests and the APIs it returns
 * (implemented by `createRuntime` in `runtime.ts`, which re-exports these types).
 */

import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import type { BaseMessage } from "@langchain/core/messages";
import type { StructuredToolInterface } from "@langchain/core/tools";
import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";
import type { ProcessSettings } from "./agents/limits.js";
import type { AgentRecord } from "./agents/schema.js";
import type { AgentGraph } from "./backends/registry.js";
import type { SubagentRun } from "./middleware/subagent-runs.js";
import type { RecordedRequest } from "./models/model-request.js";
import type { GraphStreamChunk, RunEvent, RunResult } from "./runs/events.js";
import type { RunInfo } from "./runs/run-info.js";
import type { ThreadsApi } from "./runs/thread-api.js";
import type { ThreadCheckpoint } from "./runs/thread-state.js";
import type { FileToolLimits } from "./sandbox/limits.js";
import type { SkillInstallOptions, SkillSummary } from "./sandbox/skills/library.js";
import type { ThreadFileEntry } from "./sandbox/thread-files.js";
import type { Database } from "./store/database.js";
import type { StoredRunStatus } from "./store/runs.js";
import type { UserRepository } from "./store/users.js";
import type { McpServerConfig } from "./tools/mcp/config.js";
import type { McpServerInfo } from "./tools/mcp/manager.js";

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
  /**
   * Note what every model call is sent (system prompt, subagents listed, tools, input
   * messages), so `recordThread` can record a thread for a replay test that fails when any of
   * it changes. Kept in memory for the life of the runtime: switch it on in a recording script
   * or test, not in a server. Default false.
   */
  recordModelRequests?: boolean;
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
  /** Kept on the run's record (see {@link Runtime.runInfo}) for whoever lists the runs. */
  metadata?: Record<string, unknown>;
}

/** LangGraph stream modes {@link Runtime.streamChunks} passes through. */
export type GraphStreamMode = "values" | "updates" | "messages" | "custom";

/** What {@link Runtime.streamChunks} yields: a start, LangGraph's own chunks, then the result. */
export type RawRunItem =
  | { kind: "started"; runId: string; threadId: string; agentId: string; agentSlug: string }
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
  /**
   * Creates the agent, or brings `uid`'s agent with that slug to exactly this payload; writes
   * nothing (same version) when it already matches. For agents declared in code at start-up.
   */
  ensure(uid: string, payload: unknown): Promise<AgentRecord>;
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
  /**
   * A run's record, whichever process ran it: its thread, agent, status and the subagent
   * records it made (whatever its end). A run whose process stopped before it finished reads
   * `interrupted`, with `status_reason` saying so.
   */
  runInfo(uid: string, runId: string): Promise<RunInfo | undefined>;
  /**
   * The records of `uid`'s runs on `threadId` (as {@link runInfo} has them), newest first,
   * whichever process ran them; `status` keeps only those, `offset`/`limit` page (default all).
   *
   * @throws SubagentGraphError `NOT_FOUND` (field `thread_id`) when the thread is not `uid`'s.
   */
  listRuns(
    uid: string,
    threadId: string,
    options?: { status?: StoredRunStatus; limit?: number; offset?: number },
  ): Promise<RunInfo[]>;
  /**
   * What the model call that produced the AI message `messageId` was sent, when this runtime
   * made it with `recordModelRequests` on; undefined otherwise. `recordThread` reads it.
   */
  modelRequest(messageId: string): RecordedRequest | undefined;
  /** The saver in use (for tools that read checkpoints directly). */
  readonly checkpointer: BaseCheckpointSaver;
  /**
   * Waits for nothing, closes the store and the saver it opened and the MCP connections (stdio
   * servers' processes end). Idempotent.
   */
  close(): Promise<void>;
}
