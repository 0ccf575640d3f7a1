import { HumanMessage } from "@langchain/core/messages";
import type { RunnableConfig } from "@langchain/core/runnables";
import { tool } from "@langchain/core/tools";
import { Command, interrupt } from "@langchain/langgraph";
import {
  type BaseCheckpointSaver,
  type CheckpointTuple,
  type PendingWrite,
  TASKS,
} from "@langchain/langgraph-checkpoint";
import Database from "better-sqlite3";
import { createAgent } from "langchain";
import { afterAll, describe, expect, inject, it } from "vitest";
import { z } from "zod";
import { agentStateOption, resolveChannelStorage } from "../../checkpoints/channel-storage.js";
import { ForkSafePostgresSaver } from "../../checkpoints/postgres-saver.js";
import {
  SendCompactingPostgresSaver,
  SendCompactingSqliteSaver,
} from "../../checkpoints/send-compacting-savers.js";
import { MIN_REF_BYTES, type SendRefStats } from "../../checkpoints/send-refs.js";
import { DeltaHistorySqliteSaver } from "../../checkpoints/sqlite-saver.js";
import { ScriptedChatModel } from "../../models/scripted.js";
import { createTestDatabase } from "../support/postgres-cluster.js";

const TURNS = 6;

/**
 * No packets as null: the stock PostgresSaver stores an empty `__pregel_tasks` list as no value
 * (its `empty` blob), which a read returns as absent.
 */
const noPackets = (v: unknown) => (Array.isArray(v) && v.length === 0 ? null : (v ?? null));

/** Records what LangGraph handed the saver, serialized, before the saver compacts it. */
function recording<T extends BaseCheckpointSaver>(saver: T) {
  const writes = new Map<string, string>();
  const checkpoints = new Map<string, string>();
  const ser = async (v: unknown) => {
    const [t, d] = await saver.serde.dumpsTyped(v);
    return `${t}:${Buffer.from(d).toString("base64")}`;
  };
  // What the stock saver would read back: the value through the serializer and back.
  const stock = async (v: unknown) => {
    const [t, d] = await saver.serde.dumpsTyped(v);
    return ser(await saver.serde.loadsTyped(t, d));
  };
  const putWrites = saver.putWrites.bind(saver);
  saver.putWrites = async (
    config: RunnableConfig,
    ws: PendingWrite[],
    taskId: string,
    path?: string,
  ) => {
    let n = 0;
    for (const [ch, v] of ws) {
      if (ch === TASKS)
        writes.set(`${config.configurable?.checkpoint_id}/${taskId}/${n++}`, await stock(v));
    }
    return putWrites(config, ws, taskId, path);
  };
  const put = saver.put.bind(saver);
  saver.put = async (config, checkpoint, metadata, newVersions) => {
    checkpoints.set(checkpoint.id, await stock(noPackets(checkpoint.channel_values[TASKS])));
    return put(config, checkpoint, metadata, newVersions);
  };
  return { writes, checkpoints, ser };
}

/**
 * Checks that each `__pregel_tasks` write of `tuple` reads back byte-equal to what LangGraph
 * handed the saver (as `recording` saw it); returns how many it checked.
 */
async function expectPacketWritesReadBack(
  tuple: CheckpointTuple,
  seen: ReturnType<typeof recording>,
): Promise<number> {
  const id = tuple.config.configurable?.checkpoint_id as string;
  const counters = new Map<string, number>();
  let checked = 0;
  for (const [taskId, ch, v] of tuple.pendingWrites ?? []) {
    if (ch !== TASKS) continue;
    const n = counters.get(taskId) ?? 0;
    counters.set(taskId, n + 1);
    expect(await seen.ser(v)).toBe(seen.writes.get(`${id}/${taskId}/${n}`));
    checked++;
  }
  return checked;
}

const runs = new Map<string, number>();

function script(turns: number, failOnce: { armed: boolean }) {
  const steps = [];
  for (let t = 0; t < turns; t++) {
    steps.push({
      reply: {
        toolCalls: [
          { name: "echo", args: { text: `a${t}` }, id: `c${t}a` },
          { name: "echo", args: { text: `b${t}` }, id: `c${t}b` },
        ],
      },
    });
    steps.push({ reply: { text: `answer ${t} `.repeat(50) } });
  }
  const model = new ScriptedChatModel("main", steps);
  const echo = tool(
    async ({ text }: { text: string }) => {
      runs.set(text, (runs.get(text) ?? 0) + 1);
      if (text === "b3" && failOnce.armed) {
        // Pauses the superstep with a3's result saved as a pending write; resuming runs b3
        // again from its stored packet (read back by reference) and must not rerun a3.
        const answer = interrupt("approve b3?");
        if (answer !== "yes") throw new Error("bad resume");
      }
      return `echo ${text} `.repeat(20);
    },
    { name: "echo", description: "echo", schema: z.object({ text: z.string() }) },
  );
  return { model, echo };
}

async function run(saver: BaseCheckpointSaver, failOnce = { armed: false }) {
  const { model, echo } = script(TURNS, failOnce);
  const agent = createAgent({
    model,
    tools: [echo],
    checkpointer: saver,
    ...agentStateOption(resolveChannelStorage({ kind: "delta", snapshotFrequency: 250 })),
  });
  const config = { configurable: { thread_id: "t" } };
  for (let t = 0; t < TURNS; t++) {
    await agent.invoke({ messages: [new HumanMessage(`turn ${t} `.repeat(40))] } as never, config);
    const paused = await agent.graph.getState(config);
    if (paused.next.length > 0) {
      failOnce.armed = true;
      await agent.invoke(new Command({ resume: "yes" }), config);
      failOnce.armed = false;
    }
  }
  return agent.graph.getState(config);
}

/** Bytes of stored task packets: `w` in writes, `c` in checkpoints (Postgres: their blobs). */
interface Bytes {
  w: number;
  c: number;
}

/** A saver under test, compacting or plain, and how to measure and release it. */
interface Opened {
  saver: BaseCheckpointSaver;
  stats: SendRefStats | undefined;
  bytes(): Promise<Bytes>;
  close(): Promise<void>;
}

const sqliteBytes = (db: Database.Database) => async () =>
  db
    .prepare(
      `SELECT (SELECT coalesce(sum(length(value)), 0) FROM writes WHERE channel = '${TASKS}') AS w,
              (SELECT coalesce(sum(length(checkpoint)), 0) FROM checkpoints) AS c`,
    )
    .get() as Bytes;

async function openSqlite(compacting: boolean): Promise<Opened> {
  const db = new Database(":memory:");
  const saver = compacting ? new SendCompactingSqliteSaver(db) : new DeltaHistorySqliteSaver(db);
  return {
    saver,
    stats: saver instanceof SendCompactingSqliteSaver ? saver.stats : undefined,
    bytes: sqliteBytes(db),
    close: async () => {
      db.close();
    },
  };
}

async function openPostgres(compacting: boolean): Promise<Opened> {
  const url = await createTestDatabase(inject("postgresUrl"), "sendref");
  const saver = compacting
    ? await SendCompactingPostgresSaver.open(url, { max: 3 })
    : await ForkSafePostgresSaver.open(url, { max: 3 });
  return {
    saver,
    stats: saver instanceof SendCompactingPostgresSaver ? saver.stats : undefined,
    bytes: async () => {
      // A checkpoint's packets are the `__pregel_tasks` blob its version names.
      const { rows } = await saver.connections.query<{ w: string; c: string }>(
        `SELECT (SELECT coalesce(sum(octet_length(blob)), 0) FROM checkpoint_writes WHERE channel = $1) AS w,
                (SELECT coalesce(sum(octet_length(blob)), 0) FROM checkpoint_blobs WHERE channel = $1) AS c`,
        [TASKS],
      );
      return { w: Number(rows[0]?.w ?? 0), c: Number(rows[0]?.c ?? 0) };
    },
    close: () => saver.close(),
  };
}

describe.each([
  { name: "SQLite", open: openSqlite },
  { name: "PostgreSQL", open: openPostgres },
])("Send packets stored by reference (prototype) on $name", ({ open }) => {
  const opened: Opened[] = [];
  afterAll(async () => {
    for (const o of opened.splice(0)) await o.close();
  });
  /**
   * A saver; a compacting one proves a reference for every packet state, however small, unless
   * `minRefBytes` (its default, MIN_REF_BYTES) is given.
   */
  const make = async (compacting: boolean, minRefBytes = 0) => {
    const o = await open(compacting);
    if (
      o.saver instanceof SendCompactingSqliteSaver ||
      o.saver instanceof SendCompactingPostgresSaver
    ) {
      o.saver.sendRefs.minRefBytes = minRefBytes;
    }
    opened.push(o);
    return o;
  };

  it("stores packets' messages by reference and reads back exactly what LangGraph wrote", async () => {
    const compact = await make(true);
    const { saver } = compact;
    const stats = compact.stats as SendRefStats;
    const seen = recording(saver);
    const state = await run(saver);
    expect(stats.stateRefs).toBe(TURNS * 2);
    expect(stats.stateInline).toBe(0);
    expect(stats.writeRefs).toBe(TURNS * 2);

    // Every stored packet reads back byte-equal to what LangGraph handed the saver.
    let checkedWrites = 0;
    let checkedCheckpoints = 0;
    for await (const tuple of saver.list({ configurable: { thread_id: "t" } })) {
      const id = tuple.config.configurable?.checkpoint_id as string;
      checkedWrites += await expectPacketWritesReadBack(tuple, seen);
      const again = await saver.getTuple(tuple.config);
      expect(await seen.ser(noPackets(again?.checkpoint.channel_values[TASKS]))).toBe(
        seen.checkpoints.get(id),
      );
      checkedCheckpoints++;
    }
    expect(checkedWrites).toBe(TURNS * 2);
    expect(checkedCheckpoints).toBe(seen.checkpoints.size);
    expect(state.values.messages).toHaveLength(TURNS * 5);

    // Same conversation on the plain saver: same final messages, more packet bytes.
    const plainSaver = await make(false);
    const plain = await run(plainSaver.saver);
    expect(plain.values.messages.map((m: { content: unknown }) => m.content)).toEqual(
      state.values.messages.map((m: { content: unknown }) => m.content),
    );
    const a = await compact.bytes();
    const b = await plainSaver.bytes();
    console.log("packet bytes compact/plain: writes", a.w, b.w, "checkpoints", a.c, b.c);
    expect(a.w).toBeLessThan(b.w / 3);
    expect(a.c).toBeLessThan(b.c);
  });

  it("leaves a short thread's packets inline, and refers to them once it has grown", async () => {
    const compact = await make(true, MIN_REF_BYTES);
    const stats = compact.stats as SendRefStats;
    const seen = recording(compact.saver);
    const state = await run(compact.saver);
    // The first turn's step is small: inline; the later ones are references.
    expect(stats.stateSmall).toBeGreaterThanOrEqual(2);
    expect(stats.stateRefs).toBeGreaterThanOrEqual(2);
    expect(stats.stateSmall + stats.stateRefs + stats.stateInline).toBe(TURNS * 2);
    expect(stats.stateInline).toBe(0);
    // Every stored packet still reads back byte-equal to what LangGraph handed the saver.
    let checked = 0;
    for await (const tuple of compact.saver.list({ configurable: { thread_id: "t" } })) {
      checked += await expectPacketWritesReadBack(tuple, seen);
    }
    expect(checked).toBe(TURNS * 2);
    expect(state.values.messages).toHaveLength(TURNS * 5);
  });

  it("resumes a turn whose tool crashed from a referenced packet", async () => {
    const compact = await make(true);
    runs.clear();
    const failOnce = { armed: true };
    const state = await run(compact.saver, failOnce);
    // a3 finished before the pause and is not run again on resume; b3 ran twice (paused, resumed).
    expect(runs.get("a3")).toBe(1);
    expect(runs.get("b3")).toBe(2);
    const contents = state.values.messages.map((m: { content: unknown }) => String(m.content));
    expect(contents.filter((c: string) => c.startsWith("echo b3"))).toHaveLength(1);
    expect(state.values.messages).toHaveLength(TURNS * 5);
    expect(compact.stats?.stateInline).toBe(0);
  });
});
