/**
 * Table shapes of the shared database, as Kysely sees them.
 *
 * Column types are the portable subset that SQLite and PostgreSQL store alike (see
 * `migrations.ts`): ids and timestamps are text, JSON documents are text, booleans are the
 * integers 0/1. Decoding into domain types (booleans, parsed JSON) belongs to each repository.
 */

import type { Generated } from "kysely";

/** One row of `agents`. The domain view is `AgentRecord` in `agents/schema.ts`. */
export interface AgentsTable {
  /** A UUID, unique across owners. */
  id: string;
  owner_uid: string;
  /** Unique per owner (index `agents_owner_uid_slug`). */
  slug: string;
  name: string;
  description: string;
  backend_id: string;
  /** 0 or 1. */
  is_subagent: number;
  /** 0 or 1. */
  is_default: number;
  /** JSON text of the share config. */
  share_config: string;
  /** JSON text of `{ context }`. */
  config_json: string;
  version: number;
  /** ISO-8601, UTC. */
  created_at: string;
  /** ISO-8601, UTC. */
  updated_at: string;
}

/**
 * One row of `threads`: who owns a thread id. Checkpoints live in the saver; this table only
 * says which user may use a thread, so a guessed thread id never reaches another user's history.
 */
export interface ThreadsTable {
  thread_id: string;
  owner_uid: string;
  /**
   * The agent the thread was started with; "" for a thread created without a run yet. Not a
   * foreign key: ownership outlives the agent.
   */
  agent_id: string;
  /** JSON text of the client's metadata (an object); "{}" by default. */
  metadata: Generated<string>;
  /** ISO-8601, UTC. */
  created_at: string;
  /** ISO-8601, UTC. */
  updated_at: string;
  /**
   * ISO-8601, UTC: when its deletion began; null for a live thread. A thread being deleted is
   * invisible and cannot be claimed again until its data is gone and the row with it (see
   * `threads/thread-delete.ts`).
   */
  deleted_at: Generated<string | null>;
}

/** One row of `users`: someone who may hold API tokens. The domain view is `UserRecord`. */
export interface UsersTable {
  /** Matches `USER_ID_PATTERN` (`store/users.ts`); the same uid agents and threads are owned by. */
  uid: string;
  display_name: string;
  /** ISO-8601, UTC. */
  created_at: string;
}

/**
 * One row of `tokens`: an API token of a user. Only the token's SHA-256 is stored; the token
 * itself is shown once, when it is issued.
 */
export interface TokensTable {
  /** `tok_` + 16 hex digits; safe to show and log. */
  id: string;
  /** The owner, a `users.uid`. Not a foreign key, like the other tables' owner columns. */
  uid: string;
  /** Lowercase hex SHA-256 of the token text; unique (index `tokens_token_hash`). */
  token_hash: string;
  label: string;
  /** ISO-8601, UTC. */
  created_at: string;
  /** ISO-8601, UTC; null until first used. Updated at most once a minute. */
  last_used_at: string | null;
  /** ISO-8601, UTC; null while the token is valid. */
  revoked_at: string | null;
}

/** One row of `runs`: a run of any process, so every process can report and cancel it. */
export interface RunsTable {
  run_id: string;
  thread_id: string;
  owner_uid: string;
  agent_id: string;
  /** "running", "success", "error" or "interrupted". */
  status: string;
  /** 1 once some process asked for the run to stop; the process running it polls this. */
  cancel_requested: Generated<number>;
  created_at: string;
  updated_at: string;
  /** The runtime instance running it (a random id per runtime); null on rows before 0006. */
  runner_instance: string | null;
  /** Host name of the process running it, for messages. */
  runner_host: string | null;
  /** Process id of the process running it. */
  runner_pid: number | null;
  /** Where that pid means something (`util/process-identity.ts`): only there can it be probed. */
  runner_pid_scope: string | null;
  /** When that process started, as the OS counts it ("" unknown): tells a reused pid apart. */
  runner_pid_start: string | null;
  /** Why the run ended so when it did not end by itself (its process stopped); else null. */
  status_reason: string | null;
  /** JSON text of the subagent records the run made (written when it ends); "[]" by default. */
  subagent_runs: Generated<string>;
  /** JSON text of the metadata its client gave the run (an object); "{}" by default. */
  metadata: Generated<string>;
  /** How many times a worker has started it (migration 0012); 1 for a run that never queued. */
  attempt: Generated<number>;
  /** JSON text of what a queued run was asked to do (`store/run-queue.ts`); null otherwise. */
  request: string | null;
  /** The thread's newest checkpoint id when the first attempt began ("" none); null before. */
  start_checkpoint_id: string | null;
  /** ISO-8601, UTC: when a worker first claimed it; null for a run that never queued or waits. */
  claimed_at: string | null;
  /** Attempts given back at a worker's shutdown (migration 0013): not failures. */
  handed_back: Generated<number>;
  /** JSON text of the background tasks the run started or saw move on (migration 0014). */
  async_tasks: Generated<string>;
}

/** One row of `async_tasks`: a background task (`store/async-tasks.ts`). */
export interface AsyncTasksTable {
  task_id: string;
  parent_thread_id: string;
  owner_uid: string;
  /** The main agent whose tool started it (its limits and allow-list apply). */
  agent_id: string;
  subagent_type: string;
  child_thread_id: string;
  description: string;
  /** One of `ASYNC_TASK_STATUSES` (`contract.ts`). */
  status: string;
  /** JSON text: the inputs it has yet to run, oldest first (`AsyncTaskInput[]`). */
  inputs: Generated<string>;
  updates: Generated<number>;
  /** Its child's final answer, whole. */
  result: string | null;
  error: string | null;
  /** JSON text of the pending approval (`PendingApproval`) while it waits; else null. */
  approval: string | null;
  cancel_requested: Generated<number>;
  /** How many times a process has claimed it. */
  attempt: Generated<number>;
  runner_instance: string | null;
  runner_host: string | null;
  runner_pid: number | null;
  runner_pid_scope: string | null;
  runner_pid_start: string | null;
  /** ISO-8601, UTC; while it runs, its process renews it; an expired one is taken over. */
  lease_until: string | null;
  /** Running time used so far, in ms (its wait for a person excluded). */
  ran_ms: Generated<number>;
  /** Its time limit when it started; null = none. */
  timeout_ms: number | null;
  /** 1: its end starts a run on the parent thread. */
  notify_parent: Generated<number>;
  created_at: string;
  updated_at: string;
  /** "" until it ends. */
  finished_at: Generated<string>;
}

/** One row of `thread_leases`: which run holds a thread, until when (renewed while it runs). */
export interface ThreadLeasesTable {
  thread_id: string;
  run_id: string;
  /** ISO-8601, UTC; an expired lease (its process died) can be taken over. */
  lease_until: string;
}

/** One row of `knowledge_bases`. The domain view is `KnowledgeBaseRecord` in `knowledge/`. */
export interface KnowledgeBasesTable {
  /** A UUID. */
  id: string;
  owner_uid: string;
  /** Unique per owner (index `knowledge_bases_owner_uid_name`). */
  name: string;
  description: string;
  /** JSON text of the share config (same rules as an agent's). */
  share_config: string;
  /** JSON text of the embedder settings (`{}`: full-text search only). */
  embedder: string;
  version: number;
  /** ISO-8601, UTC. */
  created_at: string;
  /** ISO-8601, UTC. */
  updated_at: string;
}

/** One row of `kb_files`: a file of a knowledge base and how far its ingest got. */
export interface KbFilesTable {
  /** A UUID. */
  id: string;
  kb_id: string;
  name: string;
  /** Lowercase hex SHA-256 of the bytes; unique per knowledge base. */
  content_hash: string;
  bytes: number;
  /** "txt", "md", "html", "pdf" or "docx". */
  format: string;
  /** "queued", "indexing", "indexed" or "error". */
  status: string;
  /** Why ingest failed (status "error"); else null. */
  error: string | null;
  chunk_count: Generated<number>;
  line_count: Generated<number>;
  /**
   * ISO-8601, UTC: while "indexing" (or its vectors are "embedding"), until when the process
   * doing it holds it.
   */
  lease_until: string | null;
  created_at: string;
  updated_at: string;
  /** Where its vectors are: "none", "pending", "embedding", "ready" or "error" (0009). */
  vectors: Generated<string>;
  /** Why embedding failed (vectors "error"); else null. */
  vectors_error: Generated<string | null>;
}

/** One row of `kb_file_contents`: the bytes uploaded, and the text extracted from them. */
export interface KbFileContentsTable {
  file_id: string;
  /** The bytes, base64-encoded. */
  content: string;
  text: string | null;
}

/** One row of `kb_chunks`: a span of lines of a file's text, the unit search returns. */
export interface KbChunksTable {
  id: Generated<number>;
  kb_id: string;
  file_id: string;
  /** Order within the file, from 0. */
  seq: number;
  /** First line of the chunk in the file's text, from 1. */
  line_start: number;
  /** Last line, inclusive. */
  line_end: number;
  text: string;
  /**
   * PostgreSQL only: the text as full-text search reads it (Chinese segmented), from which the
   * database derives its `tsv` column. SQLite keeps it in the `kb_chunks_fts` table instead.
   */
  search_text?: string;
}

/**
 * One row of `kb_chunk_vectors` (PostgreSQL only; SQLite keeps vectors in sqlite-vec tables):
 * a chunk's vector, unit length, as base64 of little-endian float32s.
 */
export interface KbChunkVectorsTable {
  chunk_id: number;
  kb_id: string;
  /** The embedder that made it (`embedderKey`): never mixed with another's in one search. */
  embedder_key: string;
  embedding: string;
}

/** Every table of the shared database, keyed by table name. */
export interface DatabaseSchema {
  agents: AgentsTable;
  threads: ThreadsTable;
  runs: RunsTable;
  async_tasks: AsyncTasksTable;
  thread_leases: ThreadLeasesTable;
  users: UsersTable;
  tokens: TokensTable;
  knowledge_bases: KnowledgeBasesTable;
  kb_files: KbFilesTable;
  kb_file_contents: KbFileContentsTable;
  kb_chunks: KbChunksTable;
  kb_chunk_vectors: KbChunkVectorsTable;
  change_counters: ChangeCountersTable;
  run_events: RunEventsTable;
}

/**
 * One row of `run_events` (migration 0011): one event of a run's stream as the API sends it, or
 * the marker of the run's end that the log writes last (`store/run-events.ts`).
 */
export interface RunEventsTable {
  run_id: string;
  /** The event's id in the run's stream (SSE `id`), from 0. */
  seq: number;
  thread_id: string;
  event: string;
  /** JSON text of the event's data. */
  data: string;
  /** ISO-8601, UTC. */
  created_at: string;
}

/** One row per counted table (migration 0010): how many writing statements (PostgreSQL) or written rows (SQLite) it has seen. */
export interface ChangeCountersTable {
  name: string;
  version: number;
}
