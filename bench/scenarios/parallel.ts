import { BenchModel } from "../lib/model.js";
import type { Scenario, TargetCheck } from "../lib/scenario.js";
import { childReply, fanOutInput, mainReply } from "../lib/scripts.js";
import { median } from "../lib/stats.js";
import { bareChild, deepAgent, floor, openOurs, type SaverName } from "../lib/systems.js";
import { fmt, ratio, type Table } from "../lib/table.js";
import { measureInterleaved, type Repeat } from "../lib/timing.js";

/** Latency of every model call. */
const LATENCY_MS = 100;
/** Main call, child call, main call: the critical path of a fan-out. */
const IDEAL_MS = 3 * LATENCY_MS;
const SAVERS: readonly SaverName[] = ["memory", "sqlite"];
const KS = [1, 4, 8, 16];
/** The floor target (≤ 1.05 × the floor) holds up to this K (issue 20). */
const FLOOR_TARGET_MAX_K = 4;

interface KResult {
  saver: SaverName;
  k: number;
  medianMs: { ours: number; deep: number; floor: number };
  samplesMs: { ours: number[]; deep: number[]; floor: number[] };
  efficiency: { ours: number; deep: number; floor: number };
  oursOverFloor: number;
  deepOverFloor: number;
}

/**
 * Scenario 2: every model call takes 100 ms; a fan-out of K tasks (cap raised to K) should take
 * three latencies whatever K is. Ours, Deep Agents and the floor, interleaved, on the same saver.
 */
export const parallelScenario: Scenario = {
  name: "parallel",
  title: "2. Parallel efficiency (100 ms per model call)",
  async run({ quick }) {
    const repeat = quick ? { warmup: 1, iterations: 2 } : { warmup: 1, iterations: 5 };
    const savers = quick ? SAVERS.slice(1) : SAVERS;
    const results: KResult[] = [];
    for (const saver of savers) {
      for (const k of KS) results.push(await measureK(saver, k, repeat));
    }
    const table: Table = {
      title: `Parallel efficiency: ideal wall = 3 × ${LATENCY_MS} ms = ${IDEAL_MS} ms (median wall per run)`,
      headers: [
        "saver",
        "K",
        "ours ms",
        "Deep Agents ms",
        "floor ms",
        "ours eff.",
        "DA eff.",
        "floor eff.",
        "ours/floor",
        "DA/floor",
      ],
      rows: results.map((r) => [
        r.saver,
        String(r.k),
        fmt(r.medianMs.ours, 1),
        fmt(r.medianMs.deep, 1),
        fmt(r.medianMs.floor, 1),
        `${fmt(r.efficiency.ours * 100, 1)}%`,
        `${fmt(r.efficiency.deep * 100, 1)}%`,
        `${fmt(r.efficiency.floor * 100, 1)}%`,
        ratio(r.oursOverFloor, 3),
        ratio(r.deepOverFloor, 3),
      ]),
      notes: [
        "efficiency = ideal / measured wall; the floor (one model call, K bare children with Promise.all, one model call) is measured in the same run, interleaved.",
      ],
    };
    const targets: TargetCheck[] = savers.flatMap((saver) => {
      const rows = results.filter((r) => r.saver === saver);
      const small = rows.filter((r) => r.k <= FLOOR_TARGET_MAX_K);
      return [
        {
          target: `wall at 100 ms ≤ Deep Agents' wall at every K (${saver})`,
          met: rows.every((r) => r.medianMs.ours <= r.medianMs.deep),
          detail: rows
            .map((r) => `K=${r.k}: ${ratio(r.medianMs.ours / r.medianMs.deep, 3)}`)
            .join(", "),
        },
        {
          target: `wall at 100 ms ≤ 1.05 × the floor at K ≤ ${FLOOR_TARGET_MAX_K} (${saver})`,
          met: small.every((r) => r.oursOverFloor <= 1.05),
          detail: small.map((r) => `K=${r.k}: ${ratio(r.oursOverFloor, 3)}`).join(", "),
        },
      ];
    });
    return {
      tables: [table],
      data: { latencyMs: LATENCY_MS, idealMs: IDEAL_MS, repeat, results },
      targets,
    };
  },
};

async function measureK(saver: SaverName, k: number, repeat: Repeat): Promise<KResult> {
  const main = new BenchModel("main", mainReply, { latencyMs: LATENCY_MS });
  const child = new BenchModel("child", childReply, { latencyMs: LATENCY_MS });
  const ours = await openOurs({
    saver,
    mainModel: main,
    childModel: child,
    limits: { max_parallel_subagents: k },
  });
  if (!ours) throw new Error(`the ${saver} saver is always available`);
  try {
    const deep = deepAgent(main, child, ours.stockSaver);
    const noOrchestrator = floor(main, bareChild(child, ours.stockSaver));
    const first = await ours.run(fanOutInput(k));
    const completed = first.subagentRuns.filter((run) => run.status === "completed").length;
    if (completed !== k) throw new Error(`parallel check failed: ${completed}/${k} completed`);
    const samples = await measureInterleaved(
      {
        ours: () => ours.run(fanOutInput(k)),
        deep: () => deep.run(fanOutInput(k)),
        floor: () => noOrchestrator(k),
      },
      repeat,
    );
    const medianMs = {
      ours: median(samples.ours),
      deep: median(samples.deep),
      floor: median(samples.floor),
    };
    return {
      saver,
      k,
      medianMs,
      samplesMs: samples,
      efficiency: {
        ours: IDEAL_MS / medianMs.ours,
        deep: IDEAL_MS / medianMs.deep,
        floor: IDEAL_MS / medianMs.floor,
      },
      oursOverFloor: medianMs.ours / medianMs.floor,
      deepOverFloor: medianMs.deep / medianMs.floor,
    };
  } finally {
    await ours.dispose();
  }
}
