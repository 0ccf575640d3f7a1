import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import SQLite from "better-sqlite3";
import { Kysely, type Migration, Migrator, SqliteDialect, sql } from "kysely";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type Database, openSqliteDatabase } from "../../store/database.js";
import { MIGRATIONS } from "../../store/migrations.js";
import { UserRepository } from "../../store/users.js";
import { runUserStoreSuite } from "./users-suite.js";

describe("migration 0003_users_tokens", () => {
  let dir: string;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "store-users-"));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  async function tablesAndIndexes(database: Database) {
    const result = await sql<{ type: string; name: string }>`
      select type, name from sqlite_master
      where tbl_name in ('users', 'tokens') and name not like 'sqlite_autoindex%'
      order by type, name`.execute(database.db);
    return result.rows.map((row) => `${row.type}:${row.name}`);
  }

  it("is the third migration and creates both tables and their indexes on a fresh file", async () => {
    expect(MIGRATIONS[2]?.name).toBe("0003_users_tokens");
    const database = await openSqliteDatabase(join(dir, "fresh.sqlite"));
    try {
      expect(await tablesAndIndexes(database)).toEqual([
        "index:tokens_token_hash",
        "index:tokens_uid",
        "table:tokens",
        "table:users",
      ]);
      const unique = await sql<{ unique: number }>`
        select "unique" from pragma_index_list('tokens') where name = 'tokens_token_hash'`.execute(
        database.db,
      );
      expect(unique.rows[0]?.unique).toBe(1);
    } finally {
      await database.close();
    }
  });

  it("applies on a file that already ran 0001 and 0002, keeping its data", async () => {
    const file = join(dir, "old.sqlite");
    const old = new Kysely<unknown>({ dialect: new SqliteDialect({ database: new SQLite(file) }) });
    const earlier = MIGRATIONS.filter((entry) => entry.name < "0003");
    expect(earlier.map((entry) => entry.name)).toEqual(["0001_agents", "0002_threads"]);
    const migrated = await new Migrator({
      db: old,
      provider: {
        getMigrations: async (): Promise<Record<string, Migration>> =>
          Object.fromEntries(earlier.map(({ name, migration }) => [name, migration])),
      },
    }).migrateToLatest();
    expect(migrated.error).toBeUndefined();
    await sql`insert into threads values ('t1', 'alice', 'a1', '2025-01-01T00:00:00.000Z', '2025-01-01T00:00:00.000Z')`.execute(
      old,
    );
    await old.destroy();

    const database = await openSqliteDatabase(file);
    try {
      const applied = await sql<{ name: string }>`
        select name from kysely_migration order by name`.execute(database.db);
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
      // 0004 gives the old thread row the default metadata.
      expect(
        await database.db.selectFrom("threads").select(["thread_id", "metadata"]).execute(),
      ).toEqual([{ thread_id: "t1", metadata: "{}" }]);
      const users = new UserRepository(database.db);
      await users.add("alice");
      const { token } = await users.issueToken("alice");
      expect(await users.authenticate(token)).toBe("alice");
    } finally {
      await database.close();
    }
  });
});

runUserStoreSuite("sqlite", () => openSqliteDatabase(":memory:"));
