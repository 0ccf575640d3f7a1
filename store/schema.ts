/**
 * Table shapes of the shared database, as Kysely sees them.
 *
 * Column types are the portable subset that SQLite and PostgreSQL store alike (see
 * `migrations.ts`): ids and timestamps are text, JSON documents are text, booleans are the
 * integers 0/1. Decoding into domain types (booleans, parsed JSON) belongs to each repository.
 */

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
  /** The agent the thread was started with. Not a foreign key: ownership outlives the agent. */
  agent_id: string;
  /** ISO-8601, UTC. */
  created_at: string;
  /** ISO-8601, UTC. */
  updated_at: string;
}

/** Every table of the shared database, keyed by table name. */
export interface DatabaseSchema {
  agents: AgentsTable;
  threads: ThreadsTable;
}
