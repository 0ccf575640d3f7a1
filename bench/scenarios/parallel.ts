import { BenchModel } from "../lib/model.js";
import type { Scenario, TargetCheck } from "../lib/scenario.js";
import { childReply, fanOutInput, mainReply } from "../lib/scripts.js";
import { median } from "../lib/stats.js";
import {
  bareChild,
  deepAgent,
  floor,
  langGraphMinimum,
  openOurs,
  type SaverName,
} from "../lib/systems.js";
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

type System = "ours" | "deep" | "minimum" | "floor";

interface KResult {
  saver: SaverName;
  k: number;
  medianMs: Record<System, number>;
  samplesMs: Record<System, number[]>;
  efficiency: Record<System, number>;
  oursOverFloor: number;
  deepOverFloor: number;
  /** The LangGraph minimum (`langGraphMinimum` in `lib/systems.ts`) ÷ the floor. */
  minimumOverFloor: number;
}

/**
 * The parallel scenario: every model call takes 100 ms; a fan-out of K tasks (cap raised to K)
 * should take three latencies whatever K is. Ours, Deep Agents, the LangGraph minimum and the
 * floor, interleaved, on the same saver.
 */
export const parallelScenario: Scenario = {
  name: "parallel",
  title: "Parallel efficiency (100 ms per model call)",
  async run({ quick }) {
    // A median of 5 moved by more than ours and Deep Agents' walls differ (1 % here): 15.
    const repeat = quick ? { warmup: 1, iterations: 3 } : { warmup: 2, iterations: 15 };
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
        "LangGraph min. ms",
        "floor ms",
        "ours eff.",
        "DA eff.",
        "floor eff.",
        "ours/floor",
        "DA/floor",
        "min./floor",
      ],
      rows: results.map((r) => [
        r.saver,
        String(r.k),
        fmt(r.medianMs.ours, 1),
        fmt(r.medianMs.deep, 1),
        fmt(r.medianMs.minimum, 1),
        fmt(r.medianMs.floor, 1),
        `${fmt(r.efficiency.ours * 100, 1)}%`,
        `${fmt(r.efficiency.deep * 100, 1)}%`,
        `${fmt(r.efficiency.floor * 100, 1)}%`,
        ratio(r.oursOverFloor, 3),
        ratio(r.deepOverFloor, 3),
        ratio(r.minimumOverFloor, 3),
      ]),
      notes: [
        "efficiency = ideal / measured wall; the floor (one model call, K bare children with Promise.all, one model call) is measured in the same run, interleaved.",
        "LangGraph min. = a createAgent main agent without middleware whose one tool invokes the bare child on a fresh thread, checkpointed with durability sync: no run records, guards or limits.",
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
          detail: `${small.map((r) => `K=${r.k}: ${ratio(r.oursOverFloor, 3)}`).join(", ")} (LangGraph minimum ${small.map((r) => `K=${r.k}: ${ratio(r.minimumOverFloor, 3)}`).join(", ")})`,
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
    const bare = bareChild(child, ours.stockSaver);
    const noOrchestrator = floor(main, bare);
    const minimum = langGraphMinimum(main, bare, ours.stockSaver);
    const first = await ours.run(fanOutInput(k));
    const completed = first.subagentRuns.filter((run) => run.status === "completed").length;
    if (completed !== k) throw new Error(`parallel check failed: ${completed}/${k} completed`);
    const answers = (await minimum(fanOutInput(k))).messages.filter(
      (message) => message.getType() === "tool",
    ).length;
    if (answers !== k) throw new Error(`LangGraph minimum check failed: ${answers}/${k} answers`);
    const samples = await measureInterleaved(
      {
        ours: () => ours.run(fanOutInput(k)),
        deep: () => deep.run(fanOutInput(k)),
        minimum: () => minimum(fanOutInput(k)),
        floor: () => noOrchestrator(k),
      },
      repeat,
    );
    const medianMs: Record<System, number> = {
      ours: median(samples.ours),
      deep: median(samples.deep),
      minimum: median(samples.minimum),
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
        minimum: IDEAL_MS / medianMs.minimum,
        floor: IDEAL_MS / medianMs.floor,
      },
      oursOverFloor: medianMs.ours / medianMs.floor,
      deepOverFloor: medianMs.deep / medianMs.floor,
      minimumOverFloor: medianMs.minimum / medianMs.floor,
    };
  } finally {
    await ours.dispose();
  }
}
