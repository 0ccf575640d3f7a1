import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Kysely, type Migration, Migrator, PostgresDialect, sql } from "kysely";
import pg from "pg";
import { afterAll, afterEach, beforeAll, describe, expect, inject, it, vi } from "vitest";
import { ErrorCode, type SubagentGraphError } from "../../errors.js";
import {
  type Database,
  maskPassword,
  openDatabase,
  openPostgresDatabase,
} from "../../store/database.js";
import { MIGRATIONS } from "../../store/migrations.js";
import { expectFailure } from "../agents/helpers.js";
import { createTestDatabase } from "../support/postgres-cluster.js";
import { until } from "../support/until.js";

const clusterUrl = inject("postgresUrl");
const migrationNames = MIGRATIONS.map((entry) => entry.name);

/** Runs `query` on its own connection to `url`. */
async function queryAt<R extends pg.QueryResultRow>(
  url: string,
  query: string,
  values: unknown[] = [],
): Promise<R[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<R>(query, values)).rows;
  } finally {
    await client.end();
  }
}

/** Runs `query` on the cluster's `postgres` database (never on a database under test). */
function onCluster<R extends pg.QueryResultRow>(query: string, values: unknown[] = []) {
  return queryAt<R>(clusterUrl, query, values);
}

/** The name of the database `url` points at. */
function databaseName(url: string): string {
  return new URL(url).pathname.slice(1);
}

/** How many connections are open to the database at `url`. */
async function connectionsTo(url: string): Promise<number> {
  const rows = await onCluster<{ count: number }>(
    "select count(*)::int as count from pg_stat_activity where datname = $1",
    [databaseName(url)],
  );
  return rows[0]?.count ?? 0;
}

/** Waits until no connection to `url` is left (a closed socket's backend exits shortly after). */
async function untilNoConnections(url: string): Promise<void> {
  const deadline = Date.now() + 5_000;
  while ((await connectionsTo(url)) > 0) {
    if (Date.now() > deadline) throw new Error(`connections to ${url} stayed open`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** The migrations recorded as applied, in the order they ran. */
async function appliedMigrations(database: Database): Promise<string[]> {
  const result = await sql<{ name: string }>`
    select name from kysely_migration order by timestamp, name`.execute(database.db);
  return result.rows.map((row) => row.name);
}

/** The same `url` with a user and password in it (trust auth ignores the password). */
function withPassword(url: string, password: string): string {
  const parsed = new URL(url);
  parsed.password = password;
  return parsed.toString();
}

describe("openPostgresDatabase", () => {
  const opened: Database[] = [];
  const urls = new Map<Database, string>();
  async function open(url: string, options?: { max?: number }): Promise<Database> {
    const database = await openPostgresDatabase(url, options);
    opened.push(database);
    urls.set(database, url);
    return database;
  }
  function urlOf(database: Database): string {
    const url = urls.get(database);
    if (url === undefined) throw new Error("a database this test did not open");
    return url;
  }
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((database) => database.close()));
    vi.restoreAllMocks();
  });

  it("applies every migration, in order, on a fresh database, with portable column types", async () => {
    const database = await open(await createTestDatabase(clusterUrl, "migrate"));
    expect(database.dialect).toBe("postgres");
    expect(await appliedMigrations(database)).toEqual(migrationNames);

    const columns = await sql<{ table_name: string; column_name: string; data_type: string }>`
      select table_name, column_name, data_type from information_schema.columns
      where table_schema = current_schema() and table_name not like 'kysely%'
      order by table_name, column_name`.execute(database.db);
    const tables = new Set(columns.rows.map((row) => row.table_name));
    for (const table of ["agents", "threads", "users", "tokens"]) expect(tables).toContain(table);
    // Every table, later ones included: only text and integer, no bigint (which `pg` hands
    // back as strings) and nothing SQLite lacks. The one exception is PostgreSQL's own
    // full-text column, derived by the database and read only by its search query
    // (`knowledge/fts.ts`; SQLite keeps the same in an FTS5 table).
    const engineSpecific = columns.rows.filter(
      (row) => !["text", "integer"].includes(row.data_type),
    );
    expect(engineSpecific.map((row) => [row.table_name, row.column_name, row.data_type])).toEqual([
      ["kb_chunks", "tsv", "tsvector"],
    ]);
    expect(
      columns.rows
        .filter((row) => row.table_name === "agents" && row.data_type === "integer")
        .map((row) => row.column_name),
    ).toEqual(["is_default", "is_subagent", "version"]);

    const metadata = await sql<{ column_default: string; is_nullable: string }>`
      select column_default, is_nullable from information_schema.columns
      where table_name = 'threads' and column_name = 'metadata'`.execute(database.db);
    expect(metadata.rows).toEqual([{ column_default: "'{}'::text", is_nullable: "NO" }]);

    const indexes = await sql<{ indexname: string; indexdef: string }>`
      select indexname, indexdef from pg_indexes
      where schemaname = current_schema() and indexname in
        ('agents_owner_uid_slug', 'threads_owner_uid', 'tokens_token_hash', 'tokens_uid')
      order by indexname`.execute(database.db);
    expect(indexes.rows.map((row) => [row.indexname, row.indexdef.includes("UNIQUE")])).toEqual([
      ["agents_owner_uid_slug", true],
      ["threads_owner_uid", false],
      ["tokens_token_hash", true],
      ["tokens_uid", false],
    ]);
  });

  it("reads integer columns back as numbers", async () => {
    const database = await open(await createTestDatabase(clusterUrl, "ints"));
    await database.db
      .insertInto("agents")
      .values({
        id: "a1",
        owner_uid: "alice",
        slug: "helper",
        name: "Helper",
        description: "",
        backend_id: "ChatAgentBackend",
        is_subagent: 0,
        is_default: 1,
        share_config: "{}",
        config_json: "{}",
        version: 2147483647,
        created_at: "2025-01-01T00:00:00.000Z",
        updated_at: "2025-01-01T00:00:00.000Z",
      })
      .execute();
    const row = await database.db
      .selectFrom("agents")
      .select(["is_subagent", "is_default", "version"])
      .executeTakeFirstOrThrow();
    expect(row).toEqual({ is_subagent: 0, is_default: 1, version: 2147483647 });
  });

  it("lets two processes racing to open one new database both succeed, each migration applied once", async () => {
    const url = await createTestDatabase(clusterUrl, "race");
    const [first, second] = await Promise.all([open(url), open(url)]);
    for (const database of [first, second]) {
      if (database === undefined) throw new Error("an opener returned nothing");
      expect(await appliedMigrations(database)).toEqual(migrationNames);
      expect(await database.db.selectFrom("agents").select("id").execute()).toEqual([]);
    }
  });

  it("serialises many concurrent openers of one new database", async () => {
    const url = await createTestDatabase(clusterUrl, "stampede");
    await Promise.all(Array.from({ length: 8 }, () => open(url, { max: 2 })));
    const counts = await queryAt<{ name: string; count: number }>(
      url,
      "select name, count(*)::int as count from kysely_migration group by name order by name",
    );
    expect(counts).toEqual(migrationNames.map((name) => ({ name, count: 1 })));
  });

  it("runs each migration once: reopening keeps the data and applies nothing again", async () => {
    const url = await createTestDatabase(clusterUrl, "reopen");
    const first = await openPostgresDatabase(url);
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
    const before = await sql<{ name: string; timestamp: string }>`
      select name, timestamp from kysely_migration order by name`.execute(first.db);
    await first.close();

    const second = await open(url);
    expect(
      await second.db.selectFrom("threads").select(["thread_id", "metadata"]).execute(),
    ).toEqual([{ thread_id: "t1", metadata: "{}" }]);
    const after = await sql<{ name: string; timestamp: string }>`
      select name, timestamp from kysely_migration order by name`.execute(second.db);
    expect(after.rows).toEqual(before.rows);
  });

  it("upgrades a database that ran only the first three migrations, keeping its rows", async () => {
    const url = await createTestDatabase(clusterUrl, "upgrade");
    const old = new Kysely<unknown>({
      dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: url, max: 1 }) }),
    });
    try {
      const earlier = MIGRATIONS.filter((entry) => entry.name < "0004");
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
    } finally {
      await old.destroy();
    }

    const database = await open(url);
    expect(await appliedMigrations(database)).toEqual(migrationNames);
    // 0004's default fills the column of the existing row.
    expect(
      await database.db.selectFrom("threads").select(["thread_id", "metadata"]).execute(),
    ).toEqual([{ thread_id: "t1", metadata: "{}" }]);
  });

  it("names the failed migration and leaves the schema as it was", async () => {
    const url = await createTestDatabase(clusterUrl, "clash");
    const raw = new pg.Client({ connectionString: url });
    await raw.connect();
    try {
      await raw.query("create table agents (something text)");

      const error = await expectFailure(openPostgresDatabase(url), ErrorCode.Internal);
      expect(error.message).toContain('migration "0001_agents" failed');

      // The migrations ran in one transaction: none of them left anything behind.
      const tables = await raw.query<{ table_name: string }>(
        `select table_name from information_schema.tables
         where table_schema = current_schema() order by table_name`,
      );
      expect(tables.rows.map((row) => row.table_name)).toEqual([
        "agents",
        "kysely_migration",
        "kysely_migration_lock",
      ]);
      expect((await raw.query("select * from kysely_migration")).rows).toEqual([]);
    } finally {
      await raw.end();
    }
    await untilNoConnections(url);
  });

  it("caps the pool at `max` connections (default 10)", async () => {
    const capped = await open(await createTestDatabase(clusterUrl, "capped"), { max: 2 });
    const plain = await open(await createTestDatabase(clusterUrl, "plain"));
    const busy = (database: Database) =>
      Promise.all(
        Array.from({ length: 12 }, () => sql`select pg_sleep(0.05)`.execute(database.db)),
      );
    await Promise.all([busy(capped), busy(plain)]);
    // Idle connections stay in the pool (for 30 s), so the counts show how many were opened.
    expect(await connectionsTo(urlOf(capped))).toBe(2);
    expect(await connectionsTo(urlOf(plain))).toBe(10);
  });

  it("survives the server closing an idle connection, and reconnects", async () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => undefined);
    const url = await createTestDatabase(clusterUrl, "killed");
    const database = await open(url);
    expect(await connectionsTo(url)).toBe(1);

    await onCluster("select pg_terminate_backend(pid) from pg_stat_activity where datname = $1", [
      databaseName(url),
    ]);
    await until(() => warn.mock.calls.length > 0);
    expect(String(warn.mock.calls[0]?.[0])).toContain("an idle connection failed");
    expect(String(warn.mock.calls[0]?.[0])).toContain(databaseName(url));

    expect(await database.db.selectFrom("agents").select("id").execute()).toEqual([]);
  });

  it("closes its pool on close, and close may be called again", async () => {
    const url = await createTestDatabase(clusterUrl, "close");
    const database = await openPostgresDatabase(url);
    expect(await connectionsTo(url)).toBe(1);
    await database.close();
    await expect(database.close()).resolves.toBeUndefined();
    await untilNoConnections(url);
  });

  describe("failures never show the password", () => {
    const password = "pw-S3cret!x";

    function expectMasked(error: SubagentGraphError, url: string) {
      expect(error.code).toBe(ErrorCode.Internal);
      expect(error.message).toContain(maskPassword(url));
      expect(error.message).toContain(":***@");
      for (const text of [error.message, String(error.stack), JSON.stringify(error)]) {
        expect(text).not.toContain("S3cret");
      }
      expect(String(error.cause)).not.toContain("S3cret");
    }

    it("when nothing listens on the port", async () => {
      const url = `postgres://app:${encodeURIComponent(password)}@127.0.0.1:1/app`;
      const error = await expectFailure(openPostgresDatabase(url), ErrorCode.Internal);
      expectMasked(error, url);
      expect(error.message).toContain("cannot connect to PostgreSQL database");
      expect(error.message).toContain("ECONNREFUSED");
    });

    it("when the database does not exist", async () => {
      const url = withPassword(`${clusterUrl.replace(/\/[^/]*$/, "")}/no_such_db`, password);
      const error = await expectFailure(openPostgresDatabase(url), ErrorCode.Internal);
      expectMasked(error, url);
      expect(error.message).toContain('database "no_such_db" does not exist');
    });

    it("when the URL is malformed", async () => {
      const url = `postgres://app:${password}@127.0.0.1:notaport/app`;
      const error = await expectFailure(openPostgresDatabase(url), ErrorCode.Internal);
      expect(error.message).toContain("URL is malformed");
      expect(error.message).toContain("postgres://app:***@127.0.0.1:notaport/app");
      expect(error.message).not.toContain("S3cret");
      expect(error.cause).toBeUndefined();
    });
  });
});

describe("maskPassword", () => {
  it.each([
    ["postgres://app:secret@db:5432/app", "postgres://app:***@db:5432/app"],
    [
      "postgresql://app:s%40cr%2Fet@db/app?sslmode=require",
      "postgresql://app:***@db/app?sslmode=require",
    ],
    [
      "postgres://app@db/app?password=secret&sslmode=require",
      "postgres://app@db/app?password=***&sslmode=require",
    ],
    ["postgres://db/app", "postgres://db/app"],
    ["postgres://app:sec@ret@db:bad/app", "postgres://app:***@db:bad/app"],
    // No host (a Unix socket in `?host=`): `pg` accepts it, WHATWG URLs do not.
    [
      "postgres://app:secret@/app?host=/run/postgresql",
      "postgres://app:***@/app?host=/run/postgresql",
    ],
  ])("masks %s", (url, masked) => {
    expect(maskPassword(url)).toBe(masked);
  });
});

describe("openDatabase", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "open-database-"));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("opens postgres:// and postgresql:// URLs on PostgreSQL", async () => {
    const url = await createTestDatabase(clusterUrl, "dispatch");
    for (const target of [url, url.replace(/^postgres:/, "postgresql:")]) {
      const database = await openDatabase(target);
      try {
        expect(database.dialect).toBe("postgres");
      } finally {
        await database.close();
      }
    }
  });

  it("opens anything else as a SQLite file", async () => {
    const database = await openDatabase(join(dir, "app.sqlite"));
    try {
      expect(database.dialect).toBe("sqlite");
    } finally {
      await database.close();
    }
  });
});
