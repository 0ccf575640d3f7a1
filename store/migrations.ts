/**
 * Versioned schema migrations, shared by every dialect.
 *
 * The list is the schema's history: its order is the version, names are `NNNN_topic`, and a
 * migration never changes once released (add a new one instead). Each takes `Kysely<unknown>`,
 * not today's `DatabaseSchema`, because it must keep compiling against the schema of its own
 * time. Only portable column types are used (text, integer) so the same list runs on SQLite and
 * PostgreSQL.
 */

import {
  type Kysely,
  type Migration,
  type MigrationProvider,
  Migrator,
  PostgresAdapter,
  sql,
} from "kysely";
import { ErrorCode, messageOf, SubagentGraphError } from "../errors.js";
import type { DatabaseSchema } from "./schema.js";

/** One entry of {@link MIGRATIONS}. */
export interface NamedMigration {
  readonly name: string;
  readonly migration: Migration;
}

/** Every migration, oldest first. Append only. */
export const MIGRATIONS: readonly NamedMigration[] = [
  {
    name: "0001_agents",
    migration: {
      async up(db: Kysely<unknown>): Promise<void> {
        await db.schema
          .createTable("agents")
          .addColumn("id", "text", (col) => col.primaryKey())
          .addColumn("owner_uid", "text", (col) => col.notNull())
          .addColumn("slug", "text", (col) => col.notNull())
          .addColumn("name", "text", (col) => col.notNull())
          .addColumn("description", "text", (col) => col.notNull())
          .addColumn("backend_id", "text", (col) => col.notNull())
          .addColumn("is_subagent", "integer", (col) => col.notNull())
          .addColumn("is_default", "integer", (col) => col.notNull())
          .addColumn("share_config", "text", (col) => col.notNull())
          .addColumn("config_json", "text", (col) => col.notNull())
          .addColumn("version", "integer", (col) => col.notNull())
          .addColumn("created_at", "text", (col) => col.notNull())
          .addColumn("updated_at", "text", (col) => col.notNull())
          .execute();
        // Also serves every "agents of this owner" query (owner_uid is its first column).
        await db.schema
          .createIndex("agents_owner_uid_slug")
          .on("agents")
          .columns(["owner_uid", "slug"])
          .unique()
          .execute();
      },
    },
  },
  {
    name: "0002_threads",
    migration: {
      async up(db: Kysely<unknown>): Promise<void> {
        await db.schema
          .createTable("threads")
          .addColumn("thread_id", "text", (col) => col.primaryKey())
          .addColumn("owner_uid", "text", (col) => col.notNull())
          .addColumn("agent_id", "text", (col) => col.notNull())
          .addColumn("created_at", "text", (col) => col.notNull())
          .addColumn("updated_at", "text", (col) => col.notNull())
          .execute();
        await db.schema
          .createIndex("threads_owner_uid")
          .on("threads")
          .column("owner_uid")
          .execute();
      },
    },
  },
  {
    name: "0003_users_tokens",
    migration: {
      async up(db: Kysely<unknown>): Promise<void> {
        await db.schema
          .createTable("users")
          .addColumn("uid", "text", (col) => col.primaryKey())
          .addColumn("display_name", "text", (col) => col.notNull())
          .addColumn("created_at", "text", (col) => col.notNull())
          .execute();
        await db.schema
          .createTable("tokens")
          .addColumn("id", "text", (col) => col.primaryKey())
          .addColumn("uid", "text", (col) => col.notNull())
          .addColumn("token_hash", "text", (col) => col.notNull())
          .addColumn("label", "text", (col) => col.notNull())
          .addColumn("created_at", "text", (col) => col.notNull())
          .addColumn("last_used_at", "text")
          .addColumn("revoked_at", "text")
          .execute();
        // Every authenticated request looks a token up by its hash.
        await db.schema
          .createIndex("tokens_token_hash")
          .on("tokens")
          .column("token_hash")
          .unique()
          .execute();
        await db.schema.createIndex("tokens_uid").on("tokens").column("uid").execute();
      },
    },
  },
  {
    name: "0004_thread_metadata",
    migration: {
      // Threads can now exist before their first run (LangGraph's `POST /threads`): they carry
      // client metadata, and `agent_id` is "" until a run binds an agent.
      async up(db: Kysely<unknown>): Promise<void> {
        await db.schema
          .alterTable("threads")
          .addColumn("metadata", "text", (col) => col.notNull().defaultTo("{}"))
          .execute();
      },
    },
  },
  {
    name: "0005_runs_and_leases",
    migration: {
      // Several processes share one database: a run's row lets any of them report it and ask
      // for its cancellation; a thread's lease lets one run at a time hold the thread.
      async up(db: Kysely<unknown>): Promise<void> {
        await db.schema
          .createTable("runs")
          .addColumn("run_id", "text", (col) => col.primaryKey())
          .addColumn("thread_id", "text", (col) => col.notNull())
          .addColumn("owner_uid", "text", (col) => col.notNull())
          .addColumn("agent_id", "text", (col) => col.notNull())
          .addColumn("status", "text", (col) => col.notNull())
          .addColumn("cancel_requested", "integer", (col) => col.notNull().defaultTo(0))
          .addColumn("created_at", "text", (col) => col.notNull())
          .addColumn("updated_at", "text", (col) => col.notNull())
          .execute();
        await db.schema.createIndex("runs_thread_id").on("runs").column("thread_id").execute();
        await db.schema
          .createTable("thread_leases")
          .addColumn("thread_id", "text", (col) => col.primaryKey())
          .addColumn("run_id", "text", (col) => col.notNull())
          .addColumn("lease_until", "text", (col) => col.notNull())
          .execute();
      },
    },
  },
  {
    name: "0006_run_runners_and_outcomes",
    migration: {
      // A run's row names the process running it (so another process on the same machine can
      // tell it died and reclaim its thread at once, `util/process-identity.ts`), why it ended
      // as it did when it did not end by itself, and the records of the subagents it ran (so a
      // failed, cancelled or crashed run still shows its finished children). SQLite adds one
      // column per statement.
      async up(db: Kysely<unknown>): Promise<void> {
        const columns: [string, "text" | "integer"][] = [
          ["runner_instance", "text"],
          ["runner_host", "text"],
          ["runner_pid", "integer"],
          ["runner_pid_scope", "text"],
          ["runner_pid_start", "text"],
          ["status_reason", "text"],
        ];
        for (const [name, type] of columns) {
          await db.schema.alterTable("runs").addColumn(name, type).execute();
        }
        await db.schema
          .alterTable("runs")
          .addColumn("subagent_runs", "text", (col) => col.notNull().defaultTo("[]"))
          .execute();
        // Every start looks for runs left running by a process that died.
        await db.schema.createIndex("runs_status").on("runs").column("status").execute();
      },
    },
  },
  {
    name: "0007_run_metadata_thread_deletion",
    migration: {
      // A run's row keeps the metadata its client gave it, so any process (and this one after a
      // restart) shows the run as it was created. A thread's row records when its deletion
      // began: the row is deleted last, and until then it hides the thread and keeps its id
      // from being claimed (`threads/thread-delete.ts`); every start finishes such deletions.
      async up(db: Kysely<unknown>): Promise<void> {
        await db.schema
          .alterTable("runs")
          .addColumn("metadata", "text", (col) => col.notNull().defaultTo("{}"))
          .execute();
        await db.schema.alterTable("threads").addColumn("deleted_at", "text").execute();
        await db.schema
          .createIndex("threads_deleted_at")
          .on("threads")
          .column("deleted_at")
          .execute();
      },
    },
  },
  {
    name: "0008_knowledge_bases",
    migration: {
      // Knowledge bases (README "Knowledge bases"): records shared like agents, their files
      // (with the uploaded bytes, so a queued file survives a restart and a reindex needs no
      // re-upload), and the chunks search reads. Full-text search is the one engine-specific
      // part: an FTS5 table on SQLite, a generated tsvector with a GIN index on PostgreSQL.
      async up(db: Kysely<unknown>): Promise<void> {
        const postgres = isPostgres(db);
        await db.schema
          .createTable("knowledge_bases")
          .addColumn("id", "text", (col) => col.primaryKey())
          .addColumn("owner_uid", "text", (col) => col.notNull())
          .addColumn("name", "text", (col) => col.notNull())
          .addColumn("description", "text", (col) => col.notNull())
          .addColumn("share_config", "text", (col) => col.notNull())
          .addColumn("embedder", "text", (col) => col.notNull())
          .addColumn("version", "integer", (col) => col.notNull())
          .addColumn("created_at", "text", (col) => col.notNull())
          .addColumn("updated_at", "text", (col) => col.notNull())
          .execute();
        await db.schema
          .createIndex("knowledge_bases_owner_uid_name")
          .on("knowledge_bases")
          .columns(["owner_uid", "name"])
          .unique()
          .execute();
        await db.schema
          .createTable("kb_files")
          .addColumn("id", "text", (col) => col.primaryKey())
          .addColumn("kb_id", "text", (col) => col.notNull())
          .addColumn("name", "text", (col) => col.notNull())
          .addColumn("content_hash", "text", (col) => col.notNull())
          .addColumn("bytes", "integer", (col) => col.notNull())
          .addColumn("format", "text", (col) => col.notNull())
          .addColumn("status", "text", (col) => col.notNull())
          .addColumn("error", "text")
          .addColumn("chunk_count", "integer", (col) => col.notNull().defaultTo(0))
          .addColumn("line_count", "integer", (col) => col.notNull().defaultTo(0))
          .addColumn("lease_until", "text")
          .addColumn("created_at", "text", (col) => col.notNull())
          .addColumn("updated_at", "text", (col) => col.notNull())
          .execute();
        // Same content twice in one knowledge base is one file (a re-upload is a no-op).
        await db.schema
          .createIndex("kb_files_kb_id_content_hash")
          .on("kb_files")
          .columns(["kb_id", "content_hash"])
          .unique()
          .execute();
        await db.schema.createIndex("kb_files_status").on("kb_files").column("status").execute();
        await db.schema
          .createTable("kb_file_contents")
          .addColumn("file_id", "text", (col) => col.primaryKey())
          // Base64: text like every other column, so both engines store and return it alike.
          .addColumn("content", "text", (col) => col.notNull())
          // The extracted text, once parsed: what `kb_read` shows, line by line.
          .addColumn("text", "text")
          .execute();
        await db.schema
          .createTable("kb_chunks")
          // An integer (`serial`, not `bigserial`, which `pg` hands back as a string): SQLite's
          // rowid, which the FTS5 table shares.
          .addColumn("id", postgres ? "serial" : "integer", (col) => col.primaryKey())
          .addColumn("kb_id", "text", (col) => col.notNull())
          .addColumn("file_id", "text", (col) => col.notNull())
          .addColumn("seq", "integer", (col) => col.notNull())
          .addColumn("line_start", "integer", (col) => col.notNull())
          .addColumn("line_end", "integer", (col) => col.notNull())
          .addColumn("text", "text", (col) => col.notNull())
          .execute();
        await db.schema
          .createIndex("kb_chunks_file_id_seq")
          .on("kb_chunks")
          .columns(["file_id", "seq"])
          .execute();
        await db.schema.createIndex("kb_chunks_kb_id").on("kb_chunks").column("kb_id").execute();
        if (postgres) {
          // The words to match, Chinese already segmented (`knowledge/segment.ts`); the
          // tsvector is derived by the database so it can never disagree with them.
          await sql`alter table kb_chunks add column search_text text not null default ''`.execute(
            db,
          );
          await sql`alter table kb_chunks add column tsv tsvector generated always as (to_tsvector('english', search_text)) stored`.execute(
            db,
          );
          await sql`create index kb_chunks_tsv on kb_chunks using gin (tsv)`.execute(db);
        } else {
          // rowid = kb_chunks.id. Porter stemming over unicode61 words: "flows" finds "flow".
          // `kb` holds one token naming the chunk's knowledge base (`knowledge/fts.ts`), so a
          // search of some knowledge bases scores only their chunks instead of every match.
          await sql`create virtual table kb_chunks_fts using fts5(search_text, kb, tokenize = 'porter unicode61')`.execute(
            db,
          );
        }
      },
    },
  },
  {
    name: "0009_knowledge_vectors",
    migration: {
      // Vectors of knowledge base chunks (README "Knowledge bases", `knowledge/vector-store.ts`).
      // Each file says where its vectors are (`vectors`: none, pending, embedding, ready, error),
      // so a reindex after an embedder change is a queue of its own while full-text search goes
      // on. SQLite keeps vectors in sqlite-vec `vec0` tables, one per dimension, made when first
      // needed (they need the extension loaded); PostgreSQL in `kb_chunk_vectors`, as base64
      // float32 text (portable types only: the search scans them from a per-process cache).
      async up(db: Kysely<unknown>): Promise<void> {
        await db.schema
          .alterTable("kb_files")
          .addColumn("vectors", "text", (col) => col.notNull().defaultTo("none"))
          .execute();
        await db.schema.alterTable("kb_files").addColumn("vectors_error", "text").execute();
        await db.schema.createIndex("kb_files_vectors").on("kb_files").column("vectors").execute();
        if (isPostgres(db)) {
          await db.schema
            .createTable("kb_chunk_vectors")
            .addColumn("chunk_id", "integer", (col) => col.primaryKey())
            .addColumn("kb_id", "text", (col) => col.notNull())
            .addColumn("embedder_key", "text", (col) => col.notNull())
            .addColumn("embedding", "text", (col) => col.notNull())
            .execute();
          await db.schema
            .createIndex("kb_chunk_vectors_kb_id")
            .on("kb_chunk_vectors")
            .column("kb_id")
            .execute();
        }
      },
    },
  },
  {
    name: "0010_change_counters",
    migration: {
      // A counter per rarely written table that the hot path reads on every run and task call
      // (`store/stamped-reads.ts`): its triggers count every write, whoever makes it (this
      // process, another one on the same database, a hand edit), in the writer's transaction.
      async up(db: Kysely<unknown>): Promise<void> {
        const counted = ["agents", "knowledge_bases"];
        await db.schema
          .createTable("change_counters")
          .addColumn("name", "text", (col) => col.primaryKey())
          .addColumn("version", "integer", (col) => col.notNull())
          .execute();
        await db
          .insertInto("change_counters" as never)
          .values(counted.map((name) => ({ name, version: 0 })) as never)
          .execute();
        if (isPostgres(db)) {
          // Once per statement: a write of many rows moves the counter once.
          await sql`create function subagent_graph_count_change() returns trigger language plpgsql as $$
            begin
              update change_counters set version = version + 1 where name = TG_TABLE_NAME;
              return null;
            end $$`.execute(db);
          for (const table of counted) {
            await sql`create trigger ${sql.id(`${table}_count_change`)} after insert or update or delete or truncate on ${sql.id(table)} for each statement execute function subagent_graph_count_change()`.execute(
              db,
            );
          }
          return;
        }
        // SQLite has row triggers only.
        for (const table of counted) {
          for (const event of ["insert", "update", "delete"] as const) {
            await sql`create trigger ${sql.id(`${table}_count_${event}`)} after ${sql.raw(event)} on ${sql.id(table)} begin update change_counters set version = version + 1 where name = ${sql.lit(table)}; end`.execute(
              db,
            );
          }
        }
      },
    },
  },
  {
    name: "0011_run_events",
    migration: {
      // The events of runs, so any process can stream or replay any run (`runs/run-event-log.ts`):
      // written in batches by the process running it, read by `seq`; a run's end is a row too.
      // Kept while the run is recent (pruned by the run's end), deleted with its thread.
      async up(db: Kysely<unknown>): Promise<void> {
        await db.schema
          .createTable("run_events")
          .addColumn("run_id", "text", (col) => col.notNull())
          .addColumn("seq", "integer", (col) => col.notNull())
          .addColumn("thread_id", "text", (col) => col.notNull())
          .addColumn("event", "text", (col) => col.notNull())
          .addColumn("data", "text", (col) => col.notNull())
          .addColumn("created_at", "text", (col) => col.notNull())
          .addPrimaryKeyConstraint("run_events_pk", ["run_id", "seq"])
          .execute();
        await db.schema
          .createIndex("run_events_thread_id")
          .on("run_events")
          .column("thread_id")
          .execute();
      },
    },
  },
  {
    name: "0012_run_queue",
    migration: {
      // Runs as queued jobs on PostgreSQL (`store/run-queue.ts`): a run is written `pending` with
      // what was asked (`request`), claimed by any worker (`attempt` counts the claims), and
      // resumed by another after its worker died; `start_checkpoint_id` is the thread's newest
      // checkpoint when its first attempt began, so a later attempt knows whether the run had
      // written anything yet ("" for a thread that had none); `claimed_at` when a worker first
      // claimed it (the run's start for every attempt, and its pickup time).
      async up(db: Kysely<unknown>): Promise<void> {
        await db.schema
          .alterTable("runs")
          .addColumn("attempt", "integer", (col) => col.notNull().defaultTo(1))
          .execute();
        await db.schema.alterTable("runs").addColumn("request", "text").execute();
        await db.schema.alterTable("runs").addColumn("start_checkpoint_id", "text").execute();
        await db.schema.alterTable("runs").addColumn("claimed_at", "text").execute();
        await db.schema
          .createIndex("runs_status_created_at")
          .on("runs")
          .columns(["status", "created_at"])
          .execute();
      },
    },
  },
  {
    name: "0013_run_hand_backs",
    migration: {
      // How many of a queued run's attempts were given back at a worker's shutdown
      // (`store/run-queue.ts`): those are not failures, so they do not count towards the
      // attempts after which a run whose worker keeps dying ends `error`.
      async up(db: Kysely<unknown>): Promise<void> {
        await db.schema
          .alterTable("runs")
          .addColumn("handed_back", "integer", (col) => col.notNull().defaultTo(0))
          .execute();
      },
    },
  },
  {
    name: "0014_async_tasks",
    migration: {
      // Background tasks (`store/async-tasks.ts`): a subagent run on its own child thread that
      // any process claims, renews by lease and hands over when its process dies; `inputs` are
      // the messages (or a decision on an approval) it has yet to run, oldest first.
      async up(db: Kysely<unknown>): Promise<void> {
        await db.schema
          .createTable("async_tasks")
          .addColumn("task_id", "text", (col) => col.primaryKey())
          .addColumn("parent_thread_id", "text", (col) => col.notNull())
          .addColumn("owner_uid", "text", (col) => col.notNull())
          .addColumn("agent_id", "text", (col) => col.notNull())
          .addColumn("subagent_type", "text", (col) => col.notNull())
          .addColumn("child_thread_id", "text", (col) => col.notNull())
          .addColumn("description", "text", (col) => col.notNull())
          .addColumn("status", "text", (col) => col.notNull())
          .addColumn("inputs", "text", (col) => col.notNull().defaultTo("[]"))
          .addColumn("updates", "integer", (col) => col.notNull().defaultTo(0))
          .addColumn("result", "text")
          .addColumn("error", "text")
          .addColumn("approval", "text")
          .addColumn("cancel_requested", "integer", (col) => col.notNull().defaultTo(0))
          .addColumn("attempt", "integer", (col) => col.notNull().defaultTo(0))
          .addColumn("runner_instance", "text")
          .addColumn("runner_host", "text")
          .addColumn("runner_pid", "integer")
          .addColumn("runner_pid_scope", "text")
          .addColumn("runner_pid_start", "text")
          .addColumn("lease_until", "text")
          .addColumn("ran_ms", "integer", (col) => col.notNull().defaultTo(0))
          .addColumn("timeout_ms", "integer")
          .addColumn("notify_parent", "integer", (col) => col.notNull().defaultTo(0))
          .addColumn("created_at", "text", (col) => col.notNull())
          .addColumn("updated_at", "text", (col) => col.notNull())
          .addColumn("finished_at", "text", (col) => col.notNull().defaultTo(""))
          .execute();
        await db.schema
          .createIndex("async_tasks_parent")
          .on("async_tasks")
          .column("parent_thread_id")
          .execute();
        await db.schema
          .createIndex("async_tasks_status")
          .on("async_tasks")
          .columns(["status", "updated_at"])
          .execute();
        // A run's record keeps the background tasks it started or saw move on, as it does its
        // `task` calls (`subagent_runs`).
        await db.schema
          .alterTable("runs")
          .addColumn("async_tasks", "text", (col) => col.notNull().defaultTo("[]"))
          .execute();
      },
    },
  },
];

/** True when `db` runs on PostgreSQL (the one place migrations need to know). */
function isPostgres(db: Kysely<unknown>): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}

/** Hands {@link MIGRATIONS} to Kysely's `Migrator` (no files: migrations ship inside the code). */
export const migrationProvider: MigrationProvider = {
  async getMigrations(): Promise<Record<string, Migration>> {
    return Object.fromEntries(MIGRATIONS.map(({ name, migration }) => [name, migration]));
  },
};

/**
 * Brings the schema up to the newest migration.
 *
 * Safe with several processes opening one database at once:
 * - SQLite: the caller holds `BEGIN IMMEDIATE` around this call (`openSqliteDatabase`), so a
 *   second process waits for the first and then finds nothing left to do.
 * - PostgreSQL: the caller holds the schema lock (`withSchemaLock` in `schema-lock.ts`,
 *   `openPostgresDatabase`), the advisory lock the checkpoint saver's setup takes too, so no
 *   schema step of another process runs meanwhile. Kysely's migrator is safe on its own as
 *   well: it creates its bookkeeping tables
 *   (`kysely_migration`, `kysely_migration_lock`) with `if not exists` and treats a creation
 *   that lost a race as success; then, on one connection, it takes a session-level
 *   `pg_advisory_lock` (advisory locks are per database), runs every pending migration in ONE
 *   transaction (PostgreSQL's DDL is transactional), commits, and only then unlocks. A
 *   waiting process reads the applied list after getting the lock, so each migration runs
 *   once, and a failed run leaves no migration half-applied. (Tested by racing openers in
 *   `test/store/database.postgres.test.ts`.) A pooler in transaction mode (PgBouncer) breaks
 *   session locks: migrate through a direct connection there.
 *
 * Kysely's migrator reports failures instead of throwing; this turns them into a
 * {@link SubagentGraphError} with code `INTERNAL` naming the migration that failed (a broken
 * schema is never the caller's fault).
 */
export async function migrateToLatest(db: Kysely<DatabaseSchema>): Promise<void> {
  const { error, results } = await new Migrator({
    db,
    provider: migrationProvider,
  }).migrateToLatest();
  if (error === undefined) return;
  const failed = results?.find((result) => result.status === "Error")?.migrationName;
  const reason = messageOf(error);
  const what =
    failed === undefined
      ? "the database schema could not be migrated (before any migration ran)"
      : `migration "${failed}" failed`;
  throw new SubagentGraphError(
    ErrorCode.Internal,
    `${what}: ${reason}; the database may belong to a newer or damaged install: restore a backup or use a new file`,
    { cause: error },
  );
}
