import { ourChildGraph } from "../lib/child-graph.js";
import { BenchModel } from "../lib/model.js";
import type { Scenario, TargetCheck } from "../lib/scenario.js";
import { CHILD_NAME, childReply, fanOutInput, mainReply } from "../lib/scripts.js";
import { leastSquares, median } from "../lib/stats.js";
import {
  bareChild,
  deepAgent,
  floor,
  namedSavers,
  type OurSystem,
  openOurs,
  SAVERS,
  type SaverName,
} from "../lib/systems.js";
import { fmt, ratio, type Table } from "../lib/table.js";
import { collectGarbage, measureInterleaved, rotated, shuffled, timeMs } from "../lib/timing.js";

type System = "ours" | "deep" | "floor";
const SYSTEMS: readonly System[] = ["ours", "deep", "floor"];

/** Rows shown in the per-saver table (the fits use every K). */
const SHOWN_K = new Set([0, 1, 2, 3, 4, 6, 8, 12, 16]);

interface SaverResult {
  saver: SaverName;
  skipped?: string;
  ks?: number[];
  /** Median wall time of one run, per system and K (K = 0: the main agent answers at once). */
  medianMs?: Record<System, Record<number, number>>;
  samplesMs?: Record<System, Record<number, number[]>>;
  /** One bare child invoke on a fresh thread, same saver. */
  lowerBoundMs?: number;
  /** (run(K) − run(0)) / K. */
  perTaskMs?: Record<System, Record<number, number>>;
  /** Least-squares slope of run time over K (ms per extra task) and its r². */
  slope?: Record<System, { msPerTask: number; r2: number }>;
  /** The child alone, three ways: one at a time, and per child with 16 at once. */
  attribution?: Record<ChildVariant, { sequentialMs: number; perTaskAt16Ms: number }>;
}

type ChildVariant = "bare" | "oursNoSkills" | "ours";
const CHILD_VARIANTS: readonly ChildVariant[] = ["bare", "oursNoSkills", "ours"];
const PARALLEL_CHILDREN = 16;
/**
 * Samples per round of the run without task calls (K = 0), per system: about 8 ms against Deep
 * Agents' 8 ms, so its median needs more than the 7 samples a K gets.
 */
const K0_SAMPLES_PER_ROUND = 5;

/**
 * The dispatch scenario: a main agent whose first turn makes K parallel `task` calls to a subagent
 * that answers at once, and whose second turn answers; ours, Deep Agents and the no-orchestrator
 * floor on the same saver, interleaved, beside one bare child run (the lower bound).
 */
export const dispatchScenario: Scenario = {
  name: "dispatch",
  title: "Dispatch overhead",
  async run({ quick }) {
    const ks = quick ? [1, 2, 4, 8, 16] : Array.from({ length: 16 }, (_, i) => i + 1);
    // Per-task overhead at small K is a difference of two medians a few ms apart: 7 rounds left
    // it moving by more than ours and Deep Agents' differ, so 12 (bench/README.md,
    // "Scenario: dispatch", and its history).
    const repeat = quick ? { warmup: 1, iterations: 3 } : { warmup: 2, iterations: 12 };
    const results: SaverResult[] = [];
    // `BENCH_DISPATCH_SAVERS=sqlite` runs some savers only (default all).
    for (const saver of namedSavers(process.env.BENCH_DISPATCH_SAVERS) ?? SAVERS) {
      const main = new BenchModel("main", mainReply);
      const child = new BenchModel("child", childReply);
      const ours = await openOurs({
        saver,
        mainModel: main,
        childModel: child,
        limits: { max_parallel_subagents: 16 },
      });
      if (!ours) {
        results.push({ saver, skipped: "PostgreSQL is not installed" });
        continue;
      }
      try {
        results.push(await measureSaver(ours, main, child, ks, repeat, quick));
      } finally {
        await ours.dispose();
      }
    }
    return {
      tables: [
        summaryTable(results),
        attributionTable(results),
        ...results.flatMap((result) => detailTable(result)),
      ],
      data: { repeat, savers: results },
      targets: targets(results),
    };
  },
};

async function measureSaver(
  ours: OurSystem,
  main: BenchModel,
  child: BenchModel,
  ks: number[],
  repeat: { warmup: number; iterations: number },
  quick: boolean,
): Promise<SaverResult> {
  const deep = deepAgent(main, child, ours.stockSaver);
  const bare = bareChild(child, ours.stockSaver);
  const noOrchestrator = floor(main, bare);
  await checkRuns(ours, deep);

  const attribution = await attribute(ours, child, bare, quick);

  const allK = [0, ...ks];
  const samples = {} as Record<System, Record<number, number[]>>;
  for (const system of SYSTEMS) {
    samples[system] = Object.fromEntries(allK.map((k) => [k, [] as number[]]));
  }
  // The lower bound is timed in the same rounds, once after each K, so the ratio to it shares
  // the drift of the runs it is compared with (measured in a loop of its own before, the one
  // number of the 1.3 × target that came from another minute of the run).
  const lower: number[] = [];
  const runOf: Record<System, (k: number) => Promise<unknown>> = {
    ours: (k) => ours.run(fanOutInput(k)),
    deep: (k) => deep.run(fanOutInput(k)),
    floor: (k) => noOrchestrator(k),
  };
  // Round-robin over K and systems, so drift (a growing database, GC) is shared by all; the
  // systems' order turns each round, so none always runs first after the previous K's garbage.
  // K are taken in another order each round, after a full collection (untimed): in a fixed
  // order one K sat where a collection fell round after round, and its median stood a few ms
  // above both neighbours' (bench/README.md, "Scenario: dispatch", and its history).
  for (let round = 0; round < repeat.warmup + repeat.iterations; round += 1) {
    const order = rotated(SYSTEMS, round);
    collectGarbage();
    for (const k of shuffled(allK, round)) {
      // A run without task calls takes a few ms, near the noise: it gets more samples.
      const times = k === 0 ? K0_SAMPLES_PER_ROUND : 1;
      for (let time = 0; time < times; time += 1) {
        for (const system of order) {
          const ms = await timeMs(() => runOf[system](k));
          if (round >= repeat.warmup) samples[system][k]?.push(ms);
        }
      }
      const ms = await timeMs(() => bare("Question 1: what is 0 + 1?"));
      if (round >= repeat.warmup) lower.push(ms);
    }
  }

  const medianMs = {} as Record<System, Record<number, number>>;
  const perTaskMs = {} as Record<System, Record<number, number>>;
  const slope = {} as Record<System, { msPerTask: number; r2: number }>;
  for (const system of SYSTEMS) {
    const medians = Object.fromEntries(allK.map((k) => [k, median(samples[system][k] ?? [])]));
    medianMs[system] = medians;
    const base = medians[0] ?? Number.NaN;
    perTaskMs[system] = Object.fromEntries(ks.map((k) => [k, ((medians[k] ?? 0) - base) / k]));
    const fit = leastSquares(
      ks,
      ks.map((k) => medians[k] ?? Number.NaN),
    );
    slope[system] = { msPerTask: fit.slope, r2: fit.r2 };
  }
  return {
    saver: ours.saverName,
    ks,
    medianMs,
    samplesMs: samples,
    lowerBoundMs: median(lower),
    perTaskMs,
    slope,
    attribution,
  };
}

/**
 * Where a task's time goes: the bare child, our child graph with its skills step stubbed out,
 * and our child graph as dispatched (skills materialised into its own scope), each invoked
 * directly on a fresh child thread, one at a time and 16 at once.
 */
async function attribute(
  ours: OurSystem,
  child: BenchModel,
  bare: (description: string) => Promise<unknown>,
  quick: boolean,
): Promise<NonNullable<SaverResult["attribution"]>> {
  const invoke: Record<ChildVariant, (description: string) => Promise<unknown>> = {
    bare,
    oursNoSkills: await ourChildGraph(ours, child, { skills: false }),
    ours: await ourChildGraph(ours, child, { skills: true }),
  };
  const repeat = quick ? { warmup: 3, iterations: 15 } : { warmup: 5, iterations: 40 };
  const batches = quick ? { warmup: 1, iterations: 4 } : { warmup: 2, iterations: 10 };
  const one = (variant: ChildVariant) => () => invoke[variant]("Question 1: what is 0 + 1?");
  const sequential = await measureInterleaved(
    { bare: one("bare"), oursNoSkills: one("oursNoSkills"), ours: one("ours") },
    repeat,
  );
  const sixteen = (variant: ChildVariant) => () =>
    Promise.all(Array.from({ length: PARALLEL_CHILDREN }, one(variant)));
  const parallel = await measureInterleaved(
    { bare: sixteen("bare"), oursNoSkills: sixteen("oursNoSkills"), ours: sixteen("ours") },
    batches,
  );
  const result = {} as NonNullable<SaverResult["attribution"]>;
  for (const variant of CHILD_VARIANTS) {
    result[variant] = {
      sequentialMs: median(sequential[variant]),
      perTaskAt16Ms: median(parallel[variant]) / PARALLEL_CHILDREN,
    };
  }
  return result;
}

/** Both systems really delegate: K completed children, the answer after them. */
async function checkRuns(ours: OurSystem, deep: ReturnType<typeof deepAgent>): Promise<void> {
  const k = 4;
  const result = await ours.run(fanOutInput(k));
  const completed = result.subagentRuns.filter(
    (run) => run.status === "completed" && run.subagent_type === CHILD_NAME,
  ).length;
  if (completed !== k || !result.output.startsWith("done")) {
    throw new Error(
      `dispatch check failed (ours): ${completed}/${k} children completed, output ${JSON.stringify(result.output)}`,
    );
  }
  const deepResult = await deep.run(fanOutInput(k));
  const answers = deepResult.messages.filter(
    (message) => message.getType() === "tool" && String(message.content).startsWith("answer to:"),
  ).length;
  if (answers !== k)
    throw new Error(`dispatch check failed (Deep Agents): ${answers}/${k} answers`);
}

function summaryTable(results: SaverResult[]): Table {
  return {
    title: "Dispatch overhead: marginal cost per extra task (slope over K) vs the lower bound",
    headers: [
      "saver",
      "lower bound ms",
      "ours ms/task",
      "ours/lower",
      "Deep Agents ms/task",
      "DA/lower",
      "floor ms/task",
      "ours per-task range",
      "DA per-task range",
      "K where ours < DA",
    ],
    rows: results.map((result) => {
      if (result.skipped || !result.slope || !result.perTaskMs || !result.ks) {
        return [result.saver, `skipped: ${result.skipped ?? "?"}`, "", "", "", "", "", "", "", ""];
      }
      const lower = result.lowerBoundMs ?? Number.NaN;
      const range = (system: System) => {
        const values = Object.values(result.perTaskMs?.[system] ?? {});
        return `${fmt(Math.min(...values))}–${fmt(Math.max(...values))}`;
      };
      const wins = result.ks.filter(
        (k) => (result.perTaskMs?.ours[k] ?? Infinity) < (result.perTaskMs?.deep[k] ?? -Infinity),
      ).length;
      return [
        result.saver,
        fmt(lower),
        fmt(result.slope.ours.msPerTask),
        ratio(result.slope.ours.msPerTask / lower),
        fmt(result.slope.deep.msPerTask),
        ratio(result.slope.deep.msPerTask / lower),
        fmt(result.slope.floor.msPerTask),
        range("ours"),
        range("deep"),
        `${wins}/${result.ks.length}`,
      ];
    }),
    notes: [
      "lower bound = median of one bare createAgent invoke of the same child (model, prompt, no tools) on a fresh thread with the same saver, timed once after each K of every round.",
      "ms/task = least-squares slope of median run time over K; per-task = (run(K) − run(0)) / K.",
    ],
  };
}

function attributionTable(results: SaverResult[]): Table {
  const measured = results.filter((result) => result.attribution && result.slope);
  return {
    title:
      "Where a task's time goes: the child alone (ms), one at a time and per child with 16 at once",
    headers: [
      "saver",
      "bare child",
      "our child, no skills step",
      "our child",
      "bare @16",
      "our child, no skills step @16",
      "our child @16",
      "our task call (slope)",
      "DA task call (slope)",
    ],
    rows: measured.map((result) => {
      const a = result.attribution as NonNullable<SaverResult["attribution"]>;
      return [
        result.saver,
        fmt(a.bare.sequentialMs),
        fmt(a.oursNoSkills.sequentialMs),
        fmt(a.ours.sequentialMs),
        fmt(a.bare.perTaskAt16Ms),
        fmt(a.oursNoSkills.perTaskAt16Ms),
        fmt(a.ours.perTaskAt16Ms),
        fmt(result.slope?.ours.msPerTask),
        fmt(result.slope?.deep.msPerTask),
      ];
    }),
    notes: [
      "our child = the subagent's graph as the runtime builds it (SubagentLimits + FileScope middleware), invoked directly with the task tool's context on a fresh child thread; the skills step materialises the agent's skills into the child's own scope (a subagent's at its first model call; here: none installed).",
    ],
  };
}

function detailTable(result: SaverResult): Table[] {
  if (!result.medianMs || !result.perTaskMs || !result.ks) return [];
  const medians = result.medianMs;
  const perTask = result.perTaskMs;
  const rows = [0, ...result.ks]
    .filter((k) => SHOWN_K.has(k))
    .map((k) => [
      String(k),
      fmt(medians.ours[k]),
      fmt(medians.deep[k]),
      fmt(medians.floor[k]),
      k === 0 ? "—" : fmt(perTask.ours[k]),
      k === 0 ? "—" : fmt(perTask.deep[k]),
      k === 0 ? "—" : fmt(perTask.floor[k]),
    ]);
  return [
    {
      title: `Dispatch on the ${result.saver} saver: median run (ms) by K parallel task calls`,
      headers: [
        "K",
        "ours",
        "Deep Agents",
        "floor",
        "ours per-task",
        "DA per-task",
        "floor per-task",
      ],
      rows,
    },
  ];
}

function targets(results: SaverResult[]): TargetCheck[] {
  const checks: TargetCheck[] = [];
  for (const result of results) {
    if (!result.slope || !result.perTaskMs || !result.ks) {
      checks.push({
        target: `marginal cost ≤ 1.3 × lower bound (${result.saver})`,
        met: undefined,
        detail: result.skipped ?? "not measured",
      });
      continue;
    }
    const lower = result.lowerBoundMs ?? Number.NaN;
    const slope = result.slope.ours.msPerTask;
    checks.push({
      target: `marginal cost per extra task ≤ 1.3 × lower bound (${result.saver})`,
      met: slope <= 1.3 * lower,
      detail: `${fmt(slope)} ms/task vs lower bound ${fmt(lower)} ms (${ratio(slope / lower)})`,
    });
    const losing = result.ks.filter(
      (k) => !((result.perTaskMs?.ours[k] ?? Infinity) < (result.perTaskMs?.deep[k] ?? -Infinity)),
    );
    const alone = { ours: result.medianMs?.ours[0], deep: result.medianMs?.deep[0] };
    if (alone.ours !== undefined && alone.deep !== undefined) {
      checks.push({
        target: `a run with no task call no dearer than Deep Agents' (${result.saver})`,
        met: alone.ours <= alone.deep,
        detail: `K = 0: ours ${fmt(alone.ours)} ms vs Deep Agents ${fmt(alone.deep)} ms (${ratio(alone.ours / alone.deep)})`,
      });
    }
    checks.push({
      target: `per-task overhead below Deep Agents' at every K (${result.saver})`,
      met: losing.length === 0,
      detail:
        losing.length === 0
          ? "ours is below at every K"
          : `ours is not below at K = ${losing.join(", ")}`,
    });
  }
  return checks;
}
