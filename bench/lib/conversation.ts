import { join } from "node:path";
import type { RunnableConfig } from "@langchain/core/runnables";
import { type Footprint, footprintReader, treeSize } from "./footprint.js";
import { BenchModel } from "./model.js";
import { childReply, fanOutInput, mainReply } from "./scripts.js";
import { deepAgent, MAIN_SLUG, type OurSystem, openOurs, type SaverName, UID } from "./systems.js";
import { collectGarbage, measureInterleaved, msSince, nowNs } from "./timing.js";

/**
 * One conversation of the long-conversation scenarios (checkpoint growth, snapshot frequency):
 * ours with a checkpoint storage (and snapshot frequency), or Deep Agents.
 */
export interface ConversationSpec {
  /** Unique among the conversations run side by side (e.g. `"delta"`, `"full"`, `"deep"`). */
  key: string;
  system: "ours" | "deep";
  /** Ours only: `checkpointStorage`. */
  storage?: "full" | "delta";
  /** Ours only: `deltaSnapshotFrequency` (undefined: the runtime's default). */
  snapshotFrequency?: number;
  /** How many turns this conversation runs (others on the same saver may run longer). */
  turns: number;
}

/** Read latencies (ms) measured on a conversation's thread once it had `turn` turns. */
export interface ReadSamples {
  /** `getState` of the compiled graph at the thread's head. */
  state: number[];
  /** The first page (10 states) of `getStateHistory` of the compiled graph. */
  history: number[];
}

/** What one conversation left in its saver and how long its turns and reads took. */
export interface ConversationResult {
  spec: ConversationSpec;
  saver: SaverName;
  /** Footprint before the first turn (key 0) and after the sampled turns (key = turns done). */
  footprints: Record<number, Footprint>;
  /** Whole-turn time (ms) of each turn, index = turn − 1. */
  turnMs: number[];
  /** Reads at each read point (key = turns done). */
  reads: Record<number, ReadSamples>;
  /** Writes a head read replays per delta channel, at each read point (ours, delta only). */
  replayed: Record<number, Record<string, number>>;
  /** Files the runtime left in its data dir's `threads/` folder (ours only). */
  dataDir?: { files: number; dirs: number; bytes: number };
  /**
   * Turns whose checkpoints hold a full snapshot of a delta channel, per channel (ours, delta
   * only; the conversation's own thread).
   */
  snapshotTurns?: Record<string, number[]>;
}

export interface InterleaveOptions {
  /** Turn counts at which reads are measured on every conversation still running. */
  readPoints: number[];
  /** Interleaved read rounds at a point (after `warmup` untimed rounds). */
  reads(point: number): { warmup: number; iterations: number };
  /** Whether the footprint is read after `turn` (turn 0 always is). */
  sampleFootprint(turn: number): boolean;
  /** Progress lines (stderr). */
  log?: (line: string) => void;
}

/** The delta channels of our agents, whose replay depth is reported. */
const DELTA_CHANNELS = ["messages", "subagent_runs"];

interface Open {
  spec: ConversationSpec;
  /** Our runtime: the system itself, or (Deep Agents) the host of its saver. */
  ours: OurSystem;
  reader: ReturnType<typeof footprintReader>;
  threadId: string;
  turn(turn: number): Promise<void>;
  /** The head checkpoint's id after each turn (index = turn − 1). */
  heads: string[];
  getState(): Promise<unknown>;
  getHistory(): Promise<unknown>;
  result: ConversationResult;
}

/**
 * Runs the conversations side by side on `saver` (each on a saver instance of its own, fresh
 * database for PostgreSQL): turn after turn, each turn of every conversation in a rotating
 * order, one task call per turn; footprints after the sampled turns; at each read point the
 * reads of every conversation still running, interleaved. Undefined when the saver is
 * unavailable (PostgreSQL not installed).
 */
export async function runInterleaved(
  saver: SaverName,
  specs: ConversationSpec[],
  options: InterleaveOptions,
): Promise<ConversationResult[] | undefined> {
  const opened: Open[] = [];
  try {
    for (const spec of specs) {
      const one = await openConversation(saver, spec);
      if (!one) return undefined;
      opened.push(one);
    }
    for (const one of opened) one.result.footprints[0] = await one.reader.read(one.threadId);
    const last = Math.max(...specs.map((spec) => spec.turns));
    let started = nowNs();
    for (let turn = 1; turn <= last; turn += 1) {
      const running = opened.filter((one) => one.spec.turns >= turn);
      for (let i = 0; i < running.length; i += 1) {
        const one = running[(turn + i) % running.length] as Open;
        const start = nowNs();
        await one.turn(turn);
        one.result.turnMs.push(msSince(start));
        one.heads.push((await headTuple(one))?.checkpoint.id ?? "");
      }
      if (options.sampleFootprint(turn) || options.readPoints.includes(turn)) {
        for (const one of running)
          one.result.footprints[turn] = await one.reader.read(one.threadId);
      }
      if (options.readPoints.includes(turn)) {
        collectGarbage();
        const variants: Record<string, () => Promise<unknown>> = {};
        for (const one of running) {
          variants[`${one.spec.key}:state`] = () => one.getState();
          variants[`${one.spec.key}:history`] = () => one.getHistory();
        }
        const samples = await measureInterleaved(variants, options.reads(turn));
        for (const one of running) {
          one.result.reads[turn] = {
            state: samples[`${one.spec.key}:state`] ?? [],
            history: samples[`${one.spec.key}:history`] ?? [],
          };
          if (one.spec.system === "ours" && one.spec.storage !== "full") {
            one.result.replayed[turn] = await replayDepth(one);
          }
        }
      }
      if (turn % 50 === 0 || turn === last) {
        options.log?.(
          `  ${saver}: turn ${turn}/${last} (${running.map((one) => one.spec.key).join(", ")}; ${(msSince(started) / 1000).toFixed(1)} s, rss ${Math.round(process.memoryUsage().rss / 2 ** 20)} MiB)`,
        );
        started = nowNs();
      }
    }
    for (const one of opened) {
      if (one.spec.system === "ours") {
        one.result.dataDir = treeSize(join(one.ours.dataDir, "threads"));
      }
      if (one.spec.system === "ours" && one.spec.storage !== "full") {
        one.result.snapshotTurns = await snapshotTurns(one);
      }
    }
    return opened.map((one) => one.result);
  } finally {
    for (const one of opened) {
      await one.reader.close();
      await one.ours.dispose();
    }
  }
}

async function openConversation(
  saver: SaverName,
  spec: ConversationSpec,
): Promise<Open | undefined> {
  const main = new BenchModel("main", mainReply);
  const child = new BenchModel("child", childReply);
  // Deep Agents runs on the storage of a runtime of ours, through the saver class without our
  // `Send` compaction (`stockSaver`), as its users would.
  const ours = await openOurs({
    saver,
    mainModel: main,
    childModel: child,
    ...(spec.storage ? { checkpointStorage: spec.storage } : {}),
    ...(spec.snapshotFrequency !== undefined
      ? { deltaSnapshotFrequency: spec.snapshotFrequency }
      : {}),
  });
  if (!ours) return undefined;
  const reader = footprintReader(ours, spec.system === "deep" ? ours.stockSaver : ours.saver);
  const threadId = `conversation-${spec.key}`;
  const config: RunnableConfig = { configurable: { thread_id: threadId } };
  // Creates the saver's tables, so the baseline is the empty schema.
  await ours.saver.getTuple({ configurable: { thread_id: "none", checkpoint_ns: "" } });
  const result: ConversationResult = {
    spec,
    saver,
    footprints: {},
    turnMs: [],
    reads: {},
    replayed: {},
  };
  const history = async (
    states: AsyncIterable<unknown> | Promise<AsyncIterable<unknown>>,
  ): Promise<number> => {
    let n = 0;
    for await (const _ of await states) n += 1;
    return n;
  };
  if (spec.system === "deep") {
    const deep = deepAgent(main, child, ours.stockSaver);
    return {
      spec,
      ours,
      reader,
      threadId,
      result,
      heads: [],
      turn: async () => {
        await deep.run(fanOutInput(1), threadId);
      },
      getState: () => deep.agent.getState(config),
      getHistory: () => history(deep.agent.getStateHistory(config, { limit: 10 })),
    };
  }
  return {
    spec,
    ours,
    reader,
    threadId,
    result,
    heads: [],
    turn: async (turn) => {
      const run = await ours.run(fanOutInput(1), threadId);
      const done = run.subagentRuns.filter((record) => record.status === "completed").length;
      if (done !== turn) {
        throw new Error(
          `${spec.key} on ${saver}: turn ${turn} sees ${done} completed subagent runs (expected ${turn})`,
        );
      }
    },
    // The compiled graph the runs use (cached by the runtime), as Deep Agents' is read.
    getState: async () => (await ours.runtime.graph(UID, MAIN_SLUG)).getState(config),
    getHistory: async () =>
      history((await ours.runtime.graph(UID, MAIN_SLUG)).getStateHistory(config, { limit: 10 })),
  };
}

function headTuple(one: Open) {
  return one.ours.saver.getTuple({ configurable: { thread_id: one.threadId, checkpoint_ns: "" } });
}

/**
 * The turns whose checkpoints store a delta channel's value (a snapshot: other checkpoints
 * leave the channel out of `channel_values`), per channel.
 */
async function snapshotTurns(one: Open): Promise<Record<string, number[]>> {
  const found: Record<string, Set<number>> = {};
  for await (const tuple of one.ours.saver.list({
    configurable: { thread_id: one.threadId, checkpoint_ns: "" },
  })) {
    const id = tuple.checkpoint.id;
    // The first turn whose head is at or after this checkpoint (ids sort by time).
    const turn = one.heads.findIndex((head) => head >= id) + 1;
    for (const channel of DELTA_CHANNELS) {
      if (tuple.checkpoint.channel_values[channel] !== undefined && turn > 0) {
        const turns = found[channel] ?? new Set<number>();
        turns.add(turn);
        found[channel] = turns;
      }
    }
  }
  return Object.fromEntries(
    Object.entries(found).map(([channel, turns]) => [channel, [...turns].sort((a, b) => a - b)]),
  );
}

/** How many writes a read of the thread's head replays per delta channel. */
async function replayDepth(one: Open): Promise<Record<string, number>> {
  const head = await headTuple(one);
  if (!head) return {};
  const history = await one.ours.saver.getDeltaChannelHistory({
    config: head.config,
    channels: DELTA_CHANNELS,
  });
  return Object.fromEntries(
    Object.entries(history).map(([channel, entry]) => [channel, entry.writes.length]),
  );
}
