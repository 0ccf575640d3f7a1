/**
 * The runtime's public contract: its options, requests and the APIs it returns
 * (implemented by `createRuntime` in `runtime.ts`, which re-exports these types).
 */

import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";
import type { Catalog } from "./agents/catalog.js";
import type { AgentRecord } from "./agents/schema.js";
import type { AgentGraph } from "./backends/registry.js";
import type { AgentPartsOptions } from "./graphs/agent-parts.js";
import type { KnowledgeBases } from "./knowledge/service.js";
import type { RecordedRequest } from "./models/model-request.js";
import type { AsyncTasksApi, ParentNotifier } from "./runs/async-tasks/service.js";
import type { Fleet } from "./runs/fleet.js";
import type { HealthApi } from "./runs/health.js";
import type { RunApi } from "./runs/run-api.js";
import type { RunEventLog } from "./runs/run-event-log.js";
import type { SkillInstallOptions, SkillSummary } from "./sandbox/skills/library.js";
import type { Database } from "./store/database.js";
import type { UserRepository } from "./store/users.js";
import type { FilesApi } from "./threads/files-api.js";
import type { ThreadsApi } from "./threads/thread-api.js";
import type { ThreadHistoryApi } from "./threads/thread-history.js";
import type { McpServerInfo } from "./tools/mcp/manager.js";

export type { Catalog } from "./agents/catalog.js";
export type { AgentPartsOptions } from "./graphs/agent-parts.js";
export type {
  EmbedderSettings,
  FileStatus,
  KbFileRecord,
  KnowledgeBaseRecord,
} from "./knowledge/schema.js";
export type {
  KbReadResult,
  KbSearchHit,
  KbSearchRequest,
  KbUpload,
  KbUploadResult,
} from "./knowledge/service.js";
export type { GraphStreamMode, RawRunItem, RunApi } from "./runs/run-api.js";
export type { RunRequest } from "./runs/run-lifecycle.js";
export type { FilesApi } from "./threads/files-api.js";
export type { ChildThreadView, ThreadHistoryApi } from "./threads/thread-history.js";

/**
 * Users and their API tokens, as the runtime hands them out (every call refused once it is
 * closed).
 */
export type UsersApi = Pick<
  UserRepository,
  "add" | "ensure" | "get" | "list" | "issueToken" | "authenticate" | "listTokens" | "revokeToken"
>;

/**
 * Knowledge bases (README "Knowledge bases"), every call on behalf of `uid` with the agents'
 * sharing rules: `create`/`list`/`get`/`update`/`delete`, `addFiles` (queued for indexing; per
 * file accepted or rejected), `listFiles`/`getFile` (with ingest status), `deleteFile`,
 * `search`, `read` (numbered lines), and `idle` (resolves when the ingest queue is empty).
 */
export type KnowledgeApi = Pick<KnowledgeBases, (typeof KNOWLEDGE_METHODS)[number]>;

/**
 * The members of the runtime's guarded surfaces: the methods of each repository or service it
 * exposes (`createRuntime` wraps each so it refuses once the runtime is closed).
 */
export const KNOWLEDGE_METHODS = [
  ...["create", "list", "get", "update", "delete"],
  ...["addFiles", "listFiles", "getFile", "deleteFile", "search", "read", "idle"],
] as const;
export const AGENTS_METHODS = [
  "create",
  "ensure",
  "get",
  "list",
  "update",
  "delete",
  "getDefault",
] as const;
export const USERS_METHODS = [
  ...["add", "ensure", "get", "list"],
  ...["issueToken", "authenticate", "listTokens", "revokeToken"],
] as const;
export const SKILLS_METHODS = ["list", "get", "install", "installFiles", "remove"] as const;
export const ASYNC_TASKS_METHODS = ["list", "get", "cancel", "update", "answer"] as const;

/** Options of {@link createRuntime}. Every field is optional: the defaults run offline. */
export interface RuntimeOptions extends AgentPartsOptions {
  /** Folder for the SQLite files (agents, checkpoints). Default `./data`. */
  dataDir?: string;
  /**
   * Where checkpoints go: `"sqlite"` (default, `<dataDir>/checkpoints.sqlite`), `"memory"`, or a
   * saver you own (it is not closed by `close()`). `"host"`: graphs are compiled without a
   * saver, for a server that brings its own (the LangGraph dev server); such a runtime only
   * hands out graphs ({@link Runtime.graph}) and refuses to run them itself, but runs its
   * agents' background tasks, whose children checkpoint to `<dataDir>/checkpoints.sqlite`
   * (PostgreSQL with `DATABASE_URL`).
   */
  checkpointer?: "sqlite" | "memory" | "postgres" | "host" | BaseCheckpointSaver;
  /**
   * The agent store: a SQLite file path, `":memory:"`, a `postgres://` URL, or an open
   * {@link Database} you own. Default: `DATABASE_URL` when set (PostgreSQL for the store and,
   * unless `checkpointer` says otherwise, for the checkpoints too), else `<dataDir>/agents.sqlite`.
   */
  database?: string | Database;
  /** Environment for model keys and limit defaults. Default `process.env`, read on each use. */
  env?: NodeJS.ProcessEnv;
  /** Where warnings go (dropped subagents, ignored settings). Default `console.warn`. */
  warn?: (message: string) => void;
  /** Largest upload {@link FilesApi.upload} accepts. Default 50 MiB. */
  maxUploadBytes?: number;
  /**
   * How long a run's hold on its thread lasts without renewal (it is renewed while the run
   * lives): after a process dies mid-run, another may resume the thread this much later.
   * Default `SUBAGENT_THREAD_LEASE_MS`, else 30 s.
   */
  threadLeaseMs?: number;
  /** Largest file a knowledge base accepts. Default 50 MiB. */
  maxKnowledgeFileBytes?: number;
  /**
   * Index knowledge base files in this process. Default true; false for a process that only
   * serves while others (sharing its PostgreSQL database) index: uploads wait in the queue.
   */
  knowledgeIngest?: boolean;
  /**
   * How long a file being indexed stays this process's without renewal (renewed after every
   * batch of chunks): if the process dies, another takes the file over this much later.
   * Default 60 s.
   */
  knowledgeLeaseMs?: number;
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

/** The library entry point: agents, runs and threads over one store and one saver. */
export interface Runtime extends RunApi, ThreadHistoryApi {
  /** Models, tools, skills and MCP servers agents can be configured with. */
  catalog(): Promise<Catalog>;
  agents: AgentsApi;
  /** Uploads and outputs of threads. */
  files: FilesApi;
  /** Skills agents can be given (`context.skills`). */
  skills: SkillsApi;
  /** Knowledge bases agents search (`context.knowledge_bases`). */
  kb: KnowledgeApi;
  /** MCP servers agents can be given (`context.mcp_servers`). */
  mcp: McpApi;
  /** Users and their API tokens (for the HTTP server and the CLI). */
  users: UsersApi;
  /** Threads: created ahead of runs, searched, and their LangGraph state. */
  threads: ThreadsApi;
  /**
   * Background tasks of threads (README "Background subagents"): a main agent's
   * `context.async_subagents` started with `start_async_task`, listed, read, cancelled,
   * steered and answered from outside the conversation.
   */
  asyncTasks: AsyncTasksApi & {
    /**
     * Who starts the run on a parent thread when a task ends and its agent has
     * `notify_parent: true`. Default: this runtime's `run`, once the thread is free. The HTTP
     * server puts it through its run service (a fleet's queue) so its clients see the run.
     */
    setParentNotifier(notifier: ParentNotifier): void;
  };
  /**
   * The compiled graph of `uid`'s chat agent (default: their default agent), as runs use it,
   * for hosting it elsewhere (the LangGraph dev server). `subagents` narrows its allow-list.
   */
  graph(
    uid: string,
    agent?: string,
    options?: { subagents?: readonly string[] },
  ): Promise<AgentGraph>;
  /**
   * What the model call that produced the AI message `messageId` was sent, when this runtime
   * made it with `recordModelRequests` on; undefined otherwise. `recordThread` reads it.
   */
  modelRequest(messageId: string): RecordedRequest | undefined;
  /** The saver in use (for tools that read checkpoints directly). */
  readonly checkpointer: BaseCheckpointSaver;
  /** Readiness (store and saver answer) and this process's run metrics (`GET /ready`, `/metrics`). */
  health: HealthApi;
  /**
   * Runs' event streams in the shared database, on PostgreSQL only: the HTTP server writes
   * each run's events there and streams, joins and replays from there the runs of other
   * processes. Undefined on SQLite (one process; its runs' events stay in its memory).
   */
  readonly runEvents: RunEventLog | undefined;
  /**
   * Queued runs shared by a fleet, on PostgreSQL only: the HTTP server queues its runs here and
   * its worker loop claims them (`--role`). Undefined on SQLite.
   */
  readonly fleet: Fleet | undefined;
  /**
   * Waits for nothing, closes the store and the saver it opened and the MCP connections (stdio
   * servers' processes end). Idempotent.
   */
  close(): Promise<void>;
}
