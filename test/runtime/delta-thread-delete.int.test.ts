/**
 * Deleting threads on the delta storage (`checkpointStorage: "delta"`): a thread's state is
 * rebuilt from its ancestors' writes, so a deletion that took a row another thread needs would
 * silently lose that thread's history, and one that left rows behind would keep the user's
 * data.
 *
 * Threads whose ids look alike: `ab` (the one deleted first), `abc` and `a` (string prefixes
 * either way), `ab_sub_notes` (a user's thread whose id starts like `ab`'s children, with
 * children of its own, a fork and a snapshot every 3 updates). Deleting `ab` must leave the
 * others' rows exactly as they were and their states (every checkpoint, both branches, their
 * children) read back the same, and they must go on; deleting every thread must leave no row
 * in the checkpoint tables (checkpoints, writes, blobs) and no run or thread row.
 */

import type { BaseMessage } from "@langchain/core/messages";
import { isDeltaSnapshot } from "@langchain/langgraph-checkpoint";
import { afterEach, describe, expect, inject, it } from "vitest";
import { ErrorCode } from "../../errors.js";
import type { Runtime, RuntimeOptions } from "../../runtime.js";
import { expectFailure } from "../agents/helpers.js";
import { describeMessage } from "../fixtures/pre-delta/make-fixtures.js";
import { createTestDatabase } from "../support/postgres-cluster.js";
import {
  type RuntimeOnDatabase,
  rowsOf,
  runtimeInMemory,
  runtimeOnPostgres,
  runtimeOnSqlite,
} from "../support/thread-rows.js";

const UID = "alice";
const DELTA = {
  checkpointStorage: "delta",
  // A snapshot every 3 updates: reads cross snapshots and the writes between them.
  deltaSnapshotFrequency: 3,
} satisfies Partial<RuntimeOptions>;

const OPENERS: { name: string; open(): Promise<RuntimeOnDatabase> }[] = [
  { name: "memory", open: () => runtimeInMemory({ runtime: DELTA }) },
  { name: "sqlite", open: () => runtimeOnSqlite({ runtime: DELTA }) },
  {
    name: "postgres",
    open: async () =>
      runtimeOnPostgres(await createTestDatabase(inject("postgresUrl"), "deltadel"), {
        runtime: DELTA,
      }),
  },
];

/** Tables whose rows are a thread's checkpoints (as the savers name them). */
const CHECKPOINT_TABLES = ["checkpoints", "writes", "checkpoint_writes", "checkpoint_blobs"];

async function createAgents(runtime: Runtime) {
  await runtime.agents.create(UID, {
    slug: "researcher",
    name: "Researcher",
    description: "Gathers the facts a request depends on.",
    backend_id: "SubAgentBackend",
    config_json: { context: { model: "offline", system_prompt: "You are a researcher." } },
  });
  await runtime.agents.create(UID, {
    slug: "boss",
    name: "Boss",
    description: "Delegates research, then answers.",
    config_json: {
      context: { model: "offline", subagents: ["researcher"], system_prompt: "You delegate." },
    },
  });
}

/** Everything a user can read of a thread: every checkpoint's messages and its children. */
async function readThread(runtime: Runtime, threadId: string) {
  const history = await runtime.history(UID, threadId);
  const checkpoints = [];
  for (const checkpoint of history) {
    const state = await runtime.threads.state(UID, threadId, {
      checkpointId: checkpoint.checkpointId,
    });
    checkpoints.push({
      checkpointId: checkpoint.checkpointId,
      parent: checkpoint.parentCheckpointId,
      messages: checkpoint.messages.map(describeMessage),
      state: ((state?.values.messages ?? []) as BaseMessage[]).map(describeMessage),
      children: checkpoint.subagentRuns.map((run) => run.child_thread_id),
    });
  }
  const children: Record<string, unknown> = {};
  for (const childId of new Set(checkpoints.flatMap((checkpoint) => checkpoint.children))) {
    children[childId] = {
      messages: (await runtime.childThread(UID, childId)).messages.map(describeMessage),
      history: (await runtime.childHistory(UID, childId)).map((checkpoint) =>
        checkpoint.messages.map(describeMessage),
      ),
    };
  }
  return { checkpoints, children };
}

/** Whether `id` is `threadId` or one of its children (`<threadId>_sub_<slug>_<8 hex>`). */
const isOf = (threadId: string) => (id: string) =>
  id === threadId || new RegExp(`^${threadId}_sub_[a-z0-9-]+_[0-9a-f]{8}$`).test(id);

describe.each(OPENERS)("deleting threads on the delta storage ($name saver)", ({ open }) => {
  const opened: RuntimeOnDatabase[] = [];
  afterEach(async () => {
    for (const runtime of opened.splice(0)) await runtime.dispose();
  });

  it("keeps every row and every state of the look-alike threads, and leaves no row behind", async () => {
    const db = await open();
    opened.push(db);
    const { runtime } = db;
    await createAgents(runtime);
    const turn = (threadId: string, input: string) =>
      runtime.run({ uid: UID, agent: "boss", threadId, input });
    await turn("ab", "Plan a picnic");
    await turn("ab", "What if it rains?");
    await turn("abc", "Plan a hike");
    await turn("a", "Plan a swim");
    await turn("ab_sub_notes", "Take notes on tides");
    await turn("ab_sub_notes", "And on winds");
    // A fork of ab_sub_notes' first answer (same id, edited), continued: two branches.
    const first = (await runtime.history(UID, "ab_sub_notes")).find(
      (checkpoint) => checkpoint.messages.length === 4,
    );
    const answer = first?.messages[3];
    if (!first || answer?.id === undefined) throw new Error("no first answer");
    const fork = await runtime.threads.fork(UID, "ab_sub_notes", {
      checkpointId: first.checkpointId,
      values: { messages: [{ type: "ai", content: "Tides: twice a day.", id: answer.id }] },
    });
    await runtime.run({
      uid: UID,
      threadId: "ab_sub_notes",
      checkpointId: fork.checkpointId,
      input: "And on currents",
    });
    const others = ["a", "abc", "ab_sub_notes"];

    // The delta storage is in use: checkpoints hold no message list, some hold a snapshot.
    const stored = [];
    for await (const tuple of runtime.checkpointer.list({
      configurable: { thread_id: "ab_sub_notes", checkpoint_ns: "" },
    })) {
      stored.push(tuple.checkpoint.channel_values.messages);
    }
    expect(stored.length).toBeGreaterThan(10);
    expect(stored.filter((value) => Array.isArray(value))).toEqual([]);
    expect(stored.filter((value) => isDeltaSnapshot(value)).length).toBeGreaterThan(1);

    const views = new Map<string, Awaited<ReturnType<typeof readThread>>>();
    for (const threadId of others) views.set(threadId, await readThread(runtime, threadId));
    const notes = views.get("ab_sub_notes");
    expect(notes?.checkpoints[0]?.messages.map((m) => m.text)).toEqual([
      "Take notes on tides",
      "[offline model] Delegating to researcher.",
      expect.stringContaining("Take notes on tides"),
      "Tides: twice a day.",
      "And on currents",
      "[offline model] Delegating to researcher.",
      expect.stringContaining("And on currents"),
      expect.stringContaining("And on currents"),
    ]);
    expect(Object.keys(notes?.children ?? {})).toHaveLength(3);
    const othersRows = async () =>
      rowsOf(await db.threadRows(), (id) => others.some((other) => isOf(other)(id)));
    const rowsBefore = await othersRows();
    const abRows = rowsOf(await db.threadRows(), isOf("ab"));
    expect(Object.keys(abRows.checkpoints ?? {})).toHaveLength(3); // ab and its 2 children

    await runtime.threads.delete(UID, "ab");

    await expectFailure(runtime.threads.get(UID, "ab"), ErrorCode.NotFound, "thread_id");
    expect(rowsOf(await db.threadRows(), isOf("ab"))).toEqual({});
    expect(await othersRows()).toEqual(rowsBefore);
    for (const threadId of others) {
      expect(await readThread(runtime, threadId), threadId).toEqual(views.get(threadId));
    }
    // And they go on from where they were.
    const head = notes?.checkpoints[0]?.messages ?? [];
    const next = await turn("ab_sub_notes", "Summarise");
    expect(next.messages.map(describeMessage).slice(0, head.length)).toEqual(head);
    expect(next.messages).toHaveLength(head.length + 4);

    // Deleting the thread whose id starts like ab's children leaves "a" and "abc" as they were.
    const aRows = rowsOf(await db.threadRows(), (id) => isOf("a")(id) || isOf("abc")(id));
    await runtime.threads.delete(UID, "ab_sub_notes");
    expect(rowsOf(await db.threadRows(), isOf("ab_sub_notes"))).toEqual({});
    expect(rowsOf(await db.threadRows(), (id) => isOf("a")(id) || isOf("abc")(id))).toEqual(aRows);
    for (const threadId of ["a", "abc"]) {
      expect(await readThread(runtime, threadId), threadId).toEqual(views.get(threadId));
    }

    // Deleting the rest leaves no checkpoint row at all, and no run or thread row.
    await runtime.threads.delete(UID, "abc");
    await runtime.threads.delete(UID, "a");
    const left = await db.threadRows();
    for (const table of CHECKPOINT_TABLES) expect(left[table] ?? {}, table).toEqual({});
    for (const table of ["runs", "threads"]) expect(left[table] ?? {}, table).toEqual({});
    expect(await runtime.threads.search(UID)).toEqual([]);
  });
});
