import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import SQLite from "better-sqlite3";
import { sql } from "kysely";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ErrorCode } from "../../errors.js";
import { openSqliteDatabase } from "../../store/database.js";
import { MIGRATIONS } from "../../store/migrations.js";
import { expectFailure } from "../agents/helpers.js";

describe("openSqliteDatabase", () => {
  let dir: string;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "store-db-"));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("numbers the migrations in order", () => {
    expect(MIGRATIONS.map((entry) => entry.name)).toEqual([
      "0001_agents",
      "0002_threads",
      "0003_users_tokens",
      "0004_thread_metadata",
      "0005_runs_and_leases",
      "0006_run_runners_and_outcomes",
      "0007_run_metadata_thread_deletion",
      "0008_knowledge_bases",
      "0009_knowledge_vectors",
      "0010_change_counters",
      "0011_run_events",
      "0012_run_queue",
      "0013_run_hand_backs",
      "0014_async_tasks",
    ]);
  });

  it("creates the parent folder, migrates and sets the pragmas", async () => {
    const database = await openSqliteDatabase(join(dir, "nested", "deeper", "app.sqlite"));
    try {
      expect(database.dialect).toBe("sqlite");
      const tables = await sql<{ name: string }>`
        select name from sqlite_master where type = 'table' and name in ('agents', 'threads')
        order by name`.execute(database.db);
      expect(tables.rows.map((row) => row.name)).toEqual(["agents", "threads"]);
      const journal = await sql<{ journal_mode: string }>`pragma journal_mode`.execute(database.db);
      expect(journal.rows[0]?.journal_mode).toBe("wal");
      const keys = await sql<{ foreign_keys: number }>`pragma foreign_keys`.execute(database.db);
      expect(keys.rows[0]?.foreign_keys).toBe(1);
      const busy = await sql<{ timeout: number }>`pragma busy_timeout`.execute(database.db);
      expect(busy.rows[0]?.timeout).toBe(5000);
    } finally {
      await database.close();
    }
  });

  it("runs each migration once: reopening the same file keeps the data", async () => {
    const file = join(dir, "app.sqlite");
    const first = await openSqliteDatabase(file);
    await first.db
      .insertInto("threads")
      .values({
        thread_id: "t1",
        owner_uid: "alice",
        agent_id: "a1",
        created_at: "2025-01-01T00:00:00.000Z",
        updated_at: "2025-01-01T00:00:00.000Z",
      })
      .execute();
    await first.close();

    const second = await openSqliteDatabase(file);
    try {
      const threads = await second.db.selectFrom("threads").select("thread_id").execute();
      expect(threads).toEqual([{ thread_id: "t1" }]);
      const applied = await sql<{ name: string }>`
        select name from kysely_migration order by name`.execute(second.db);
      expect(applied.rows.map((row) => row.name)).toEqual([
        "0001_agents",
        "0002_threads",
        "0003_users_tokens",
        "0004_thread_metadata",
        "0005_runs_and_leases",
        "0006_run_runners_and_outcomes",
        "0007_run_metadata_thread_deletion",
        "0008_knowledge_bases",
        "0009_knowledge_vectors",
        "0010_change_counters",
        "0011_run_events",
        "0012_run_queue",
        "0013_run_hand_backs",
        "0014_async_tasks",
      ]);
    } finally {
      await second.close();
    }
  });

  it("names the failed migration and leaves the file as it was", async () => {
    const file = join(dir, "clash.sqlite");
    const raw = new SQLite(file);
    raw.exec("create table agents (something text)");
    raw.close();

    const error = await expectFailure(openSqliteDatabase(file), ErrorCode.Internal);
    expect(error.message).toContain('migration "0001_agents" failed');

    const after = new SQLite(file, { readonly: true });
    try {
      const names = after
        .prepare("select name from sqlite_master where type = 'table' order by name")
        .pluck()
        .all();
      // The failed run is rolled back whole: no migration bookkeeping, no threads table.
      expect(names).toEqual(["agents"]);
    } finally {
      after.close();
    }
  });

  it("fails with INTERNAL naming the file when it cannot be opened", async () => {
    // A folder where the database file should be.
    const error = await expectFailure(openSqliteDatabase(dir), ErrorCode.Internal);
    expect(error.message).toContain(dir);
  });

  it("opens an in-memory database and closes it more than once", async () => {
    const database = await openSqliteDatabase(":memory:");
    const agents = await database.db.selectFrom("agents").select("id").execute();
    expect(agents).toEqual([]);
    await database.close();
    await expect(database.close()).resolves.toBeUndefined();
  });
});
