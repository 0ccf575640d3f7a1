import { setTimeout as sleep } from "node:timers/promises";
import { isFinishedAsyncTask } from "../../contract.js";
import {
  bgThread,
  type DeepBackground,
  type OursBackground,
  openDeepBackground,
  openOursBackground,
} from "../lib/background-systems.js";
import type { Scenario, TargetCheck } from "../lib/scenario.js";
import { median, percentile } from "../lib/stats.js";
import { fmt, int, ratio, type Table } from "../lib/table.js";
import { collectGarbage, msSince, nowNs, type Repeat, rotated, timeMs } from "../lib/timing.js";

/** Every parent (main-agent) model call's latency, for both parts. */
const MAIN_LATENCY_MS = 50;
/**
 * A busy researcher's model calls in part 1: slow (a second each, a `lookup` between them), so
 * the three tasks stay running through a block of parent turns, and are active during it.
 */
const BUSY_RESEARCHER_LATENCY_MS = 1000;
/** Idle tasks beside (not judged): one researcher call longer than the whole part. */
const IDLE_RESEARCHER_LATENCY_MS = 10 * 60_000;
/** Part 2: the researcher's one model call (its whole task). */
const RESEARCHER_LATENCY_MS = 2000;
/** Background tasks running beside the parent's turns (the default `max_async_tasks`). */
const TASKS = 3;
/** The issue's target: a turn beside 3 running tasks ≤ 1.1 × a turn beside none (p50). */
const MAX_TURN_RATIO = 1.1;
/** Deep Agents' user asking again: at once (the tightest loop), or after this many ms. */
const DEEP_POLL_GAPS_MS = [0, 1000] as const;
/** A check loop that never sees the result gives up after this many checks. */
const MAX_CHECKS = 300;
const LEARN_TIMEOUT_MS = 60_000;

interface TurnBlocks {
  /** Each researcher model call of the tasks running beside the turns. */
  researcherLatencyMs: number;
  with: number[];
  none: number[];
  /** Blocks whose tasks were not all still running at the block's end (the block is dropped). */
  dropped: number;
  /** Turns that took more than one parent model call (should be none). */
  extraCalls: number;
  /**
   * The event loop's utilization (`performance.eventLoopUtilization`) over each kept block's
   * timed turns: the share of the block the process was busy, the parent's turns and, beside
   * running tasks, their work. The difference is what the tasks took of the one thread.
   */
  loopWith: number[];
  loopNone: number[];
}

type LearnVariant = "ours" | `deep-${number}`;

interface LearnSample {
  /** From sending the turn that starts the task to the parent's model answering with its result. */
  learnMs: number;
  /** The turn that started the task. */
  startTurnMs: number;
  /** Parent model calls after the start turn up to (and with) the one that had the result. */
  callsAfterStart: number;
  /** `check_async_task` turns the user sent (Deep Agents). */
  checks: number;
  /** Ours: the task record's `created_at` → `finished_at` (ms resolution); NaN for Deep Agents. */
  taskMs: number;
}

/**
 * The background scenario (issue 41, background subagents), two parts on the same scripted models
 * (`lib/background-scripts.ts`):
 * 1. ours only: the parent's plain turns (one model call, 50 ms) while 3 background tasks of its
 *    thread are running (busy: a researcher model call of 1 s, a `lookup`, again), against the
 *    same turns with none running anywhere, in alternating blocks; p50 ratio (target ≤ 1.1).
 *    Beside it, not judged, the same with idle tasks (one 10 min model call): the parent's own
 *    bookkeeping of running tasks, without their work competing for the CPU.
 * 2. how the parent learns a task's result: ours with `notify_parent` (a run is started on the
 *    parent's thread when the task ends; its model call has the notice), against Deep Agents
 *    1.14.1's async subagents on its documented minimal server (`lib/deep-async-server.ts`),
 *    where the parent knows only what `check_async_task` returns, the user asking for a check
 *    at once after each answer or every second. Time from the start turn to the parent's model
 *    answering with the result, and the parent's model calls spent on polling.
 */
export const backgroundScenario: Scenario = {
  name: "background",
  title: "Background subagents: turns beside running tasks, and learning a result",
  async run({ quick }) {
    const turnRepeat: Repeat = quick ? { warmup: 1, iterations: 4 } : { warmup: 2, iterations: 20 };
    const turnsPerBlock = quick ? 5 : 10;
    const learnRepeat: Repeat = quick
      ? { warmup: 1, iterations: 3 }
      : { warmup: 1, iterations: 10 };
    const blocks: TurnBlocks[] = [];
    for (const latency of [BUSY_RESEARCHER_LATENCY_MS, IDLE_RESEARCHER_LATENCY_MS]) {
      blocks.push(await measureTurns(turnRepeat, turnsPerBlock, latency));
    }
    const learning = await measureLearning(learnRepeat);
    return {
      tables: [turnTable(blocks, turnRepeat, turnsPerBlock), learnTable(learning)],
      data: {
        mainLatencyMs: MAIN_LATENCY_MS,
        busyResearcherLatencyMs: BUSY_RESEARCHER_LATENCY_MS,
        idleResearcherLatencyMs: IDLE_RESEARCHER_LATENCY_MS,
        researcherLatencyMs: RESEARCHER_LATENCY_MS,
        turnRepeat,
        turnsPerBlock,
        learnRepeat,
        blocks,
        learning,
      },
      targets: [turnTarget(blocks), pollingTarget(learning)],
    };
  },
};

// ── Part 1: turns beside running tasks ───────────────────────────────────────────────────────

async function measureTurns(
  repeat: Repeat,
  perBlock: number,
  researcherLatencyMs: number,
): Promise<TurnBlocks> {
  const ours = await openOursBackground({
    mainLatencyMs: MAIN_LATENCY_MS,
    researcherLatencyMs,
    notifyParent: false,
  });
  const result: TurnBlocks = {
    researcherLatencyMs,
    with: [],
    none: [],
    dropped: 0,
    extraCalls: 0,
    loopWith: [],
    loopNone: [],
  };
  try {
    for (let round = 0; round < repeat.warmup + repeat.iterations; round += 1) {
      collectGarbage();
      const kept = round >= repeat.warmup;
      const threadId = bgThread("turns");
      for (const block of rotated(["with", "none"] as const, round)) {
        if (block === "with") {
          await ours.turn(threadId, `start ${TASKS} r${round}`);
          await waitForTasks(ours, threadId, (tasks) => countRunning(tasks) === TASKS);
          const { samples, loop } = await plainTurns(ours, threadId, perBlock, result);
          const stillRunning = countRunning(await ours.tasks(threadId)) === TASKS;
          if (!stillRunning) result.dropped += 1;
          else if (kept) {
            result.with.push(...samples);
            result.loopWith.push(loop);
          }
          await cancelAll(ours, threadId);
        } else {
          const { samples, loop } = await plainTurns(ours, threadId, perBlock, result);
          if (kept) {
            result.none.push(...samples);
            result.loopNone.push(loop);
          }
        }
      }
    }
  } finally {
    await ours.dispose();
  }
  return result;
}

/**
 * `count` timed plain turns on `threadId`, after one untimed (it carries the notices of the
 * previous block's cancelled tasks, once).
 */
async function plainTurns(
  ours: OursBackground,
  threadId: string,
  count: number,
  result: TurnBlocks,
): Promise<{ samples: number[]; loop: number }> {
  await ours.turn(threadId, "hello");
  const samples: number[] = [];
  const loopStart = performance.eventLoopUtilization();
  for (let i = 0; i < count; i += 1) {
    const calls = ours.watch.calls;
    samples.push(await timeMs(() => ours.turn(threadId, "hello")));
    if (ours.watch.calls - calls !== 1) result.extraCalls += 1;
  }
  return { samples, loop: performance.eventLoopUtilization(loopStart).utilization };
}

type TaskList = Awaited<ReturnType<OursBackground["tasks"]>>;

function countRunning(tasks: TaskList): number {
  return tasks.filter((task) => task.status === "running").length;
}

async function waitForTasks(
  ours: OursBackground,
  threadId: string,
  done: (tasks: TaskList) => boolean,
): Promise<void> {
  const start = nowNs();
  for (;;) {
    const tasks = await ours.tasks(threadId);
    if (done(tasks)) return;
    if (msSince(start) > 30_000) {
      throw new Error(
        `background tasks of ${threadId} did not get there: ${tasks.map((task) => task.status).join(", ")}`,
      );
    }
    await sleep(10);
  }
}

async function cancelAll(ours: OursBackground, threadId: string): Promise<void> {
  const tasks = await ours.tasks(threadId);
  for (const task of tasks) {
    if (!isFinishedAsyncTask(task.status)) {
      await ours.cancel(threadId, task.id);
    }
  }
  await waitForTasks(ours, threadId, (all) =>
    all.every((task) => isFinishedAsyncTask(task.status)),
  );
}

function turnTable(passes: TurnBlocks[], repeat: Repeat, perBlock: number): Table {
  const rows = passes.map((blocks) => [
    blocks.researcherLatencyMs === BUSY_RESEARCHER_LATENCY_MS
      ? `busy: a ${BUSY_RESEARCHER_LATENCY_MS} ms call, a lookup, again (judged)`
      : `idle: one ${blocks.researcherLatencyMs / 60_000} min call`,
    `${blocks.with.length} + ${blocks.none.length}`,
    fmt(median(blocks.with), 1),
    fmt(median(blocks.none), 1),
    ratio(median(blocks.with) / median(blocks.none), 3),
    fmt(percentile(blocks.with, 95), 1),
    fmt(percentile(blocks.none, 95), 1),
    ratio(percentile(blocks.with, 95) / percentile(blocks.none, 95), 3),
    `${fmt(median(blocks.loopWith) * 100, 1)} / ${fmt(median(blocks.loopNone) * 100, 1)}`,
    String(blocks.dropped),
  ]);
  return {
    title: `Background tasks: the parent's plain turn (one ${MAIN_LATENCY_MS} ms model call) beside ${TASKS} running tasks and beside none (ms)`,
    headers: [
      "the tasks' researcher",
      "turns",
      `p50, ${TASKS} running`,
      "p50, none",
      "p50 ratio",
      `p95, ${TASKS} running`,
      "p95, none",
      "p95 ratio",
      "event loop busy %, running / none",
      "blocks dropped",
    ],
    rows,
    notes: [
      `ours (createRuntime, SQLite saver and store), main agent with async_subagents: [researcher]; per researcher, ${repeat.iterations} rounds after ${repeat.warmup} warm-up, each a fresh parent thread with a block of ${perBlock} timed turns (after one untimed) beside ${TASKS} running tasks of that thread and a block beside none (after they were cancelled, or before they were started: the order turns each round).`,
      `busy: the tasks run and work throughout a block (a model call, a lookup tool call and two checkpoints a second each); idle: they hold their places without doing anything (what the parent's own bookkeeping costs). Event loop busy: its utilization over a block's timed turns (median of the blocks): the parent's turns, and the tasks' work beside them. A block whose tasks were not all still running at its end is dropped; turns with more than one model call: ${passes.reduce((sum, blocks) => sum + blocks.extraCalls, 0)}.`,
    ],
  };
}

function turnTarget(passes: TurnBlocks[]): TargetCheck {
  const blocks = passes.find((pass) => pass.researcherLatencyMs === BUSY_RESEARCHER_LATENCY_MS);
  const value = blocks ? median(blocks.with) / median(blocks.none) : Number.NaN;
  return {
    target: `parent's turn beside ${TASKS} running background tasks ≤ ${MAX_TURN_RATIO} × beside none (p50, ${MAIN_LATENCY_MS} ms model)`,
    met:
      blocks !== undefined &&
      Number.isFinite(value) &&
      value <= MAX_TURN_RATIO &&
      blocks.extraCalls === 0,
    detail: blocks
      ? `${ratio(value, 3)} (p50 ${fmt(median(blocks.with), 1)} vs ${fmt(median(blocks.none), 1)} ms, ${blocks.with.length} + ${blocks.none.length} turns; busy tasks)`
      : "not measured",
  };
}

// ── Part 2: learning a result ────────────────────────────────────────────────────────────────

interface Learning {
  samples: Partial<Record<LearnVariant, LearnSample[]>>;
  /** Why Deep Agents could not be measured, when it could not. */
  deepUnavailable: string | undefined;
  /** The documented server's runs by final status (all should be `success`). */
  deepServerRuns: Record<string, number>;
}

async function measureLearning(repeat: Repeat): Promise<Learning> {
  const ours = await openOursBackground({
    mainLatencyMs: MAIN_LATENCY_MS,
    researcherLatencyMs: RESEARCHER_LATENCY_MS,
    notifyParent: true,
  });
  let deep: DeepBackground | undefined;
  const learning: Learning = { samples: {}, deepUnavailable: undefined, deepServerRuns: {} };
  try {
    deep = await openDeepBackground({
      mainLatencyMs: MAIN_LATENCY_MS,
      researcherLatencyMs: RESEARCHER_LATENCY_MS,
    });
    if (!deep)
      learning.deepUnavailable = "PostgreSQL is not installed (the example server's store)";
    const variants: LearnVariant[] = [
      "ours",
      ...(deep ? DEEP_POLL_GAPS_MS.map((gap) => `deep-${gap}` as const) : []),
    ];
    let trial = 0;
    for (let round = 0; round < repeat.warmup + repeat.iterations; round += 1) {
      collectGarbage();
      for (const variant of rotated(variants, round)) {
        trial += 1;
        const tag = `${variant}.${trial}`;
        const sample =
          variant === "ours"
            ? await learnOurs(ours, tag)
            : await learnDeep(deep as DeepBackground, tag, Number(variant.slice("deep-".length)));
        if (round >= repeat.warmup) {
          learning.samples[variant] = [...(learning.samples[variant] ?? []), sample];
        }
      }
    }
    if (deep) learning.deepServerRuns = await deep.serverRunStatuses();
  } finally {
    await ours.dispose();
    await deep?.dispose();
  }
  return learning;
}

/** Ours: the start turn, then nothing from the user: the notified run brings the result. */
async function learnOurs(ours: OursBackground, tag: string): Promise<LearnSample> {
  const threadId = bgThread("learn");
  const start = nowNs();
  const startTurnMs = await timeMs(() => ours.turn(threadId, `research ${tag}`));
  const callsAfterTurn = ours.watch.calls;
  const seenAt = await ours.watch.when(tag, LEARN_TIMEOUT_MS);
  // Let the notified run end before the next trial (its answer is the call that saw the result).
  await waitIdle(ours, threadId);
  const task = (await ours.tasks(threadId))[0];
  return {
    learnMs: Number(seenAt - start) / 1e6,
    startTurnMs,
    callsAfterStart: (ours.watch.callsWhenSeen(tag) ?? Number.NaN) - callsAfterTurn,
    checks: 0,
    taskMs: task ? Date.parse(task.finished_at) - Date.parse(task.created_at) : Number.NaN,
  };
}

async function waitIdle(ours: OursBackground, threadId: string): Promise<void> {
  const start = nowNs();
  while (msSince(start) < 5_000) {
    const tasks = await ours.tasks(threadId);
    if (tasks.every((task) => isFinishedAsyncTask(task.status))) break;
    await sleep(10);
  }
  await sleep(50);
}

/**
 * Deep Agents: the start turn, then the user asking `check <task id>` (after `gapMs`, again and
 * again) until the parent's model has the result in its input.
 */
async function learnDeep(deep: DeepBackground, tag: string, gapMs: number): Promise<LearnSample> {
  const threadId = bgThread("deep");
  const start = nowNs();
  let taskIds: string[] = [];
  const startTurnMs = await timeMs(async () => {
    taskIds = (await deep.turn(threadId, `research ${tag}`)).taskIds;
  });
  const callsAfterTurn = deep.watch.calls;
  const taskId = taskIds[0];
  if (!taskId) throw new Error("Deep Agents' start turn tracked no task");
  let checks = 0;
  while (!deep.watch.has(tag)) {
    if (checks >= MAX_CHECKS) throw new Error(`Deep Agents: no result after ${checks} checks`);
    if (gapMs > 0) await sleep(gapMs);
    await deep.turn(threadId, `check ${taskId}`);
    checks += 1;
  }
  const seenAt = await deep.watch.when(tag, 0);
  return {
    learnMs: Number(seenAt - start) / 1e6,
    startTurnMs,
    callsAfterStart: (deep.watch.callsWhenSeen(tag) ?? Number.NaN) - callsAfterTurn,
    checks,
    taskMs: Number.NaN,
  };
}

const VARIANT_LABEL = (variant: LearnVariant) =>
  variant === "ours"
    ? "ours, notify_parent"
    : `Deep Agents, user checks ${variant === "deep-0" ? "at once again" : `every ${variant.slice(5)} ms`}`;

function learnTable(learning: Learning): Table {
  const rows = (Object.entries(learning.samples) as [LearnVariant, LearnSample[]][]).map(
    ([variant, samples]) => {
      const of = (pick: (sample: LearnSample) => number) => samples.map(pick);
      return [
        VARIANT_LABEL(variant),
        String(samples.length),
        fmt(median(of((s) => s.learnMs)), 0),
        fmt(
          percentile(
            of((s) => s.learnMs),
            95,
          ),
          0,
        ),
        fmt(median(of((s) => s.learnMs)) - RESEARCHER_LATENCY_MS, 0),
        fmt(median(of((s) => s.taskMs)), 0),
        fmt(median(of((s) => s.startTurnMs)), 1),
        fmt(median(of((s) => s.checks)), 1),
        fmt(median(of((s) => s.callsAfterStart)), 1),
        fmt(median(of((s) => s.callsAfterStart - 1)), 1),
        int(Math.max(...of((s) => s.callsAfterStart - 1))),
      ];
    },
  );
  return {
    title: "Background subagents: from the start turn to the parent's model having the result",
    headers: [
      "system",
      "trials",
      "learnt p50 (ms)",
      "p95",
      "beyond the task's model time",
      "task created → finished p50",
      "start turn p50 (ms)",
      "checks p50",
      "parent calls after start p50",
      "polling calls p50",
      "polling calls max",
    ],
    rows,
    notes: [
      `learnt = from sending the turn that starts the task to the end of the parent model call whose input first holds the task's result (every parent call ${MAIN_LATENCY_MS} ms; the researcher's one call ${RESEARCHER_LATENCY_MS} ms); polling calls = parent model calls after the start turn that did not have the result (Deep Agents: a check turn is 2 calls, check_async_task and the answer); task created → finished: ours' task record (n/a for Deep Agents, whose example server keeps no end time).`,
      "ours: createRuntime (SQLite), the main agent with notify_parent: true; the user sends nothing after the start turn.",
      `Deep Agents 1.14.1: createDeepAgent supervisor (memory saver) with an AsyncSubAgent { graphId: "researcher", url } on its documented minimal server (deepagentsjs examples/async-subagent-server: Hono, PostgreSQL, fire-and-forget runs; its agent swapped for createDeepAgent on the same scripted researcher), in this process; the parent learns only through check_async_task, so the user asks "check <task id>" at once after each answer, or every 1000 ms.`,
      learning.deepUnavailable
        ? `Deep Agents not measured: ${learning.deepUnavailable}.`
        : `the documented server's runs: ${JSON.stringify(learning.deepServerRuns)}.`,
    ],
  };
}

function pollingTarget(learning: Learning): TargetCheck {
  const ours = learning.samples.ours ?? [];
  const worst = Math.max(...ours.map((sample) => sample.callsAfterStart - 1));
  const deep = (Object.entries(learning.samples) as [LearnVariant, LearnSample[]][])
    .filter(([variant]) => variant !== "ours")
    .map(
      ([variant, samples]) =>
        `${VARIANT_LABEL(variant)}: ${fmt(median(samples.map((s) => s.callsAfterStart - 1)), 0)} polling calls, learnt in ${fmt(median(samples.map((s) => s.learnMs)), 0)} ms (p50)`,
    );
  return {
    target: "the parent learns a background task's result with 0 model calls spent on polling",
    met: ours.length > 0 && worst === 0,
    detail: `ours ${int(worst)} (worst trial), learnt in ${fmt(median(ours.map((s) => s.learnMs)), 0)} ms (p50)${deep.length ? `; ${deep.join("; ")}` : `; Deep Agents n/a (${learning.deepUnavailable})`}`,
  };
}
