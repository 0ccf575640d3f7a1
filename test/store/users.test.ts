import { createHash } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import SQLite from "better-sqlite3";
import { Kysely, type KyselyPlugin, type Migration, Migrator, SqliteDialect, sql } from "kysely";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ErrorCode } from "../../errors.js";
import { type Database, openSqliteDatabase } from "../../store/database.js";
import { MIGRATIONS } from "../../store/migrations.js";
import type { DatabaseSchema } from "../../store/schema.js";
import { USER_ID_PATTERN, UserRepository } from "../../store/users.js";
import { expectFailure, steppingClock } from "../agents/helpers.js";

/**
 * `db` with a plugin counting UPDATE statements and the rows they changed, to check how often
 * `authenticate` writes.
 */
function countingUpdates(db: Kysely<DatabaseSchema>) {
  const updates = new Set<unknown>();
  let statements = 0;
  let changed = 0n;
  const plugin: KyselyPlugin = {
    transformQuery(args) {
      if (args.node.kind === "UpdateQueryNode") {
        statements += 1;
        updates.add(args.queryId);
      }
      return args.node;
    },
    async transformResult(args) {
      if (updates.delete(args.queryId)) changed += args.result.numAffectedRows ?? 0n;
      return args.result;
    },
  };
  return {
    db: db.withPlugin(plugin),
    statements: () => statements,
    changedRows: () => Number(changed),
  };
}

/** A clock the test moves by hand. */
function manualClock(start = "2025-01-01T00:00:00.000Z") {
  let current = Date.parse(start);
  return {
    now: () => new Date(current),
    advance(ms: number) {
      current += ms;
    },
  };
}

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

describe("UserRepository", () => {
  let database: Database;
  let users: UserRepository;

  beforeEach(async () => {
    database = await openSqliteDatabase(":memory:");
    users = new UserRepository(database.db, { now: steppingClock() });
  });
  afterEach(async () => {
    await database.close();
  });

  describe("users", () => {
    it("adds a user, display name defaulting to the uid, and gets it back", async () => {
      const alice = await users.add("alice", { displayName: "  Alice Example " });
      expect(alice).toEqual({
        uid: "alice",
        displayName: "Alice Example",
        createdAt: "2025-01-01T00:00:00.000Z",
      });
      expect(await users.get("alice")).toEqual(alice);
      expect((await users.add("bob@example.com")).displayName).toBe("bob@example.com");
      expect(await users.get("carol")).toBeUndefined();
    });

    it("refuses to add an existing uid, keeping the first user", async () => {
      await users.add("alice", { displayName: "First" });
      const error = await expectFailure(
        users.add("alice", { displayName: "Second" }),
        ErrorCode.Validation,
        "uid",
      );
      expect(error.message).toContain('user "alice" already exists');
      expect((await users.get("alice"))?.displayName).toBe("First");
    });

    it("gives exactly one of two concurrent adds of the same uid", async () => {
      const outcomes = await Promise.allSettled([users.add("race"), users.add("race")]);
      expect(outcomes.filter((outcome) => outcome.status === "fulfilled")).toHaveLength(1);
      const rejected = outcomes.find((outcome) => outcome.status === "rejected");
      await expectFailure(Promise.reject(rejected?.reason), ErrorCode.Validation, "uid");
    });

    it("ensure adds a missing user and returns an existing one unchanged", async () => {
      const created = await users.ensure("alice", { displayName: "Alice" });
      expect(created.displayName).toBe("Alice");
      const again = await users.ensure("alice", { displayName: "Someone else" });
      expect(again).toEqual(created);
      const both = await Promise.all([users.ensure("bob"), users.ensure("bob")]);
      expect(both[0]).toEqual(both[1]);
      expect(await database.db.selectFrom("users").select("uid").execute()).toHaveLength(2);
    });

    it("lists users sorted by uid", async () => {
      expect(await users.list()).toEqual([]);
      for (const uid of ["carol", "alice", "Bob", "bob"]) await users.add(uid);
      expect((await users.list()).map((user) => user.uid)).toEqual([
        "Bob",
        "alice",
        "bob",
        "carol",
      ]);
    });

    it.each(["", "-alice", ".alice", "al ice", "al/ice", "alice\n", "élodie", "a".repeat(65)])(
      "rejects the uid %j, naming it and the pattern, writing nothing",
      async (uid) => {
        const error = await expectFailure(users.add(uid), ErrorCode.Validation, "uid");
        expect(error.message).toContain(JSON.stringify(uid.slice(0, 80)));
        expect(error.message).toContain(String(USER_ID_PATTERN));
        await expectFailure(users.ensure(uid), ErrorCode.Validation, "uid");
        expect(await users.list()).toEqual([]);
      },
    );

    it("accepts uids up to 64 characters with . _ @ -", async () => {
      for (const uid of ["a".repeat(64), "a.b_c@d-e", "7"]) {
        expect((await users.add(uid)).uid).toBe(uid);
      }
    });

    it.each([
      ["", "1-100 characters"],
      ["   ", "1-100 characters"],
      ["x".repeat(101), "got 101"],
      ["two\nlines", "control characters"],
    ])("rejects the display name %j", async (displayName, expected) => {
      const error = await expectFailure(
        users.add("alice", { displayName }),
        ErrorCode.Validation,
        "displayName",
      );
      expect(error.message).toContain(expected);
      expect(await users.get("alice")).toBeUndefined();
    });
  });

  describe("tokens", () => {
    beforeEach(async () => {
      await users.add("alice");
      await users.add("bob");
    });

    it("issues a token that authenticates until it is revoked", async () => {
      const issued = await users.issueToken("alice", { label: "laptop" });
      expect(issued).toMatchObject({ uid: "alice", label: "laptop" });
      expect(issued.id).toMatch(/^tok_[0-9a-f]{16}$/);
      expect(issued.token).toMatch(/^sgk_[A-Za-z0-9_-]{43}$/);
      expect(await users.authenticate(issued.token)).toBe("alice");

      expect(await users.revokeToken("alice", issued.id)).toBe(true);
      expect(await users.authenticate(issued.token)).toBeUndefined();
      // Revoking again changes nothing.
      expect(await users.revokeToken("alice", issued.id)).toBe(false);
      const [listed] = await users.listTokens("alice");
      expect(listed?.revokedAt).not.toBeNull();
    });

    it("issues distinct tokens with the default label, each for its own user", async () => {
      const first = await users.issueToken("alice");
      const second = await users.issueToken("alice");
      const bobs = await users.issueToken("bob");
      expect(first.label).toBe("default");
      expect(new Set([first.token, second.token, bobs.token]).size).toBe(3);
      expect(new Set([first.id, second.id, bobs.id]).size).toBe(3);
      expect(await users.authenticate(second.token)).toBe("alice");
      expect(await users.authenticate(bobs.token)).toBe("bob");
      // Revoking one token leaves the user's others working.
      await users.revokeToken("alice", first.id);
      expect(await users.authenticate(second.token)).toBe("alice");
    });

    it("refuses to issue a token for an unknown user, naming the uid and the fix", async () => {
      const error = await expectFailure(users.issueToken("ghost"), ErrorCode.NotFound, "uid");
      expect(error.message).toContain('"ghost"');
      expect(error.message).toContain("users add ghost");
      expect(await database.db.selectFrom("tokens").selectAll().execute()).toEqual([]);
    });

    it.each([
      ["", "1-100 characters"],
      ["l".repeat(101), "got 101"],
      ["tab\there", "control characters"],
    ])("refuses the label %j", async (label, expected) => {
      const error = await expectFailure(
        users.issueToken("alice", { label }),
        ErrorCode.Validation,
        "label",
      );
      expect(error.message).toContain(expected);
    });

    it("accepts a label of exactly 100 characters", async () => {
      const label = "l".repeat(100);
      expect((await users.issueToken("alice", { label })).label).toBe(label);
    });

    it("does not let a user revoke another user's token", async () => {
      const bobs = await users.issueToken("bob");
      expect(await users.revokeToken("alice", bobs.id)).toBe(false);
      expect(await users.authenticate(bobs.token)).toBe("bob");
      expect((await users.listTokens("bob"))[0]?.revokedAt).toBeNull();
      expect(await users.revokeToken("alice", "tok_0000000000000000")).toBe(false);
      expect(await users.revokeToken("ghost", bobs.id)).toBe(false);
    });

    it("stores only the SHA-256 of the token, never the token itself", async () => {
      const issued = await users.issueToken("alice", { label: "ci" });
      const rows = await database.db.selectFrom("tokens").selectAll().execute();
      expect(rows).toHaveLength(1);
      const stored = JSON.stringify(rows);
      expect(stored).not.toContain(issued.token);
      expect(stored).not.toContain(issued.token.slice("sgk_".length));
      expect(rows[0]?.token_hash).toBe(createHash("sha256").update(issued.token).digest("hex"));
      expect(rows[0]?.token_hash).not.toBe(issued.token);
    });

    it("lists a user's tokens without the token or its hash", async () => {
      const first = await users.issueToken("alice", { label: "laptop" });
      const second = await users.issueToken("alice", { label: "ci" });
      await users.issueToken("bob");
      const listed = await users.listTokens("alice");
      expect(listed).toEqual([
        {
          id: first.id,
          label: "laptop",
          createdAt: first.createdAt,
          lastUsedAt: null,
          revokedAt: null,
        },
        {
          id: second.id,
          label: "ci",
          createdAt: second.createdAt,
          lastUsedAt: null,
          revokedAt: null,
        },
      ]);
      expect(JSON.stringify(listed)).not.toMatch(/sgk_|[0-9a-f]{64}/);
      expect(await users.listTokens("ghost")).toEqual([]);
    });

    it.each([
      ["empty", ""],
      ["the prefix alone", "sgk_"],
      ["unknown", `sgk_${"A".repeat(43)}`],
      ["huge", `sgk_${"A".repeat(1_000_000)}`],
      ["just over the limit", `sgk_${"A".repeat(197)}`],
      ["SQL", "sgk_' or '1'='1"],
      ["a header, not a token", "Bearer sgk_abc"],
      ["unicode", "sgk_\u{1f511}\u0000"],
    ])("authenticates a %s token as undefined without throwing", async (_, token) => {
      await users.issueToken("alice");
      await expect(users.authenticate(token)).resolves.toBeUndefined();
    });

    it("returns undefined rather than throwing for non-string input", async () => {
      for (const value of [undefined, null, 42, {}, ["sgk_x"]]) {
        await expect(users.authenticate(value as unknown as string)).resolves.toBeUndefined();
      }
    });

    it("does not accept a token that differs only by surrounding whitespace or case", async () => {
      const { token } = await users.issueToken("alice");
      expect(await users.authenticate(` ${token}`)).toBeUndefined();
      expect(await users.authenticate(`${token}\n`)).toBeUndefined();
      expect(await users.authenticate(`SGK_${token.slice(4)}`)).toBeUndefined();
    });
  });

  describe("last_used_at", () => {
    it("is written on first use, then at most once a minute", async () => {
      const clock = manualClock();
      const counted = countingUpdates(database.db);
      const timed = new UserRepository(counted.db, { now: clock.now });
      await timed.add("alice");
      const { id, token } = await timed.issueToken("alice");
      const lastUsed = async () => (await timed.listTokens("alice"))[0]?.lastUsedAt;
      expect(await lastUsed()).toBeNull();

      clock.advance(5_000);
      expect(await timed.authenticate(token)).toBe("alice");
      expect(await lastUsed()).toBe("2025-01-01T00:00:05.000Z");
      expect([counted.statements(), counted.changedRows()]).toEqual([1, 1]);

      // Many requests within the minute: no further writes.
      for (let request = 0; request < 20; request += 1) {
        clock.advance(2_000);
        expect(await timed.authenticate(token)).toBe("alice");
      }
      clock.advance(19_999);
      expect(await timed.authenticate(token)).toBe("alice");
      expect(await lastUsed()).toBe("2025-01-01T00:00:05.000Z");
      expect([counted.statements(), counted.changedRows()]).toEqual([1, 1]);

      clock.advance(1);
      expect(await timed.authenticate(token)).toBe("alice");
      expect(await lastUsed()).toBe("2025-01-01T00:01:05.000Z");
      expect([counted.statements(), counted.changedRows()]).toEqual([2, 2]);

      clock.advance(10 * 60_000);
      expect(await timed.revokeToken("alice", id)).toBe(true);
      expect([counted.statements(), counted.changedRows()]).toEqual([3, 3]);
      expect(await timed.authenticate(token)).toBeUndefined();
      // A refused token is not marked as used.
      expect(await lastUsed()).toBe("2025-01-01T00:01:05.000Z");
      expect([counted.statements(), counted.changedRows()]).toEqual([3, 3]);
    });

    it("is changed once when several requests arrive together", async () => {
      const clock = manualClock();
      const counted = countingUpdates(database.db);
      const timed = new UserRepository(counted.db, { now: clock.now });
      await timed.add("alice");
      const { token } = await timed.issueToken("alice");
      clock.advance(1_000);
      const uids = await Promise.all(Array.from({ length: 5 }, () => timed.authenticate(token)));
      expect(uids).toEqual(Array(5).fill("alice"));
      expect(counted.changedRows()).toBe(1);
      const [row] = await database.db.selectFrom("tokens").select("last_used_at").execute();
      expect(row?.last_used_at).toBe("2025-01-01T00:00:01.000Z");
    });
  });
});
