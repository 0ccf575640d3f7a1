/**
 * Measurement (not a test, not part of `npm run bench`): what delta storage of `messages` costs
 * and saves on each saver, and what the one-query `getDeltaChannelHistory` overrides buy.
 *
 *   node --expose-gc --import tsx bench/delta-history.ts [turns…]   (default: 50 200)
 *
 * For each saver (memory, SQLite, PostgreSQL) and each thread length, two `createAgent` threads
 * of the same conversation (a ~400-character question and answer per turn, scripted model), one
 * with the default `messages` (full storage) and one with `MessagesDeltaValue` (delta storage,
 * snapshot every 100 updates, the upstream default). Reports the thread's checkpoint payload
 * bytes (checkpoints, metadata, blobs, writes), and `getState` p50 at the head: full storage,
 * delta storage through the saver's override, delta storage through the base class's generic
 * walk (one `getTuple` per ancestor), plus `getDeltaChannelHistory` alone both ways.
 */

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { HumanMessage } from "@langchain/core/messages";
import type { RunnableConfig } from "@langchain/core/runnables";
import { MessagesDeltaValue, StateSchema } from "@langchain/langgraph";
import {
  type BaseCheckpointSaver,
  type DeltaChannelHistory,
  MemorySaver,
} from "@langchain/langgraph-checkpoint";
import { createAgent } from "langchain";
import { genericDeltaChannelHistory } from "../checkpoints/delta-history.js";
import { ForkSafePostgresSaver } from "../checkpoints/postgres-saver.js";
import { DeltaHistorySqliteSaver } from "../checkpoints/sqlite-saver.js";
import { ScriptedChatModel } from "../models/scripted.js";
import { freshPostgresDatabase, stopPostgres } from "./lib/postgres.js";
import { percentile } from "./lib/stats.js";
import { timeMs } from "./lib/timing.js";

type HistoryOptions = { config: RunnableConfig; channels: string[] };

/** The same savers reading `DeltaChannel`s with the base class's walk, for comparison. */
class GenericMemorySaver extends MemorySaver {
  override getDeltaChannelHistory(o: HistoryOptions): Promise<Record<string, DeltaChannelHistory>> {
    return genericDeltaChannelHistory(this, o);
  }
}
class GenericSqliteSaver extends DeltaHistorySqliteSaver {
  override getDeltaChannelHistory(o: HistoryOptions): Promise<Record<string, DeltaChannelHistory>> {
    return genericDeltaChannelHistory(this, o);
  }
}
class GenericPostgresSaver extends ForkSafePostgresSaver {
  override getDeltaChannelHistory(o: HistoryOptions): Promise<Record<string, DeltaChannelHistory>> {
    return genericDeltaChannelHistory(this, o);
  }
}

interface SaverPair {
  name: string;
  saver: BaseCheckpointSaver;
  /** The same storage, read with the generic walk. */
  generic: BaseCheckpointSaver;
  /** Payload bytes of a thread's checkpoints, metadata, blobs and writes. */
  bytes(threadId: string): Promise<number>;
  close(): Promise<void>;
}

const TEXT = "lorem ipsum dolor sit amet ".repeat(15).slice(0, 400);

async function openPairs(dir: string): Promise<SaverPair[]> {
  const memory = new MemorySaver();
  const memoryGeneric = new GenericMemorySaver();
  // Same maps: the generic walk reads what the measured saver wrote.
  memoryGeneric.storage = memory.storage;
  memoryGeneric.writes = memory.writes;
  const pairs: SaverPair[] = [
    {
      name: "memory",
      saver: memory,
      generic: memoryGeneric,
      bytes: async (threadId) => {
        let total = 0;
        for (const ns of Object.values(memory.storage[threadId] ?? {})) {
          for (const [checkpoint, metadata] of Object.values(ns)) {
            total += checkpoint.byteLength + metadata.byteLength;
          }
        }
        for (const [key, writes] of Object.entries(memory.writes)) {
          if ((JSON.parse(key) as string[])[0] !== threadId) continue;
          for (const write of Object.values(writes)) total += write[2].byteLength;
        }
        return total;
      },
      close: async () => {},
    },
  ];
  const file = join(dir, "checkpoints.sqlite");
  const sqlite = DeltaHistorySqliteSaver.fromConnString(file);
  const sqliteGeneric = new GenericSqliteSaver(sqlite.db);
  pairs.push({
    name: "sqlite",
    saver: sqlite,
    generic: sqliteGeneric,
    bytes: async (threadId) => {
      const row = sqlite.db
        .prepare(
          `SELECT (SELECT coalesce(sum(length(checkpoint) + length(metadata)), 0)
                     FROM checkpoints WHERE thread_id = @t)
                + (SELECT coalesce(sum(length(value)), 0) FROM writes WHERE thread_id = @t) AS b`,
        )
        .get({ t: threadId }) as { b: number };
      return row.b;
    },
    close: async () => {
      sqlite.db.close();
    },
  });
  const url = await freshPostgresDatabase("delta");
  if (url !== undefined) {
    const postgres = await ForkSafePostgresSaver.open(url, { max: 2 });
    const postgresGeneric = new GenericPostgresSaver(postgres.connections);
    pairs.push({
      name: "postgres",
      saver: postgres,
      generic: postgresGeneric,
      bytes: async (threadId) => {
        const { rows } = await postgres.connections.query<{ b: string }>(
          `SELECT (SELECT coalesce(sum(pg_column_size(checkpoint) + pg_column_size(metadata)), 0)
                     FROM checkpoints WHERE thread_id = $1)
                + (SELECT coalesce(sum(length(blob)), 0) FROM checkpoint_blobs WHERE thread_id = $1)
                + (SELECT coalesce(sum(length(blob)), 0) FROM checkpoint_writes WHERE thread_id = $1)
                  AS b`,
          [threadId],
        );
        return Number(rows[0]?.b ?? 0);
      },
      close: () => postgres.close(),
    });
  }
  return pairs;
}

function agent(storage: "full" | "delta", turns: number, saver: BaseCheckpointSaver) {
  const model = new ScriptedChatModel(
    `bench-${storage}`,
    Array.from({ length: turns }, () => ({ reply: { text: TEXT } })),
  );
  return createAgent({
    model,
    tools: [],
    systemPrompt: "You answer.",
    checkpointer: saver,
    ...(storage === "delta"
      ? { stateSchema: new StateSchema({ messages: MessagesDeltaValue }) }
      : {}),
  });
}

const p50 = (samples: number[]) => percentile(samples, 50);
const fmt = (ms: number) => `${ms.toFixed(2)} ms`;

/** `reps` timings of each function, one of each per round (after 3 warm-up rounds). */
async function interleaved<K extends string>(
  reps: number,
  fns: Record<K, () => Promise<unknown>>,
): Promise<Record<K, number[]>> {
  const keys = Object.keys(fns) as K[];
  const samples = Object.fromEntries(keys.map((k) => [k, [] as number[]])) as Record<K, number[]>;
  for (let round = 0; round < reps + 3; round += 1) {
    for (const key of keys) {
      const ms = await timeMs(fns[key]);
      if (round >= 3) samples[key].push(ms);
    }
  }
  return samples;
}

async function main(): Promise<void> {
  const turnCounts = process.argv.slice(2).map(Number).filter(Number.isInteger);
  const lengths = turnCounts.length > 0 ? turnCounts : [50, 200];
  const dir = mkdtempSync(join(tmpdir(), "sg-bench-delta-"));
  const pairs = await openPairs(dir);
  const rows: string[][] = [];
  try {
    for (const pair of pairs) {
      for (const turns of lengths) {
        const runs: Record<string, { threadId: string; turnMs: number }> = {};
        for (const storage of ["full", "delta"] as const) {
          const threadId = `${storage}-${turns}`;
          const graph = agent(storage, turns, pair.saver);
          const config = { configurable: { thread_id: threadId }, durability: "sync" as const };
          const started = performance.now();
          for (let turn = 1; turn <= turns; turn += 1) {
            await graph.invoke({ messages: [new HumanMessage(`${turn}: ${TEXT}`)] }, config);
          }
          runs[storage] = { threadId, turnMs: (performance.now() - started) / turns };
        }
        // Read where a read costs most: the newest checkpoint that stores no `messages` value
        // (the head itself is a snapshot when the turns are a multiple of 50, and then no walk
        // runs), and the full thread's checkpoint at the same position.
        const listed = async (threadId: string) => {
          const all = [];
          for await (const t of pair.saver.list({ configurable: { thread_id: threadId } })) {
            all.push(t);
          }
          return all;
        };
        const deltaList = await listed(`delta-${turns}`);
        const fullList = await listed(`full-${turns}`);
        const at = deltaList.findIndex((t) => t.checkpoint.channel_values.messages === undefined);
        const deltaConfig = deltaList[at]?.config;
        const fullConfig = fullList[at]?.config;
        if (deltaConfig === undefined || fullConfig === undefined) throw new Error("no checkpoint");
        const history = { config: deltaConfig, channels: ["messages"] };
        const fullGraph = agent("full", 0, pair.saver);
        const ownGraph = agent("delta", 0, pair.saver);
        const genericGraph = agent("delta", 0, pair.generic);
        // Interleaved, so load on the machine drifting during the run hits every variant alike.
        const samples = await interleaved(30, {
          fullState: () => fullGraph.getState(fullConfig),
          deltaOwn: () => ownGraph.getState(deltaConfig),
          deltaGeneric: () => genericGraph.getState(deltaConfig),
          histOwn: () => pair.saver.getDeltaChannelHistory(history),
          histGeneric: () => genericDeltaChannelHistory(pair.saver, history),
        });
        const fullState = p50(samples.fullState);
        const deltaOwn = p50(samples.deltaOwn);
        const deltaGeneric = p50(samples.deltaGeneric);
        const histOwn = p50(samples.histOwn);
        const histGeneric = p50(samples.histGeneric);
        const [fullBytes, deltaBytes] = [
          await pair.bytes(`full-${turns}`),
          await pair.bytes(`delta-${turns}`),
        ];
        const writes = (await pair.saver.getDeltaChannelHistory(history)).messages?.writes.length;
        rows.push([
          pair.name,
          String(turns),
          fullBytes.toLocaleString("en"),
          deltaBytes.toLocaleString("en"),
          `${(fullBytes / deltaBytes).toFixed(1)}×`,
          fmt(fullState),
          fmt(deltaOwn),
          fmt(deltaGeneric),
          `${fmt(histOwn)} / ${fmt(histGeneric)} (${writes} writes)`,
          `${fmt(runs.full?.turnMs ?? Number.NaN)} / ${fmt(runs.delta?.turnMs ?? Number.NaN)}`,
        ]);
        console.error(`done: ${pair.name} ${turns} turns`);
      }
    }
  } finally {
    for (const pair of pairs) await pair.close();
    stopPostgres();
    rmSync(dir, { recursive: true, force: true });
  }
  const header = [
    "saver",
    "turns",
    "bytes full",
    "bytes delta",
    "full/delta",
    "getState full",
    "getState delta (override)",
    "getState delta (generic)",
    "history read override / generic (writes replayed)",
    "turn time full / delta",
  ];
  console.log(`| ${header.join(" | ")} |`);
  console.log(`|${header.map(() => "---").join("|")}|`);
  for (const row of rows) console.log(`| ${row.join(" | ")} |`);
}

await main();
