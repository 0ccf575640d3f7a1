import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import SQLite from "better-sqlite3";
import { Kysely, type Migration, Migrator, SqliteDialect, sql } from "kysely";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openSqliteDatabase } from "../../store/database.js";
import { MIGRATIONS } from "../../store/migrations.js";
import { RunRepository } from "../../store/runs.js";
import { ThreadRepository } from "../../store/threads.js";
import { runRunStoreSuite } from "./runs-suite.js";

runRunStoreSuite("sqlite", () => openSqliteDatabase(":memory:"));

describe("migration 0006_run_runners_and_outcomes", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "runs-0006-"));
  });
  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it("keeps the runs of a file that ran up to 0005, without a runner and with no records", async () => {
    const file = join(dir, "old.sqlite");
    const old = new Kysely<unknown>({ dialect: new SqliteDialect({ database: new SQLite(file) }) });
    const earlier = MIGRATIONS.filter((entry) => entry.name < "0006");
    const migrated = await new Migrator({
      db: old,
      provider: {
        getMigrations: async (): Promise<Record<string, Migration>> =>
          Object.fromEntries(earlier.map(({ name, migration }) => [name, migration])),
      },
    }).migrateToLatest();
    expect(migrated.error).toBeUndefined();
    await sql`insert into runs (run_id, thread_id, owner_uid, agent_id, status, created_at, updated_at)
      values ('r1', 't1', 'alice', 'a1', 'running', '2025-01-01T00:00:00.000Z', '2025-01-01T00:00:00.000Z')`.execute(
      old,
    );
    await old.destroy();

    const database = await openSqliteDatabase(file);
    try {
      const runs = new RunRepository(database.db);
      expect(await runs.find("r1")).toMatchObject({
        status: "running",
        runner_pid: null,
        runner_pid_scope: null,
        status_reason: null,
        subagent_runs: "[]",
      });
      expect((await runs.running()).map((row) => row.run_id)).toEqual(["r1"]);
    } finally {
      await database.close();
    }
  });
});

describe("migration 0007_run_metadata_thread_deletion", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "runs-0007-"));
  });
  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it("keeps the runs and threads of a file that ran up to 0006: no metadata, none being deleted", async () => {
    const file = join(dir, "old.sqlite");
    const old = new Kysely<unknown>({ dialect: new SqliteDialect({ database: new SQLite(file) }) });
    const earlier = MIGRATIONS.filter((entry) => entry.name < "0007");
    const migrated = await new Migrator({
      db: old,
      provider: {
        getMigrations: async (): Promise<Record<string, Migration>> =>
          Object.fromEntries(earlier.map(({ name, migration }) => [name, migration])),
      },
    }).migrateToLatest();
    expect(migrated.error).toBeUndefined();
    await sql`insert into runs (run_id, thread_id, owner_uid, agent_id, status, created_at, updated_at)
      values ('r1', 't1', 'alice', 'a1', 'success', '2025-01-01T00:00:00.000Z', '2025-01-01T00:00:00.000Z')`.execute(
      old,
    );
    await sql`insert into threads (thread_id, owner_uid, agent_id, created_at, updated_at)
      values ('t1', 'alice', 'a1', '2025-01-01T00:00:00.000Z', '2025-01-01T00:00:00.000Z')`.execute(
      old,
    );
    await old.destroy();

    const database = await openSqliteDatabase(file);
    try {
      const runs = new RunRepository(database.db);
      expect((await runs.listForThread("alice", "t1")).map((row) => row.metadata)).toEqual(["{}"]);
      const threads = new ThreadRepository(database.db);
      expect(await threads.get("alice", "t1")).toMatchObject({ deleted_at: null });
      expect(await threads.deleting()).toEqual([]);
    } finally {
      await database.close();
    }
  });
});
