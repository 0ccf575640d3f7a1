/**
 * Opening the shared database.
 *
 * Every opener returns the same {@link Database} shape with the schema already migrated, so
 * repositories never know which engine is underneath. The engine-specific part of each opener
 * (driver, pragmas, how migrations are made atomic) stays inside it; a PostgreSQL opener
 * belongs beside {@link openSqliteDatabase} and shares {@link migrateToLatest}.
 */

import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import SQLite from "better-sqlite3";
import { Kysely, SqliteDialect } from "kysely";
import { ErrorCode, SubagentGraphError } from "../errors.js";
import { migrateToLatest } from "./migrations.js";
import type { DatabaseSchema } from "./schema.js";

/** The SQL engines the store runs on. */
export type DialectName = "sqlite" | "postgres";

/** An open, migrated database. */
export interface Database {
  readonly db: Kysely<DatabaseSchema>;
  readonly dialect: DialectName;
  /** Closes the connection(s). Safe to call more than once. */
  close(): Promise<void>;
}

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
  const db = new Kysely<DatabaseSchema>({ dialect: new SqliteDialect({ database: sqlite }) });
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
  return withClose(db, "sqlite");
}

function openSqliteFile(file: string): SQLite.Database {
  try {
    if (file !== ":memory:" && file !== "") mkdirSync(dirname(file), { recursive: true });
    const sqlite = new SQLite(file);
    // WAL lets readers in other processes work while one writes; it must be set outside a
    // transaction, so it comes before the migration's BEGIN.
    sqlite.pragma("journal_mode = WAL");
    sqlite.pragma("foreign_keys = ON");
    sqlite.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    return sqlite;
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new SubagentGraphError(
      ErrorCode.Internal,
      `cannot open SQLite database "${file}": ${reason}; check that the path is a writable file`,
      { cause: error },
    );
  }
}

function withClose(db: Kysely<DatabaseSchema>, dialect: DialectName): Database {
  let closing: Promise<void> | undefined;
  return {
    db,
    dialect,
    close: () => {
      closing ??= db.destroy();
      return closing;
    },
  };
}
