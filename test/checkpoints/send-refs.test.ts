import { HumanMessage } from "@langchain/core/messages";
import type { RunnableConfig } from "@langchain/core/runnables";
import { tool } from "@langchain/core/tools";
import { Command, interrupt, messagesDeltaReducer } from "@langchain/langgraph";
import { type PendingWrite, TASKS } from "@langchain/langgraph-checkpoint";
import Database from "better-sqlite3";
import { createAgent } from "langchain";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { agentStateOption, resolveChannelStorage } from "../../checkpoints/channel-storage.js";
import { SendCompactingSqliteSaver } from "../../checkpoints/send-refs.js";
import { DeltaHistorySqliteSaver } from "../../checkpoints/sqlite-saver.js";
import { ScriptedChatModel } from "../../models/scripted.js";

const TURNS = 6;

/** Records what LangGraph handed the saver, serialized, before the saver compacts it. */
function recording<T extends DeltaHistorySqliteSaver>(saver: T) {
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
  saver.put = async (config, checkpoint, metadata) => {
    checkpoints.set(checkpoint.id, await stock(checkpoint.channel_values[TASKS] ?? null));
    return put(config, checkpoint, metadata);
  };
  return { writes, checkpoints, ser };
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

async function run(saver: DeltaHistorySqliteSaver, failOnce = { armed: false }) {
  const { model, echo } = script(TURNS, failOnce);
  const agent = createAgent({
    model,
    tools: [echo],
    checkpointer: saver,
    ...agentStateOption(resolveChannelStorage({ kind: "delta", snapshotFrequency: 250 }, saver)),
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

const taskBytes = (db: Database.Database) =>
  db
    .prepare(
      `SELECT (SELECT coalesce(sum(length(value)), 0) FROM writes WHERE channel = '${TASKS}') AS w,
              (SELECT coalesce(sum(length(checkpoint)), 0) FROM checkpoints) AS c`,
    )
    .get() as { w: number; c: number };

describe("Send packets stored by reference (prototype)", () => {
  it("stores packets' messages by reference and reads back exactly what LangGraph wrote", async () => {
    const db = new Database(":memory:");
    const saver = new SendCompactingSqliteSaver(db, { messages: messagesDeltaReducer as never });
    const seen = recording(saver);
    const state = await run(saver);
    expect(saver.stats.stateRefs).toBe(TURNS * 2);
    expect(saver.stats.stateInline).toBe(0);
    expect(saver.stats.writeRefs).toBe(TURNS * 2);

    // Every stored packet reads back byte-equal to what LangGraph handed the saver.
    let checkedWrites = 0;
    let checkedCheckpoints = 0;
    for await (const tuple of saver.list({ configurable: { thread_id: "t" } })) {
      const id = tuple.config.configurable?.checkpoint_id as string;
      const counters = new Map<string, number>();
      for (const [taskId, ch, v] of tuple.pendingWrites ?? []) {
        if (ch !== TASKS) continue;
        const n = counters.get(taskId) ?? 0;
        counters.set(taskId, n + 1);
        expect(await seen.ser(v)).toBe(seen.writes.get(`${id}/${taskId}/${n}`));
        checkedWrites++;
      }
      const again = await saver.getTuple(tuple.config);
      expect(await seen.ser(again?.checkpoint.channel_values[TASKS] ?? null)).toBe(
        seen.checkpoints.get(id),
      );
      checkedCheckpoints++;
    }
    expect(checkedWrites).toBe(TURNS * 2);
    expect(checkedCheckpoints).toBe(seen.checkpoints.size);
    expect(state.values.messages).toHaveLength(TURNS * 5);

    // Same conversation on the plain saver: same final messages, more packet bytes.
    const plainDb = new Database(":memory:");
    const plain = await run(new DeltaHistorySqliteSaver(plainDb));
    expect(plain.values.messages.map((m: { content: unknown }) => m.content)).toEqual(
      state.values.messages.map((m: { content: unknown }) => m.content),
    );
    const a = taskBytes(db);
    const b = taskBytes(plainDb);
    console.log("packet write bytes compact/plain", a.w, b.w, "checkpoint bytes", a.c, b.c);
    expect(a.w).toBeLessThan(b.w / 3);
  });

  it("resumes a turn whose tool crashed from a referenced packet", async () => {
    const saver = new SendCompactingSqliteSaver(new Database(":memory:"), {
      messages: messagesDeltaReducer as never,
    });
    runs.clear();
    const failOnce = { armed: true };
    const state = await run(saver, failOnce);
    // a3 finished before the pause and is not run again on resume; b3 ran twice (paused, resumed).
    expect(runs.get("a3")).toBe(1);
    expect(runs.get("b3")).toBe(2);
    const contents = state.values.messages.map((m: { content: unknown }) => String(m.content));
    expect(contents.filter((c: string) => c.startsWith("echo b3"))).toHaveLength(1);
    expect(state.values.messages).toHaveLength(TURNS * 5);
    expect(saver.stats.stateInline).toBe(0);
  });
});
