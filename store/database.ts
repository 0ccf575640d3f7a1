/**
 * Opening the shared database.
 *
 * Every opener returns the same {@link Database} shape with the schema already migrated, so
 * repositories never know which engine is underneath. The engine-specific part of each opener
 * (driver, pragmas, pool, how migrations are made atomic) stays inside it; both share
 * {@link migrateToLatest}. {@link openDatabase} picks the opener from the target's shape.
 */

import { dirname } from "node:path";
import SQLite from "better-sqlite3";
import { Kysely, PostgresDialect, SqliteDialect, sql } from "kysely";
import pg from "pg";
import * as sqliteVec from "sqlite-vec";
import { ErrorCode, messageOf, SubagentGraphError } from "../errors.js";
import { freshSharedRead } from "../util/fresh-shared-read.js";
import { makeDirectorySync } from "../util/make-directory.js";
import { survivePoolClientErrors } from "../util/pg-client-errors.js";
import { withStatementCache } from "../util/sqlite-statement-cache.js";
import { migrateToLatest } from "./migrations.js";
import { type Notifications, pgNotifications } from "./pg-notifications.js";
import type { DatabaseSchema } from "./schema.js";
import { withSchemaLock } from "./schema-lock.js";

/** The SQL engines the store runs on. */
export type DialectName = "sqlite" | "postgres";

/** An open, migrated database. */
export interface Database {
  readonly db: Kysely<DatabaseSchema>;
  readonly dialect: DialectName;
  /**
   * The change counters of migration 0010 as one string, which differs after any write to the
   * agents or knowledge bases (see `store/stamped-reads.ts`). Synchronous on SQLite.
   */
  changeStamp(): string | Promise<string>;
  /**
   * LISTEN/NOTIFY between the processes sharing the database: PostgreSQL only (one SQLite
   * database serves one process's runs).
   */
  readonly notifications?: Notifications;
  /** Closes the connection(s). Safe to call more than once. */
  close(): Promise<void>;
}

/** A `postgres://` or `postgresql://` URL (the scheme is case-insensitive, as in any URL). */
const POSTGRES_URL = /^postgres(?:ql)?:\/\//i;

/** Options of {@link openPostgresDatabase}. */
export interface PostgresOptions {
  /** Most connections the pool opens at once; default 10. */
  max?: number;
}

/** Pool defaults: enough for one server process without exhausting a small PostgreSQL. */
const POOL_MAX = 10;
/** An idle connection is closed after this long, so a quiet process holds no connections. */
const POOL_IDLE_TIMEOUT_MS = 30_000;
/** Waiting longer than this for a connection (server down, pool exhausted) fails the query. */
const POOL_CONNECTION_TIMEOUT_MS = 10_000;

/** Milliseconds a writer waits for another process's lock before failing with SQLITE_BUSY. */
const BUSY_TIMEOUT_MS = 5000;

/**
 * Opens (creating if needed) a SQLite database file and migrates it to the latest schema.
 *
 * @param file a path (its parent folder is created) or `":memory:"`.
 * @throws SubagentGraphError `INTERNAL` when the file cannot be opened or a migration fails
 *   (the message names the migration; the file is left as it was before the attempt).
 * @example
 * const database = await openSqliteDatabase("data/app.sqlite");
 * try { … } finally { await database.close(); }
 */
export async function openSqliteDatabase(file: string): Promise<Database> {
  const sqlite = openSqliteFile(file);
  const db = new Kysely<DatabaseSchema>({
    dialect: new SqliteDialect({ database: withStatementCache(sqlite) }),
  });
  try {
    // Kysely runs SQLite migrations outside a transaction (its adapter reports no
    // transactional DDL), but SQLite's DDL is transactional. One IMMEDIATE transaction around
    // the migrator makes a failed migration leave nothing behind, and makes a second process
    // opening the same file wait (busy_timeout) and then find the work done instead of
    // racing to create the same tables.
    sqlite.exec("BEGIN IMMEDIATE");
    try {
      await migrateToLatest(db);
      sqlite.exec("COMMIT");
    } catch (error) {
      if (sqlite.inTransaction) sqlite.exec("ROLLBACK");
      throw error;
    }
  } catch (error) {
    await db.destroy();
    throw error;
  }
  // Read on the raw connection, without a wait: every run and task call reads it (see
  // `store/stamped-reads.ts`). Inside another caller's open transaction it may see that
  // transaction's count, which only makes a read load again sooner.
  const counters = sqlite.prepare<[], CounterRow>(COUNTERS_SQL);
  return withClose(db, "sqlite", () => stampOf(counters.all()));
}

/**
 * Opens the database `target` names: a PostgreSQL URL (`postgres://…` or `postgresql://…`)
 * with {@link openPostgresDatabase}, anything else as a SQLite file with
 * {@link openSqliteDatabase}.
 *
 * @example
 * const database = await openDatabase(process.env.DATABASE_URL ?? "data/agents.sqlite");
 */
export function openDatabase(target: string): Promise<Database> {
  return POSTGRES_URL.test(target) ? openPostgresDatabase(target) : openSqliteDatabase(target);
}

/**
 * Connects a pool to the PostgreSQL database at `url` and migrates it to the latest schema.
 * Several processes may open the same database at once: migrations run once, under the schema
 * lock (`withSchemaLock` in `schema-lock.ts`, see {@link migrateToLatest}).
 *
 * Nothing this reports contains the password: the URL is shown masked
 * (`postgres://user:***@host/db`).
 *
 * @param url `postgres://user:password@host:port/database` (any libpq-style query options
 *   that `pg` understands, such as `?sslmode=require`, pass through).
 * @throws SubagentGraphError `INTERNAL` when the URL is malformed, the server cannot be
 *   reached or refuses the login (the message names the masked URL), or a migration fails.
 * @example
 * const database = await openPostgresDatabase("postgres://app:secret@db:5432/app");
 * try { … } finally { await database.close(); }
 */
export async function openPostgresDatabase(
  url: string,
  options: PostgresOptions = {},
): Promise<Database> {
  const shown = maskPassword(url);
  const scrub = scrubberFor(url);
  const pool = new pg.Pool({
    connectionString: url,
    max: options.max ?? POOL_MAX,
    idleTimeoutMillis: POOL_IDLE_TIMEOUT_MS,
    connectionTimeoutMillis: POOL_CONNECTION_TIMEOUT_MS,
  });
  // An idle connection that breaks (server restart, network) is reported here; without a
  // listener the pool's `error` event would crash the process. The pool drops that
  // connection and opens a new one when one is next needed.
  pool.on("error", (error) => {
    console.warn(
      `[subagent-graph] PostgreSQL database "${shown}": an idle connection failed and was dropped: ${scrub(error.message)}`,
    );
  });
  survivePoolClientErrors(pool);
  const db = new Kysely<DatabaseSchema>({ dialect: new PostgresDialect({ pool }) });
  try {
    try {
      // `pg` parses the URL here, so a malformed one fails here too.
      (await pool.connect()).release();
    } catch (error) {
      throw connectionFailed(shown, scrub, error);
    }
    try {
      // Under the schema lock every process's checkpoint setup also takes (see schema-lock.ts).
      await withSchemaLock(pool.options, () => migrateToLatest(db));
    } catch (error) {
      // The lock's own connection failing is a connection failure like the pool's.
      throw SubagentGraphError.isInstance(error) ? error : connectionFailed(shown, scrub, error);
    }
  } catch (error) {
    await db.destroy();
    throw error;
  }
  const notifications = pgNotifications(
    pool,
    (message) => console.warn(`[subagent-graph] PostgreSQL database "${shown}": ${message}`),
    (error) => scrub(messageOf(error)),
  );
  return withClose(
    db,
    "postgres",
    // Every run and `task` call reads the stamp: concurrent ones share a query (never one sent
    // before they asked, so a kept read is still never stale).
    freshSharedRead(async () =>
      stampOf((await sql<CounterRow>`${sql.raw(COUNTERS_SQL)}`.execute(db)).rows),
    ),
    notifications,
  );
}

function connectionFailed(
  shown: string,
  scrub: (text: string) => string,
  error: unknown,
): SubagentGraphError {
  if (Reflect.get(Object(error), "code") === "ERR_INVALID_URL") {
    // No cause: a URL error may carry its input, password included.
    return new SubagentGraphError(
      ErrorCode.Internal,
      `cannot open PostgreSQL database "${shown}": the URL is malformed; use postgres://user:password@host:port/database (percent-encode special characters in the password)`,
    );
  }
  const reason = messageOf(error);
  return new SubagentGraphError(
    ErrorCode.Internal,
    `cannot connect to PostgreSQL database "${shown}": ${scrub(reason)}; check that the server is running and that the URL's host, port, user, password and database are right`,
    { cause: error },
  );
}

/**
 * `url` with its password (in the user info or a `password` query option) replaced by `***`,
 * for messages and logs. A URL that does not parse is masked from its first `:` after the
 * user name to its last `@`, which covers every place a password could be.
 */
export function maskPassword(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password !== "") parsed.password = "***";
    if (parsed.searchParams.has("password")) parsed.searchParams.set("password", "***");
    return parsed.toString();
  } catch {
    const start = url.indexOf("://") + 3;
    const at = url.lastIndexOf("@");
    const colon = url.indexOf(":", start);
    return start >= 3 && colon !== -1 && colon < at
      ? `${url.slice(0, colon + 1)}***${url.slice(at)}`
      : url.replace(/password=[^&]*/gi, "password=***");
  }
}

/** Removes `url`'s password from driver messages, should one ever quote it. */
function scrubberFor(url: string): (text: string) => string {
  const secrets: string[] = [];
  try {
    const parsed = new URL(url);
    secrets.push(parsed.password, parsed.searchParams.get("password") ?? "");
    secrets.push(decodeURIComponent(parsed.password));
  } catch {
    // A malformed URL never reaches the driver; a malformed escape is scrubbed as written.
  }
  const present = secrets.filter((secret) => secret !== "");
  return (text) => present.reduce((scrubbed, secret) => scrubbed.split(secret).join("***"), text);
}

function openSqliteFile(file: string): SQLite.Database {
  try {
    if (file !== ":memory:" && file !== "") makeDirectorySync(dirname(file));
    const sqlite = new SQLite(file);
    // WAL lets readers in other processes work while one writes; it must be set outside a
    // transaction, so it comes before the migration's BEGIN.
    sqlite.pragma("journal_mode = WAL");
    sqlite.pragma("foreign_keys = ON");
    sqlite.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    loadVectorExtension(sqlite);
    return sqlite;
  } catch (error) {
    const reason = messageOf(error);
    throw new SubagentGraphError(
      ErrorCode.Internal,
      `cannot open SQLite database "${file}": ${reason}; check that the path is a writable file`,
      { cause: error },
    );
  }
}

/**
 * Loads sqlite-vec (`vec0` tables: knowledge base vectors, `knowledge/sqlite-vectors.ts`) into
 * the connection. A platform without its prebuilt library still opens the database: only
 * knowledge bases with an embedder fail, with an error saying so, when they store vectors.
 */
function loadVectorExtension(sqlite: SQLite.Database): void {
  try {
    sqliteVec.load(sqlite);
  } catch {
    // Reported where vectors are written (the vec0 table cannot be made).
  }
}

/** Reads migration 0010's change counters. */
const COUNTERS_SQL = "select name, version from change_counters order by name";

interface CounterRow {
  name: string;
  version: number | string;
}

function stampOf(rows: readonly CounterRow[]): string {
  return rows.map((row) => `${row.name}:${row.version}`).join(",");
}

function withClose(
  db: Kysely<DatabaseSchema>,
  dialect: DialectName,
  changeStamp: () => string | Promise<string>,
  notifications?: Notifications,
): Database {
  let closing: Promise<void> | undefined;
  return {
    db,
    dialect,
    changeStamp,
    ...(notifications ? { notifications } : {}),
    close: () => {
      closing ??= (async () => {
        await notifications?.close();
        await db.destroy();
      })();
      return closing;
    },
  };
}
