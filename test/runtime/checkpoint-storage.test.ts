import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { BaseMessage } from "@langchain/core/messages";
import { MemorySaver } from "@langchain/langgraph-checkpoint";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { ErrorCode, SubagentGraphError } from "../../errors.js";
import type { RunResult } from "../../runs/events.js";
import { createRuntime, type Runtime, type RuntimeOptions } from "../../runtime.js";
import { sqliteCheckpointBytes } from "../support/checkpoint-bytes.js";
import { mainAgentPayload, subagentPayload } from "../support/runtime-fixture.js";

/**
 * `checkpointStorage`: with "delta" (the default) a checkpoint holds what its step wrote, not the
 * whole conversation, and every read (state, history, child threads) rebuilds it; "full" is
 * LangGraph's stock storage. Both on the embedded SQLite default, driven through the runtime as
 * a user does, with the offline model delegating to a subagent on every turn.
 */
describe("checkpoint storage", () => {
  const dirs: string[] = [];
  const runtimes: Runtime[] = [];
  afterEach(async () => {
    for (const runtime of runtimes.splice(0)) await runtime.close();
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  function dataDir(): string {
    const dir = mkdtempSync(join(tmpdir(), "storage-"));
    dirs.push(dir);
    return dir;
  }

  async function open(dir: string, options: Partial<RuntimeOptions> = {}): Promise<Runtime> {
    const runtime = await createRuntime({ dataDir: dir, env: {}, warn: () => {}, ...options });
    runtimes.push(runtime);
    await runtime.agents.ensure("alice", subagentPayload("worker", "offline"));
    await runtime.agents.ensure("alice", {
      ...mainAgentPayload("boss", "offline", ["worker"]),
      is_default: true,
    });
    return runtime;
  }

  async function close(runtime: Runtime): Promise<void> {
    runtimes.splice(runtimes.indexOf(runtime), 1);
    await runtime.close();
  }

  /** Runs `turns` turns on thread `t`, returning the stored bytes after each. */
  async function converse(runtime: Runtime, dir: string, turns: number): Promise<number[]> {
    const after: number[] = [sqliteCheckpointBytes(dir)];
    for (let turn = 1; turn <= turns; turn += 1) {
      await runtime.run({ uid: "alice", threadId: "t", input: `question number ${turn}` });
      after.push(sqliteCheckpointBytes(dir));
    }
    return after;
  }

  /** Bytes written per turn over turns `from`..`to` (1-based, inclusive). */
  function perTurn(after: number[], from: number, to: number): number {
    return ((after[to] ?? 0) - (after[from - 1] ?? 0)) / (to - from + 1);
  }

  /** What a reader sees of every checkpoint: each message's type, id and text. */
  async function seen(runtime: Runtime) {
    return (await runtime.history("alice", "t")).map((checkpoint) => ({
      messages: checkpoint.messages.map((m) => [m.getType(), m.id, m.text]),
      runs: checkpoint.subagentRuns.map((run) => [run.id, run.status, run.child_thread_id]),
    }));
  }

  it("delta: a fraction of the full storage's bytes, and every checkpoint reads back whole, with stable ids", async () => {
    const dir = dataDir();
    const fullDir = dataDir();
    const runtime = await open(dir);
    const full = await open(fullDir, { checkpointStorage: "full" });
    const after = await converse(runtime, dir, 24);
    const fullAfter = await converse(full, fullDir, 24);
    // The conversation is stored once per step as writes instead of in every checkpoint, and
    // the tool routing's task packets refer to it (test/runtime/linear-storage.int.test.ts).
    expect(after[24]).toBeLessThan(0.2 * (fullAfter[24] ?? 0));
    expect(perTurn(after, 21, 24)).toBeLessThan(0.1 * perTurn(fullAfter, 21, 24));

    const history = await runtime.history("alice", "t");
    const latest = history[0];
    if (!latest) throw new Error("no checkpoints");
    // Each turn: the question, the task call, its answer and the final answer.
    expect(latest.messages).toHaveLength(24 * 4);
    expect(latest.messages.map((m) => m.text).filter((t) => t.startsWith("question"))).toEqual(
      Array.from({ length: 24 }, (_, i) => `question number ${i + 1}`),
    );
    expect(latest.subagentRuns).toHaveLength(24);
    // Every message has an id (the question sent without one too), the same on every read.
    const ids = latest.messages.map((m) => m.id);
    expect(ids.every((id) => typeof id === "string" && id.length > 0)).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    expect(await seen(runtime)).toEqual(await seen(runtime));
    const state = await runtime.threads.state("alice", "t");
    const values = state?.values as { messages: { id: string }[] } | undefined;
    expect(values?.messages.map((m) => m.id)).toEqual(ids);
    // A child thread reads back whole too.
    const child = await runtime.childThread(
      "alice",
      latest.subagentRuns[23]?.child_thread_id ?? "",
    );
    expect(child.messages.map((m) => m.getType())).toEqual(["human", "ai"]);
    // 48 delegating turns and ~200 checkpoint reads.
  }, 120_000);

  it("delta with frequent snapshots reads every checkpoint as the full storage does", async () => {
    const fullDir = dataDir();
    const deltaDir = dataDir();
    const full = await open(fullDir, { checkpointStorage: "full" });
    const delta = await open(deltaDir, { deltaSnapshotFrequency: 3 });
    await converse(full, fullDir, 8);
    await converse(delta, deltaDir, 8);
    const texts = async (runtime: Runtime) =>
      (await runtime.history("alice", "t")).map((checkpoint) => ({
        step: checkpoint.step,
        messages: checkpoint.messages.map((m) => [m.getType(), m.text]),
        runs: checkpoint.subagentRuns.map((run) => [run.subagent_type, run.status]),
      }));
    const expected = await texts(full);
    expect(expected).toHaveLength((await delta.history("alice", "t")).length);
    expect(await texts(delta)).toEqual(expected);
    // Snapshots were written: some checkpoint stores the conversation itself.
    const db = new Database(join(deltaDir, "checkpoints.sqlite"), { readonly: true });
    try {
      const rows = db.prepare("select checkpoint from checkpoints").all() as {
        checkpoint: Buffer;
      }[];
      const withMessages = rows.filter((row) =>
        Object.hasOwn(JSON.parse(row.checkpoint.toString()).channel_values, "messages"),
      );
      expect(withMessages.length).toBeGreaterThan(0);
      expect(withMessages.length).toBeLessThan(rows.length / 2);
    } finally {
      db.close();
    }
  });

  it("a thread written one way continues the other way, both ways round", async () => {
    const dir = dataDir();
    const first = await open(dir, { checkpointStorage: "full" });
    await converse(first, dir, 2);
    await close(first);
    const second = await open(dir);
    await second.run({ uid: "alice", threadId: "t", input: "question number 3" });
    const afterDelta = await second.history("alice", "t");
    await close(second);
    const third = await open(dir, { checkpointStorage: "full" });
    await third.run({ uid: "alice", threadId: "t", input: "question number 4" });
    const [latest] = await third.history("alice", "t");
    expect(latest?.messages.filter((m) => m.getType() === "human").map((m) => m.text)).toEqual([
      "question number 1",
      "question number 2",
      "question number 3",
      "question number 4",
    ]);
    // The older checkpoints read the same whichever storage reads them.
    const again = await third.history("alice", "t");
    expect(again.slice(again.length - afterDelta.length).map((c) => c.messages.length)).toEqual(
      afterDelta.map((c) => c.messages.length),
    );
  });

  it("defaults to delta on our savers and to full on a saver passed in, unless the environment says", async () => {
    const stored = async (options: Partial<RuntimeOptions>) => {
      const runtime = await open(dataDir(), options);
      await runtime.run({ uid: "alice", threadId: "t", input: "question number 1" });
      const tuple = await runtime.checkpointer.getTuple({
        configurable: { thread_id: "t", checkpoint_ns: "" },
      });
      return Object.hasOwn(tuple?.checkpoint.channel_values ?? {}, "messages");
    };
    expect(await stored({})).toBe(false);
    expect(await stored({ checkpointer: "memory" })).toBe(false);
    expect(await stored({ checkpointer: "memory", checkpointStorage: "full" })).toBe(true);
    // A stock saver stores each step's Send packets whole, so delta would not be linear there.
    expect(await stored({ checkpointer: new MemorySaver() })).toBe(true);
    expect(await stored({ checkpointer: new MemorySaver(), checkpointStorage: "delta" })).toBe(
      false,
    );
    expect(await stored({ checkpointStorage: "full" })).toBe(true);
    // The environment chooses for `npm start` and Studio; the option still wins.
    const full = { SUBAGENT_GRAPH_CHECKPOINT_STORAGE: "full" };
    expect(await stored({ env: full })).toBe(true);
    expect(await stored({ env: full, checkpointStorage: "delta" })).toBe(false);
  });

  it.each(["memory", "sqlite"] as const)(
    "a run's result is what its thread holds after it, by run and by stream (%s, delta)",
    async (checkpointer) => {
      // Snapshots every 3 updates: `messages` and `subagent_runs` take theirs at different
      // checkpoints, so reading the thread walks past one channel's snapshots to the other's.
      const runtime = await open(dataDir(), { checkpointer, deltaSnapshotFrequency: 3 });
      const shape = (messages: BaseMessage[]) =>
        messages.map((m) => [m.getType(), m.id, m.content]);
      const check = async (result: RunResult) => {
        const state = await runtime.threads.state("alice", "t");
        if (!state) throw new Error("the thread has no state");
        const messages: BaseMessage[] = state.values.messages;
        expect(shape(result.messages)).toEqual(shape(messages));
        expect(result.subagentRuns).toEqual(state.values.subagent_runs);
        expect(result.output).toBe(messages.at(-1)?.content);
      };
      for (let turn = 1; turn <= 4; turn += 1) {
        const input = `question number ${turn}`;
        let result: RunResult | undefined;
        if (turn % 2 === 1) {
          result = await runtime.run({ uid: "alice", threadId: "t", input });
        } else {
          for await (const event of runtime.stream({ uid: "alice", threadId: "t", input })) {
            if (event.type === "run_finished") result = event.result;
          }
        }
        if (!result) throw new Error(`turn ${turn} gave no result`);
        // Every turn delegates once: its answer and all the records so far are in the result.
        expect(result.subagentRuns).toHaveLength(turn);
        expect(result.messages.filter((m) => m.getType() === "human")).toHaveLength(turn);
        await check(result);
      }
    },
  );

  it("refuses an unknown storage or a bad snapshot frequency before opening anything", async () => {
    const dir = join(dataDir(), "never-made");
    const refused = async (options: Partial<RuntimeOptions>) =>
      createRuntime({ dataDir: dir, env: {}, ...options }).then(
        () => {
          throw new Error("expected a refusal");
        },
        (error: unknown) => {
          if (!SubagentGraphError.isInstance(error)) throw error;
          return [error.code, error.field, error.message];
        },
      );
    const storage = await refused({ checkpointStorage: "zip" as never });
    expect(storage.slice(0, 2)).toEqual([ErrorCode.Validation, "checkpointStorage"]);
    expect(storage[2]).toContain('"zip"');
    const fromEnv = await refused({ env: { SUBAGENT_GRAPH_CHECKPOINT_STORAGE: "linear" } });
    expect(fromEnv.slice(0, 2)).toEqual([
      ErrorCode.Validation,
      "SUBAGENT_GRAPH_CHECKPOINT_STORAGE",
    ]);
    expect(fromEnv[2]).toContain('"linear" is not a storage: use "delta"');
    const frequency = await refused({ deltaSnapshotFrequency: 0 });
    expect(frequency.slice(0, 2)).toEqual([ErrorCode.Validation, "deltaSnapshotFrequency"]);
    expect(existsSync(dir)).toBe(false);
  });
});
