/**
 * `getDeltaChannelHistory` on every saver we ship, on a real graph: a 36-turn thread whose
 * `messages` is a `DeltaChannel` snapshotting every 5 updates and whose `tally` is another
 * snapshotting every 7 (so a walk for one crosses the other's snapshots), some turns writing
 * from two tasks of one superstep, and a fork from the middle that continues on its own branch.
 *
 * For every checkpoint of the thread (both branches): the saver's own `getDeltaChannelHistory`
 * (one SQL query on SQLite and PostgreSQL, a walk parsing only seeds in memory) returns exactly
 * what the base class's generic walk returns, and the values the graph rebuilds equal those of
 * the same run stored in full (`MessagesValue`, `ReducedValue`) on the same saver.
 */

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AIMessage, type BaseMessage, HumanMessage } from "@langchain/core/messages";
import type { RunnableConfig } from "@langchain/core/runnables";
import {
  DeltaValue,
  END,
  MessagesDeltaValue,
  MessagesValue,
  messagesDeltaReducer,
  START,
  StateGraph,
  StateSchema,
} from "@langchain/langgraph";
import {
  type BaseCheckpointSaver,
  type CheckpointTuple,
  isDeltaSnapshot,
  MemorySaver,
} from "@langchain/langgraph-checkpoint";
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import Database from "better-sqlite3";
import pg from "pg";
import { afterAll, describe, expect, inject, it } from "vitest";
import { z } from "zod";
import { listValue } from "../../checkpoints/channel-storage.js";
import { genericDeltaChannelHistory } from "../../checkpoints/delta-history.js";
import { DeltaHistoryMemorySaver } from "../../checkpoints/memory-saver.js";
import { ForkSafePostgresSaver } from "../../checkpoints/postgres-saver.js";
import { DeltaHistorySqliteSaver } from "../../checkpoints/sqlite-saver.js";
import { createTestDatabase } from "../support/postgres-cluster.js";

const TURNS = 36;
const FORK_TURN = 18;
const FORK_TURNS = 6;
const SNAPSHOT_FREQUENCY = 5;
const TALLY_SNAPSHOT_FREQUENCY = 7;

/** `messages` as a DeltaChannel that snapshots every {@link SNAPSHOT_FREQUENCY} updates. */
const DeltaMessages = new DeltaValue(MessagesDeltaValue.valueSchema, {
  inputSchema: MessagesDeltaValue.inputSchema,
  reducer: messagesDeltaReducer,
  snapshotFrequency: SNAPSHOT_FREQUENCY,
});

/**
 * START → `reply` (one AI message), or, when the user says "fan out", → `left` and `right` in
 * one superstep (two tasks writing `messages` at the same checkpoint).
 */
function buildGraph(storage: "full" | "delta", checkpointer: BaseCheckpointSaver) {
  const State = new StateSchema({
    messages: storage === "delta" ? DeltaMessages : MessagesValue,
    // The nodes that answered, in order.
    tally: listValue(
      { kind: storage, snapshotFrequency: TALLY_SNAPSHOT_FREQUENCY },
      z.array(z.string()),
      z.array(z.string()).optional(),
      (current, update) => [...current, ...(update ?? [])],
    ),
  });
  const answer = (node: string) => (state: { messages: BaseMessage[] }) => {
    const last = state.messages.at(-1);
    const id = `${last?.id ?? "none"}-${node}`;
    return {
      messages: [new AIMessage({ id, content: `${node} saw ${state.messages.length}` })],
      tally: [node],
    };
  };
  return new StateGraph(State)
    .addNode("reply", answer("reply"))
    .addNode("left", answer("left"))
    .addNode("right", answer("right"))
    .addConditionalEdges(
      START,
      (state) =>
        String(state.messages.at(-1)?.content).includes("fan out") ? ["left", "right"] : "reply",
      ["reply", "left", "right"],
    )
    .addEdge("reply", END)
    .addEdge("left", END)
    .addEdge("right", END)
    .compile({ checkpointer });
}

type Graph = ReturnType<typeof buildGraph>;

const fansOut = (turn: number) => turn % 7 === 3;
/** Messages `turns` turns add: a question and one answer, or two on a fan-out turn. */
const messagesOf = (turns: number) =>
  Array.from({ length: turns }, (_, i) => (fansOut(i + 1) ? 3 : 2)).reduce((a, b) => a + b, 0);

const human = (id: string, turn: number) =>
  new HumanMessage({ id, content: fansOut(turn) ? `turn ${turn}: fan out` : `turn ${turn}` });

/** What a message is, for comparing messages rebuilt from deltas with stored ones. */
const shape = (messages: BaseMessage[]) => messages.map((m) => [m.type, m.id, m.content]);

/** Runs the thread: {@link TURNS} turns, then a fork at turn {@link FORK_TURN} that goes on. */
async function runThread(graph: Graph, threadId: string): Promise<RunnableConfig> {
  const config = { configurable: { thread_id: threadId }, durability: "sync" as const };
  let forkFrom: RunnableConfig | undefined;
  for (let turn = 1; turn <= TURNS; turn += 1) {
    await graph.invoke({ messages: [human(`h${turn}`, turn)] }, config);
    if (turn === FORK_TURN) forkFrom = (await graph.getState(config)).config;
  }
  if (forkFrom === undefined) throw new Error("no fork point");
  // The fork edits the fork point's last AI message (same id: replaces it) and goes on.
  const before = (await graph.getState(forkFrom)).values.messages.at(-1);
  let fork = await graph.updateState(forkFrom, {
    messages: [new AIMessage({ id: before?.id, content: "edited on the fork" })],
  });
  for (let turn = 1; turn <= FORK_TURNS; turn += 1) {
    const continued = { ...fork, durability: "sync" as const };
    await graph.invoke({ messages: [human(`fork-h${turn}`, turn)] }, continued);
    fork = (await graph.getState({ configurable: { thread_id: threadId } })).config;
  }
  return fork;
}

/** Every checkpoint of the thread, newest first (both branches). */
async function checkpoints(saver: BaseCheckpointSaver, threadId: string) {
  const all: CheckpointTuple[] = [];
  for await (const tuple of saver.list({ configurable: { thread_id: threadId } })) all.push(tuple);
  return all;
}

interface CountedSaver {
  saver: BaseCheckpointSaver;
  /** SQL statements run so far (undefined: the saver runs none). */
  queries(): number | undefined;
  close(): Promise<void>;
}

const sqliteDir = mkdtempSync(join(tmpdir(), "sg-delta-history-"));
afterAll(() => rmSync(sqliteDir, { recursive: true, force: true }));

/** Counts `pool.query` calls: every statement either saver runs goes through it. */
function countPoolQueries(pool: pg.Pool): () => number {
  let count = 0;
  const target = pool as unknown as { query: (...args: unknown[]) => unknown };
  const query = target.query.bind(pool);
  target.query = (...args: unknown[]) => {
    count += 1;
    return query(...args);
  };
  return () => count;
}

const SAVERS: { name: string; open(): Promise<CountedSaver> }[] = [
  {
    name: "MemorySaver",
    open: async () => ({
      saver: new MemorySaver(),
      queries: () => undefined,
      close: async () => {},
    }),
  },
  {
    name: "DeltaHistoryMemorySaver",
    open: async () => ({
      saver: new DeltaHistoryMemorySaver(),
      queries: () => undefined,
      close: async () => {},
    }),
  },
  {
    name: "DeltaHistorySqliteSaver",
    open: async () => {
      let count = 0;
      // better-sqlite3 calls `verbose` with every statement it runs.
      const db = new Database(join(sqliteDir, "checkpoints.sqlite"), {
        verbose: () => {
          count += 1;
        },
      });
      return {
        saver: new DeltaHistorySqliteSaver(db),
        queries: () => count,
        close: async () => {
          db.close();
        },
      };
    },
  },
  {
    name: "ForkSafePostgresSaver",
    open: async () => {
      const url = await createTestDatabase(inject("postgresUrl"), "delta");
      const saver = await ForkSafePostgresSaver.open(url, { max: 4 });
      return { saver, queries: countPoolQueries(saver.connections), close: () => saver.close() };
    },
  },
];

describe.each(SAVERS)("getDeltaChannelHistory on $name", ({ open }) => {
  it("equals the generic walk on every checkpoint, and rebuilds the full-storage messages", async () => {
    const opened = await open();
    try {
      const { saver } = opened;
      const delta = buildGraph("delta", saver);
      const full = buildGraph("full", saver);
      const deltaHead = await runThread(delta, "t-delta");
      const fullHead = await runThread(full, "t-full");

      const deltaCheckpoints = await checkpoints(saver, "t-delta");
      const fullCheckpoints = await checkpoints(saver, "t-full");
      expect(deltaCheckpoints.length).toBe(fullCheckpoints.length);
      // Turns of 3 checkpoints (input, loop, node), the fork's update, the fork's turns.
      expect(deltaCheckpoints.length).toBe(3 * (TURNS + FORK_TURNS) + 1);
      // Snapshots were written and crossed: every DeltaSnapshot seeds a later read.
      const snapshotsOf = (channel: string) =>
        deltaCheckpoints.filter((t) => isDeltaSnapshot(t.checkpoint.channel_values[channel]));
      expect(snapshotsOf("messages").length).toBeGreaterThanOrEqual(
        (2 * TURNS) / SNAPSHOT_FREQUENCY - 2,
      );
      expect(snapshotsOf("tally").length).toBeGreaterThanOrEqual(
        TURNS / TALLY_SNAPSHOT_FREQUENCY - 1,
      );

      let seeded = 0;
      let tallySeededPastMessages = 0;
      for (const [index, tuple] of deltaCheckpoints.entries()) {
        const options = { config: tuple.config, channels: ["messages", "tally"] };
        const own = await saver.getDeltaChannelHistory(options);
        expect(own).toEqual(await genericDeltaChannelHistory(saver, options));
        // One channel alone, after a read of both (the memory saver remembers what it parsed).
        const tallyOnly = { config: tuple.config, channels: ["tally"] };
        expect(await saver.getDeltaChannelHistory(tallyOnly)).toEqual({ tally: own.tally });
        if (own.messages?.seed !== undefined) seeded += 1;
        // The walk went on past `messages`' snapshot to find `tally`'s.
        const messageWrites = own.messages?.writes.length ?? 0;
        if (own.tally?.seed !== undefined && (own.tally.writes.length ?? 0) > messageWrites) {
          tallySeededPastMessages += 1;
        }

        const fullTuple = fullCheckpoints[index];
        if (fullTuple === undefined) throw new Error(`no full-storage checkpoint ${index}`);
        const rebuilt = (await delta.getState(tuple.config)).values;
        const stored = (await full.getState(fullTuple.config)).values;
        expect(shape(rebuilt.messages)).toEqual(shape(stored.messages));
        // Before any write a delta channel reads as its empty value, a reduced one as unset.
        expect(rebuilt.tally).toEqual(stored.tally ?? []);
      }
      expect(seeded).toBeGreaterThan(deltaCheckpoints.length / 2);
      expect(tallySeededPastMessages).toBeGreaterThan(10);

      // Both heads: the fork read its own branch (the edit, not the original turns past FORK_TURN).
      const forkMessages: BaseMessage[] = (await delta.getState(deltaHead)).values.messages;
      expect(shape(forkMessages)).toEqual(shape((await full.getState(fullHead)).values.messages));
      expect(forkMessages.map((m) => m.content)).toContain("edited on the fork");
      expect(forkMessages.map((m) => m.id)).not.toContain(`h${FORK_TURN + 1}`);
      expect(forkMessages).toHaveLength(messagesOf(FORK_TURN) + messagesOf(FORK_TURNS));
    } finally {
      await opened.close();
    }
    // ~130 checkpoints, each read three ways (the generic walk reads every ancestor).
  }, 120_000);

  it("reads with one SQL query where the generic walk runs one per ancestor", async () => {
    const opened = await open();
    try {
      const { saver } = opened;
      const graph = buildGraph("delta", saver);
      const config = { configurable: { thread_id: "t-count" }, durability: "sync" as const };
      // 2 message updates a turn: 7 turns end 4 updates past the snapshot at update 10.
      for (let turn = 1; turn <= 7; turn += 1) {
        await graph.invoke(
          { messages: [new HumanMessage({ id: `c${turn}`, content: "hi" })] },
          config,
        );
      }
      const head = await saver.getTuple({ configurable: { thread_id: "t-count" } });
      if (head === undefined) throw new Error("no head");
      const options = { config: head.config, channels: ["messages"] };

      const before = opened.queries();
      const own = await saver.getDeltaChannelHistory(options);
      const afterOwn = opened.queries();
      const generic = await genericDeltaChannelHistory(saver, options);
      const afterGeneric = opened.queries();
      expect(own).toEqual(generic);
      expect(own.messages?.writes.length).toBe(4);
      if (before === undefined || afterOwn === undefined || afterGeneric === undefined) {
        return; // MemorySaver runs no SQL: its override reads its maps directly.
      }
      expect(afterOwn - before).toBe(1);
      // The generic walk: the head, then each ancestor back to the snapshot.
      expect(afterGeneric - afterOwn).toBeGreaterThan(5);
    } finally {
      await opened.close();
    }
  });
});

/**
 * A database written by the stock saver (no `task_path` column): ours adds the column, reads
 * the old thread as the stock saver does (old writes have no path and keep their task-id
 * order), and continues it.
 */
const UPGRADES: {
  name: string;
  open(): Promise<{
    stock: BaseCheckpointSaver;
    ours: () => Promise<BaseCheckpointSaver>;
    close(): Promise<void>;
  }>;
}[] = [
  {
    name: "SqliteSaver → DeltaHistorySqliteSaver",
    open: async () => {
      const file = join(sqliteDir, "upgrade.sqlite");
      const stock = SqliteSaver.fromConnString(file);
      let ours: DeltaHistorySqliteSaver | undefined;
      return {
        stock,
        ours: async () => {
          ours = DeltaHistorySqliteSaver.fromConnString(file);
          return ours;
        },
        close: async () => {
          stock.db.close();
          ours?.db.close();
        },
      };
    },
  },
  {
    name: "PostgresSaver → ForkSafePostgresSaver",
    open: async () => {
      const url = await createTestDatabase(inject("postgresUrl"), "upgrade");
      const stock = new PostgresSaver(new pg.Pool({ connectionString: url, max: 2 }));
      await stock.setup();
      let ours: ForkSafePostgresSaver | undefined;
      return {
        stock,
        ours: async () => {
          ours = await ForkSafePostgresSaver.open(url, { max: 2 });
          return ours;
        },
        close: async () => {
          await stock.end();
          await ours?.close();
        },
      };
    },
  },
];

describe.each(UPGRADES)("$name", ({ open }) => {
  it("reads and continues a delta thread the stock saver wrote", async () => {
    const opened = await open();
    try {
      const config = { configurable: { thread_id: "t-old" }, durability: "sync" as const };
      const old = buildGraph("delta", opened.stock);
      for (let turn = 1; turn <= 8; turn += 1) {
        await old.invoke({ messages: [human(`o${turn}`, turn)] }, config);
      }
      const before = shape((await old.getState(config)).values.messages);

      const saver = await opened.ours();
      const graph = buildGraph("delta", saver);
      expect(shape((await graph.getState(config)).values.messages)).toEqual(before);
      await graph.invoke({ messages: [human("n1", 10)] }, config);
      const after: BaseMessage[] = (await graph.getState(config)).values.messages;
      expect(shape(after).slice(0, before.length)).toEqual(before);
      // Turn 10 fans out: its two answers in task-path order (left before right).
      expect(after.slice(before.length).map((m) => m.id)).toEqual(["n1", "n1-left", "n1-right"]);
      const head = await saver.getTuple(config);
      if (head === undefined) throw new Error("no head");
      const options = { config: head.config, channels: ["messages"] };
      expect(await saver.getDeltaChannelHistory(options)).toEqual(
        await genericDeltaChannelHistory(saver, options),
      );
    } finally {
      await opened.close();
    }
  });
});
