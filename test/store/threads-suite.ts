/**
 * The thread store's contract, written once and run on every database we ship.
 *
 * Each dialect's test file calls `runThreadStoreSuite(name, openFresh)`; the opener must return
 * an empty, migrated database on every call, and the suite closes it.
 */

import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ErrorCode } from "../../errors.js";
import type { Database } from "../../store/database.js";
import { ThreadRepository } from "../../store/threads.js";
import { expectFailure, steppingClock } from "../agents/helpers.js";

/** Runs the thread store suite against databases made by `openDatabase`. */
export function runThreadStoreSuite(name: string, openDatabase: () => Promise<Database>): void {
  describe(`ThreadRepository on ${name}`, () => {
    let database: Database;
    let threads: ThreadRepository;

    beforeEach(async () => {
      database = await openDatabase();
      threads = new ThreadRepository(database.db, { now: steppingClock() });
    });
    afterEach(async () => {
      await database.close();
    });

    it("claims an unowned thread for the caller", async () => {
      const row = await threads.claim("alice", "t1", "agent-1");
      expect(row).toEqual({
        thread_id: "t1",
        owner_uid: "alice",
        agent_id: "agent-1",
        metadata: "{}",
        created_at: "2025-01-01T00:00:00.000Z",
        updated_at: "2025-01-01T00:00:00.000Z",
        deleted_at: null,
      });
      expect(await threads.get("alice", "t1")).toEqual(row);
    });

    it("creates a thread without an agent, which the first run binds", async () => {
      const made = await threads.create("alice", "t0", { topic: "tides" });
      expect(made).toMatchObject({
        created: true,
        row: { agent_id: "", metadata: '{"topic":"tides"}' },
      });
      expect(await threads.create("alice", "t0", {})).toMatchObject({
        created: false,
        row: { thread_id: "t0" },
      });
      expect(await threads.create("bob", "t0", {})).toEqual({ created: false, row: undefined });
      expect((await threads.claim("alice", "t0", "agent-1")).agent_id).toBe("agent-1");
      expect((await threads.claim("alice", "t0", "agent-2")).agent_id).toBe("agent-1");
      await threads.mergeMetadata("alice", "t0", { topic: null, lang: "en" });
      expect((await threads.get("alice", "t0"))?.metadata).toBe('{"lang":"en"}');
    });

    it("keeps metadata text as given, NUL and non-ASCII included", async () => {
      const metadata = { note: "nul\u0000 inside", lang: "日本語", emoji: "\u{1f30a}" };
      await threads.create("alice", "t0", metadata);
      const row = await threads.get("alice", "t0");
      expect(JSON.parse(row?.metadata ?? "")).toEqual(metadata);
    });

    it("returns the existing row when the owner claims again", async () => {
      const first = await threads.claim("alice", "t1", "agent-1");
      const again = await threads.claim("alice", "t1", "agent-2");
      expect(again).toEqual(first);
    });

    it("hides a thread owned by someone else: claim is NOT_FOUND, get is undefined", async () => {
      await threads.claim("alice", "t1", "agent-1");
      const error = await expectFailure(threads.claim("bob", "t1", "agent-9"), ErrorCode.NotFound);
      expect(error.message).toContain('"t1"');
      expect(error.message).not.toContain("alice");
      expect(await threads.get("bob", "t1")).toBeUndefined();
      expect((await threads.get("alice", "t1"))?.owner_uid).toBe("alice");
      expect((await threads.get("alice", "t1"))?.agent_id).toBe("agent-1");
    });

    it("compares thread ids and owners case-sensitively", async () => {
      await threads.claim("alice", "T1", "agent-1");
      expect(await threads.get("alice", "t1")).toBeUndefined();
      expect(await threads.get("Alice", "T1")).toBeUndefined();
      expect((await threads.claim("alice", "t1", "agent-2")).agent_id).toBe("agent-2");
      expect((await threads.listForUser("alice")).map((row) => row.thread_id).sort()).toEqual([
        "T1",
        "t1",
      ]);
    });

    it("gives a thread to exactly one of two concurrent claimers", async () => {
      const outcomes = await Promise.allSettled([
        threads.claim("alice", "race", "agent-1"),
        threads.claim("bob", "race", "agent-2"),
      ]);
      expect(outcomes.filter((outcome) => outcome.status === "fulfilled")).toHaveLength(1);
      const rejected = outcomes.find((outcome) => outcome.status === "rejected");
      await expectFailure(Promise.reject(rejected?.reason), ErrorCode.NotFound);
      const rows = await database.db.selectFrom("threads").selectAll().execute();
      expect(rows).toHaveLength(1);
    });

    it("creates a thread once when several creates race", async () => {
      const outcomes = await Promise.all(
        ["alice", "bob", "alice", "carol"].map((uid) => threads.create(uid, "race", { uid })),
      );
      expect(outcomes.filter((outcome) => outcome.created)).toHaveLength(1);
      const rows = await database.db.selectFrom("threads").selectAll().execute();
      expect(rows).toHaveLength(1);
    });

    it("rejects an empty thread id and writes nothing", async () => {
      await expectFailure(
        threads.claim("alice", "", "agent-1"),
        ErrorCode.InvalidThreadId,
        "thread_id",
      );
      expect(await database.db.selectFrom("threads").selectAll().execute()).toEqual([]);
    });

    it("treats a thread id containing NUL as absent and never stores one", async () => {
      await threads.claim("alice", "t1", "agent-1");
      expect(await threads.get("alice", "t1\u0000")).toBeUndefined();
      await threads.touch("t1\u0000");
      await expectFailure(
        threads.claim("alice", "t1\u0000", "agent-1"),
        ErrorCode.InvalidThreadId,
        "thread_id",
      );
      await expectFailure(
        threads.create("alice", "\u0000", {}),
        ErrorCode.InvalidThreadId,
        "thread_id",
      );
      await expectFailure(
        threads.mergeMetadata("alice", "t1\u0000", { a: 1 }),
        ErrorCode.NotFound,
        "thread_id",
      );
      const rows = await database.db.selectFrom("threads").select("thread_id").execute();
      expect(rows).toEqual([{ thread_id: "t1" }]);
    });

    it("touch moves updated_at and leaves created_at", async () => {
      const claimed = await threads.claim("alice", "t1", "agent-1");
      await threads.touch("t1");
      const touched = await threads.get("alice", "t1");
      expect(touched?.created_at).toBe(claimed.created_at);
      expect(touched?.updated_at).toBe("2025-01-01T00:00:01.000Z");
    });

    it("touch of an unknown thread creates nothing", async () => {
      await threads.touch("ghost");
      expect(await database.db.selectFrom("threads").selectAll().execute()).toEqual([]);
    });

    it("lists only the user's threads, most recently used first", async () => {
      await threads.claim("alice", "t1", "agent-1");
      await threads.claim("alice", "t2", "agent-1");
      await threads.claim("bob", "t3", "agent-2");
      await threads.touch("t1");
      const listed = await threads.listForUser("alice");
      expect(listed.map((row) => row.thread_id)).toEqual(["t1", "t2"]);
      expect(await threads.listForUser("carol")).toEqual([]);
    });

    it("hides a thread being deleted and keeps its id from every claim until its row goes", async () => {
      await threads.create("alice", "t1", { topic: "tides" });
      await threads.claim("alice", "t2", "agent-1");
      expect(await threads.beginDeletion("bob", "t1")).toBeUndefined();
      const marked = await threads.beginDeletion("alice", "t1");
      expect(marked).toMatchObject({ thread_id: "t1", deleted_at: "2025-01-01T00:00:03.000Z" });
      // A second start keeps the first mark (a deletion cut short is finished, not restarted).
      expect(await threads.beginDeletion("alice", "t1")).toEqual(marked);

      expect(await threads.get("alice", "t1")).toBeUndefined();
      expect(await threads.get("alice", "t1", { deleting: true })).toEqual(marked);
      expect((await threads.listForUser("alice")).map((row) => row.thread_id)).toEqual(["t2"]);
      await expectFailure(threads.claim("alice", "t1", "agent-1"), ErrorCode.NotFound);
      await expectFailure(threads.claim("bob", "t1", "agent-1"), ErrorCode.NotFound);
      expect(await threads.create("alice", "t1", {})).toEqual({ created: false, row: undefined });
      await expectFailure(threads.mergeMetadata("alice", "t1", { a: 1 }), ErrorCode.NotFound);
      expect((await threads.deleting()).map((row) => row.thread_id)).toEqual(["t1"]);

      // Only a marked row is ever deleted.
      expect(await threads.finishDeletion("t2")).toBe(false);
      expect(await threads.get("alice", "t2")).toBeDefined();
      expect(await threads.finishDeletion("t1")).toBe(true);
      expect(await threads.deleting()).toEqual([]);
      // The id is free again: claimed, it is a new thread.
      expect(await threads.claim("bob", "t1", "agent-2")).toMatchObject({
        owner_uid: "bob",
        metadata: "{}",
        deleted_at: null,
      });
    });

    it("lists threads used at the same moment by thread id in byte order", async () => {
      const frozen = new ThreadRepository(database.db, {
        now: () => new Date("2024-06-01T00:00:00.000Z"),
      });
      for (const id of ["b", "a_2", "B", "a-1", "a", "A", "ab", "\u00e9"]) {
        await frozen.claim("alice", id, "agent-1");
      }
      await threads.claim("alice", "later", "agent-1");
      const listed = await frozen.listForUser("alice");
      // Byte order, whatever the database's collation: upper case before lower case, "-" before
      // letters, "_" between the cases, non-ASCII last.
      expect(listed.map((row) => row.thread_id)).toEqual([
        "later",
        "A",
        "B",
        "a",
        "a-1",
        "a_2",
        "ab",
        "b",
        "\u00e9",
      ]);
    });
  });
}
