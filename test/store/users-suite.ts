/**
 * The user store's contract, written once and run on every database we ship.
 *
 * Each dialect's test file calls `runUserStoreSuite(name, openFresh)`; the opener must return
 * an empty, migrated database on every call, and the suite closes it.
 */

import { createHash } from "node:crypto";
import type { Kysely, KyselyPlugin } from "kysely";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ErrorCode } from "../../errors.js";
import type { Database } from "../../store/database.js";
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

/** Runs the user store suite against databases made by `openDatabase`. */
export function runUserStoreSuite(name: string, openDatabase: () => Promise<Database>): void {
  describe(`UserRepository on ${name}`, () => {
    let database: Database;
    let users: UserRepository;

    beforeEach(async () => {
      database = await openDatabase();
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

      it("lists users sorted by uid in byte order, whatever the database's collation", async () => {
        expect(await users.list()).toEqual([]);
        for (const uid of ["carol", "alice", "Bob", "bob", "a_b", "a-b", "a.b", "A"]) {
          await users.add(uid);
        }
        expect((await users.list()).map((user) => user.uid)).toEqual([
          "A",
          "Bob",
          "a-b",
          "a.b",
          "a_b",
          "alice",
          "bob",
          "carol",
        ]);
      });

      it("tells uids apart by case", async () => {
        await users.add("alice", { displayName: "lower" });
        await users.add("Alice", { displayName: "upper" });
        expect((await users.get("alice"))?.displayName).toBe("lower");
        expect((await users.get("Alice"))?.displayName).toBe("upper");
        expect(await users.get("ALICE")).toBeUndefined();
      });

      it("answers a uid containing NUL as absent, without a database error", async () => {
        await users.add("alice");
        expect(await users.get("alice\u0000")).toBeUndefined();
        expect(await users.listTokens("alice\u0000")).toEqual([]);
        expect(await users.revokeToken("alice\u0000", "tok_0000000000000000")).toBe(false);
        expect(await users.revokeToken("alice", "tok_\u0000")).toBe(false);
        await expectFailure(users.issueToken("alice\u0000"), ErrorCode.NotFound, "uid");
        await expectFailure(users.add("alice\u0000"), ErrorCode.Validation, "uid");
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
}
