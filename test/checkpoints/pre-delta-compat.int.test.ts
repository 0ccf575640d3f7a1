/**
 * Threads written before `messages` and `subagent_runs` were stored as deltas (full snapshots in
 * `channel_values`) stay readable and continue on today's storage.
 *
 * The fixtures (test/fixtures/pre-delta, made by make-fixtures.ts at commit 9a011e4) are a data
 * dir of the embedded default (agents.sqlite, checkpoints.sqlite) and a `pg_dump` of a runtime
 * on PostgreSQL, each with what that code read back (expected.json). Each is opened with
 * today's `createRuntime`, on the default (delta) storage and on the full one, and must read
 * every old checkpoint with the same messages, read the child threads, continue the thread in
 * the runtime's storage (old messages and their ids unchanged), replay and fork from an old
 * checkpoint, and delete the thread without leaving a row behind.
 */

import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { BaseMessage } from "@langchain/core/messages";
import { afterEach, describe, expect, inject, it } from "vitest";
import { ErrorCode } from "../../errors.js";
import type { RuntimeOptions } from "../../runtime.js";
import { expectFailure } from "../agents/helpers.js";
import {
  describeMessage,
  EDITED_QUESTION,
  type ExpectedFixture,
  type ExpectedMessage,
} from "../fixtures/pre-delta/make-fixtures.js";
import { createTestDatabase } from "../support/postgres-cluster.js";
import {
  restorePostgresDump,
  type RuntimeOnDatabase,
  rowsOf,
  runtimeOnPostgres,
  runtimeOnSqlite,
} from "../support/thread-rows.js";

const FIXTURES = join(import.meta.dirname, "..", "fixtures", "pre-delta");
const readExpected = (file: string) =>
  JSON.parse(readFileSync(join(FIXTURES, file), "utf8")) as ExpectedFixture;

const describeAll = (messages: readonly BaseMessage[]) => messages.map(describeMessage);

/**
 * The assertions, the same on every database: `open` gives a runtime on a copy of the fixture
 * whose reads `expected` recorded.
 */
async function checkPreDeltaThread(
  opened: RuntimeOnDatabase,
  expected: ExpectedFixture,
  storage: "delta" | "full",
) {
  const { runtime } = opened;
  const { uid, threadId } = expected;
  const message = (index: number): ExpectedMessage => {
    const found = expected.messages[index];
    if (!found) throw new Error(`expected.json has no message ${index}`);
    return found;
  };
  const messages = (indices: number[]) => indices.map(message);
  const expectedHistory = expected.history.map((checkpoint) => ({
    checkpointId: checkpoint.checkpointId,
    parentCheckpointId: checkpoint.parentCheckpointId,
    step: checkpoint.step,
    source: checkpoint.source,
    messages: messages(checkpoint.messages),
    childThreadIds: checkpoint.childThreadIds,
  }));
  const oldChildren = Object.keys(expected.children);
  // The fixture is what it says: 2 turns and a forked third, 3 children, 8 messages at the head.
  expect(expectedHistory).toHaveLength(16);
  expect(oldChildren).toHaveLength(3);
  expect(expectedHistory[0]?.messages).toHaveLength(8);
  expect(expectedHistory[0]?.messages[4]?.text).toBe(EDITED_QUESTION);

  const readHistory = async () =>
    (await runtime.history(uid, threadId)).map((checkpoint) => ({
      checkpointId: checkpoint.checkpointId,
      parentCheckpointId: checkpoint.parentCheckpointId,
      step: checkpoint.step,
      source: checkpoint.source,
      messages: describeAll(checkpoint.messages),
      childThreadIds: checkpoint.subagentRuns.map((run) => run.child_thread_id),
    }));

  // 1. Every old checkpoint reads as it did, through the history and the graph's state.
  expect(await readHistory()).toEqual(expectedHistory);
  for (const checkpoint of expected.history) {
    const state = await runtime.threads.state(uid, threadId, {
      checkpointId: checkpoint.checkpointId,
    });
    expect(
      describeAll((state?.values.messages ?? []) as BaseMessage[]),
      `state at ${checkpoint.checkpointId}`,
    ).toEqual(messages(checkpoint.stateMessages));
  }
  const head = await runtime.threads.state(uid, threadId);
  expect(head?.config.configurable?.checkpoint_id).toBe(expected.headCheckpointId);
  const stateHistory = await runtime.threads.stateHistory(uid, threadId, { limit: 100 });
  expect(stateHistory.map((state) => describeAll(state.values.messages as BaseMessage[]))).toEqual(
    expected.history.map((checkpoint) => messages(checkpoint.stateMessages)),
  );

  // 2. The child threads, through their parent.
  for (const [childId, child] of Object.entries(expected.children)) {
    const view = await runtime.childThread(uid, childId);
    expect(view.parentThreadId).toBe(threadId);
    expect(view.subagentType).toBe(child.subagentType);
    expect(describeAll(view.messages)).toEqual(messages(child.messages));
    const childHistory = await runtime.childHistory(uid, childId);
    expect(
      childHistory.map((checkpoint) => ({
        checkpointId: checkpoint.checkpointId,
        messages: describeAll(checkpoint.messages),
      })),
    ).toEqual(
      child.history.map((c) => ({ checkpointId: c.checkpointId, messages: messages(c.messages) })),
    );
  }

  // 3. A new turn continues the old thread: the old messages, ids unchanged, then the new ones.
  const oldHead = expectedHistory[0]?.messages ?? [];
  const continued = await runtime.run({ uid, threadId, input: "And what about dessert?" });
  expect(describeAll(continued.messages).slice(0, oldHead.length)).toEqual(oldHead);
  expect(
    describeAll(continued.messages.slice(oldHead.length)).map((m) => [m.type, m.text]),
  ).toEqual([
    ["human", "And what about dessert?"],
    ["ai", "[offline model] Delegating to researcher."],
    ["tool", expect.stringContaining("And what about dessert?")],
    ["ai", expect.stringContaining('found about "And what about dessert?"')],
  ]);
  const newChild = continued.subagentRuns.at(-1)?.child_thread_id ?? "";
  expect(oldChildren).not.toContain(newChild);
  expect(continued.subagentRuns.map((run) => run.child_thread_id)).toEqual([
    ...(expectedHistory[0]?.childThreadIds ?? []),
    newChild,
  ]);
  expect(describeAll((await runtime.childThread(uid, newChild)).messages)).toHaveLength(2);
  const afterTurn = await runtime.threads.state(uid, threadId);
  expect(describeAll(afterTurn?.values.messages as BaseMessage[])).toEqual(
    describeAll(continued.messages),
  );
  // Its first checkpoint's parent is the old head; the old checkpoints still read as before.
  let history = await readHistory();
  expect(history.find((c) => c.parentCheckpointId === expected.headCheckpointId)).toBeDefined();
  expect(history.slice(-expectedHistory.length)).toEqual(expectedHistory);
  // The new turn went on in the runtime's storage: its checkpoints that changed a channel hold
  // no list on the delta storage (writes and snapshots), the whole list on the full one. (A
  // checkpoint that did not change a channel may carry the old full value: PostgreSQL stores a
  // value per channel version.)
  const oldIds = new Set(expectedHistory.map((checkpoint) => checkpoint.checkpointId));
  const oldVersions = new Set<string>();
  const fresh: { versions: Record<string, unknown>; values: Record<string, unknown> }[] = [];
  for await (const tuple of runtime.checkpointer.list({
    configurable: { thread_id: threadId, checkpoint_ns: "" },
  })) {
    const { id, channel_versions: versions, channel_values: values } = tuple.checkpoint;
    if (oldIds.has(id)) {
      for (const [channel, version] of Object.entries(versions)) {
        oldVersions.add(`${channel}@${version}`);
      }
    } else fresh.push({ versions, values });
  }
  expect(fresh).toHaveLength(history.length - expectedHistory.length);
  for (const channel of ["messages", "subagent_runs"]) {
    const changed = fresh.filter(
      ({ versions }) =>
        versions[channel] !== undefined && !oldVersions.has(`${channel}@${versions[channel]}`),
    );
    expect(changed.length, channel).toBeGreaterThan(0);
    const lists = changed.filter(({ values }) => Array.isArray(values[channel]));
    expect(lists.length, channel).toBe(storage === "delta" ? 0 : changed.length);
  }

  // 4. A replay from an old checkpoint (the first question only): the model runs again.
  const start = expectedHistory.find((c) => c.step === 0);
  if (!start) throw new Error("no step-0 checkpoint in the fixture");
  expect(start.messages).toHaveLength(1);
  const replayed = await runtime.run({ uid, threadId, checkpointId: start.checkpointId });
  expect(describeAll(replayed.messages)[0]).toEqual(start.messages[0]);
  expect(describeAll(replayed.messages).map((m) => m.type)).toEqual(["human", "ai", "tool", "ai"]);
  expect(replayed.output).toContain('found about "Plan a picnic by the sea for six people"');
  const replayChild = replayed.subagentRuns.at(-1)?.child_thread_id ?? "";
  expect([...oldChildren, newChild]).not.toContain(replayChild);
  expect(replayed.subagentRuns).toHaveLength(1);

  // 5. A fork of the original (unforked) branch's head with its last answer edited (same id),
  // continued with a new question.
  const originalHead = expectedHistory.find(
    (c) => c.messages.length === 8 && c.messages[4]?.text !== EDITED_QUESTION,
  );
  const answer = originalHead?.messages[7];
  if (!originalHead || answer?.id === undefined) throw new Error("no original branch head");
  const fork = await runtime.threads.fork(uid, threadId, {
    checkpointId: originalHead.checkpointId,
    values: { messages: [{ type: "ai", content: "Pack umbrellas.", id: answer.id }] },
  });
  const forked = await runtime.threads.state(uid, threadId, { checkpointId: fork.checkpointId });
  const edited = [
    ...originalHead.messages.slice(0, 7),
    { id: answer.id, type: "ai", text: "Pack umbrellas." },
  ];
  expect(describeAll(forked?.values.messages as BaseMessage[])).toEqual(edited);
  const afterFork = await runtime.run({
    uid,
    threadId,
    checkpointId: fork.checkpointId,
    input: "Thanks, and for the wind?",
  });
  expect(describeAll(afterFork.messages).slice(0, 8)).toEqual(edited);
  expect(afterFork.messages.slice(8).map((m) => m.getType())).toEqual([
    "human",
    "ai",
    "tool",
    "ai",
  ]);
  expect(afterFork.subagentRuns.map((run) => run.child_thread_id).slice(0, -1)).toEqual(
    originalHead.childThreadIds,
  );
  // Every old checkpoint still reads as it did, among the new branches.
  history = await readHistory();
  for (const old of expectedHistory) {
    expect(history.find((c) => c.checkpointId === old.checkpointId)).toEqual(old);
  }

  // 6. Deleting the thread removes all of it, old rows and new, children included.
  const children = [
    ...oldChildren,
    newChild,
    replayChild,
    afterFork.subagentRuns.at(-1)?.child_thread_id ?? "",
  ];
  const ours = (id: string) => id === threadId || children.includes(id);
  const before = rowsOf(await opened.threadRows(), ours);
  const checkpointTables =
    opened.kind === "sqlite" ? ["checkpoints", "writes"] : ["checkpoints", "checkpoint_writes"];
  for (const table of checkpointTables) {
    for (const id of [threadId, ...children])
      expect(before[table]?.[id], `${table} ${id}`).toBeGreaterThan(0);
  }
  await runtime.threads.delete(uid, threadId);
  await expectFailure(runtime.threads.get(uid, threadId), ErrorCode.NotFound, "thread_id");
  await expectFailure(runtime.history(uid, threadId), ErrorCode.NotFound);
  await expectFailure(runtime.childThread(uid, oldChildren[0] ?? ""), ErrorCode.NotFound);
  for (const id of [threadId, ...children]) {
    expect(
      await runtime.checkpointer.getTuple({ configurable: { thread_id: id, checkpoint_ns: "" } }),
    ).toBeUndefined();
  }
  const left = rowsOf(await opened.threadRows(), ours);
  for (const table of [...checkpointTables, "checkpoint_blobs"])
    expect(left[table], table).toBeUndefined();
}

const STORAGES = [
  { storage: "delta", options: {} },
  { storage: "full", options: { checkpointStorage: "full" } },
] satisfies { storage: "delta" | "full"; options: Partial<RuntimeOptions> }[];

describe.each(STORAGES)(
  "a thread written before the delta storage, opened on the $storage storage",
  ({ storage, options }) => {
    const opened: RuntimeOnDatabase[] = [];
    afterEach(async () => {
      for (const runtime of opened.splice(0)) await runtime.dispose();
    });

    it("reads, continues, replays, forks and deletes on the embedded SQLite default", async () => {
      const runtime = await runtimeOnSqlite({
        files: {
          "agents.sqlite": join(FIXTURES, "sqlite", "agents.sqlite"),
          "checkpoints.sqlite": join(FIXTURES, "sqlite", "checkpoints.sqlite"),
        },
        runtime: options,
      });
      opened.push(runtime);
      await checkPreDeltaThread(runtime, readExpected(join("sqlite", "expected.json")), storage);
    });

    it("reads, continues, replays, forks and deletes on PostgreSQL", async () => {
      const url = await createTestDatabase(inject("postgresUrl"), "predelta");
      restorePostgresDump(url, join(FIXTURES, "postgres.sql"));
      const runtime = await runtimeOnPostgres(url, { runtime: options });
      opened.push(runtime);
      await checkPreDeltaThread(runtime, readExpected("postgres.expected.json"), storage);
    });
  },
);
