import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ErrorCode } from "../../errors.js";
import { type Database, openSqliteDatabase } from "../../store/database.js";
import { ThreadRepository } from "../../store/threads.js";
import { expectFailure, steppingClock } from "../agents/helpers.js";

describe("ThreadRepository", () => {
  let database: Database;
  let threads: ThreadRepository;

  beforeEach(async () => {
    database = await openSqliteDatabase(":memory:");
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

  it("rejects an empty thread id and writes nothing", async () => {
    await expectFailure(
      threads.claim("alice", "", "agent-1"),
      ErrorCode.InvalidThreadId,
      "thread_id",
    );
    expect(await database.db.selectFrom("threads").selectAll().execute()).toEqual([]);
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
});
