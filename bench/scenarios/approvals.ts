import {
  type ApprovalsSystem,
  type Counts,
  deepApprovals,
  diffCounts,
  FINAL_ANSWER,
  freshThread,
  modelRequests,
  openOursApprovals,
  RESUME_COUNTS,
  reExecuted,
  TURN_COUNTS,
  toolExecutions,
} from "../lib/approvals.js";
import type { Scenario, TargetCheck } from "../lib/scenario.js";
import { median } from "../lib/stats.js";
import type { SaverName } from "../lib/systems.js";
import { fmt, ratio, type Table } from "../lib/table.js";
import { collectGarbage, type Repeat, rotated, timeMs } from "../lib/timing.js";

/**
 * Latencies of every model call: 0 ms (the orchestration's own cost, shown) and 100 ms, where the
 * wall-time target is judged, as the parallel scenario judges its wall targets.
 */
const LATENCIES_MS = [0, 100] as const;
const TARGET_LATENCY_MS = 100;
const SAVERS: readonly SaverName[] = ["memory", "sqlite", "postgres"];
/** The issue's target: the paused and resumed turn ≤ 1.1 × the same turn without a gate. */
const MAX_TURN_RATIO = 1.1;

type SystemName = "ours" | "deep";
const SYSTEM_LABEL: Record<SystemName, string> = { ours: "ours", deep: "Deep Agents" };

/** One gated turn (pause, then resume) of one system. */
interface GatedSample {
  pauseMs: number;
  resumeMs: number;
  /** What the resume ran. */
  resume: Counts;
  /** What the whole turn ran (pause and resume). */
  turn: Counts;
  /** Undefined when the turn paused once and the resume finished it with the final answer. */
  failure?: string;
}

interface SystemResult {
  gated: GatedSample[];
  ungatedMs: number[];
  /** What one ungated turn ran. */
  ungated: Counts;
}

interface CellResult {
  saver: SaverName;
  latencyMs: number;
  systems: Record<SystemName, SystemResult>;
}

/**
 * The approvals scenario: a main agent delegates to two subagents in one turn, one of which gates a
 * tool; the turn pauses, and is resumed with an approve decision. Ours and Deep Agents 1.14.1 on
 * the same scripted model, side by side: what the resume runs (model requests and tool executions,
 * and of those the finished calls it ran again), and the paused plus resumed turn's wall time ÷ the
 * same turn without a gate.
 */
export const approvalsScenario: Scenario = {
  name: "approvals",
  title: "Approvals: one paused subagent of two, resumed",
  async run({ quick }) {
    const repeat: Repeat = quick ? { warmup: 1, iterations: 3 } : { warmup: 2, iterations: 15 };
    const savers = quick ? SAVERS.slice(1, 2) : SAVERS;
    const cells: CellResult[] = [];
    const missing: SaverName[] = [];
    for (const saver of savers) {
      for (const latencyMs of LATENCIES_MS) {
        const cell = await measureCell(saver, latencyMs, repeat);
        if (cell) cells.push(cell);
        else if (!missing.includes(saver)) missing.push(saver);
      }
    }
    return {
      tables: [countsTable(cells), timeTable(cells, repeat)],
      data: { repeat, latenciesMs: LATENCIES_MS, missing, cells },
      targets: [
        ...savers.map((saver) => reExecutionTarget(saver, cells)),
        ...savers.map((saver) => timeTarget(saver, TARGET_LATENCY_MS, cells)),
      ],
    };
  },
};

async function measureCell(
  saver: SaverName,
  latencyMs: number,
  repeat: Repeat,
): Promise<CellResult | undefined> {
  const ours = await openOursApprovals(saver, latencyMs);
  if (!ours) return undefined;
  try {
    const systems: Record<SystemName, ApprovalsSystem> = {
      ours,
      deep: deepApprovals(ours.system.stockSaver, latencyMs),
    };
    const results: Record<SystemName, SystemResult> = {
      ours: { gated: [], ungatedMs: [], ungated: TURN_COUNTS },
      deep: { gated: [], ungatedMs: [], ungated: TURN_COUNTS },
    };
    const variants = (["ours", "deep"] as const).flatMap((name) => [
      { name, gated: true },
      { name, gated: false },
    ]);
    for (let round = 0; round < repeat.warmup + repeat.iterations; round += 1) {
      collectGarbage();
      const kept = round >= repeat.warmup;
      for (const { name, gated } of rotated(variants, round)) {
        const system = systems[name];
        if (gated) {
          const sample = await gatedTurn(system);
          if (kept) results[name].gated.push(sample);
        } else {
          const before = { ...system.counts };
          let output = "";
          const ms = await timeMs(async () => {
            output = await system.ungated(freshThread(name));
          });
          if (output !== FINAL_ANSWER) {
            throw new Error(
              `${SYSTEM_LABEL[name]}'s ungated turn answered ${JSON.stringify(output)}`,
            );
          }
          if (kept) {
            results[name].ungatedMs.push(ms);
            results[name].ungated = diffCounts(system.counts, before);
          }
        }
      }
    }
    return { saver, latencyMs, systems: results };
  } finally {
    await ours.dispose();
  }
}

/** One gated turn on a fresh thread: the pause, then the approve; a failure is recorded. */
async function gatedTurn(system: ApprovalsSystem): Promise<GatedSample> {
  const threadId = freshThread("gated");
  const start = { ...system.counts };
  let pending = 0;
  const pauseMs = await timeMs(async () => {
    pending = (await system.pause(threadId)).length;
  });
  const paused = { ...system.counts };
  let result: { output: string; pending: number } | undefined;
  let error: unknown;
  const resumeMs = await timeMs(async () => {
    try {
      result = await system.resume(threadId);
    } catch (caught) {
      error = caught;
    }
  });
  const sample: GatedSample = {
    pauseMs,
    resumeMs,
    resume: diffCounts(system.counts, paused),
    turn: diffCounts(system.counts, start),
  };
  if (pending !== 1) sample.failure = `the turn paused with ${pending} pending requests, not 1`;
  else if (error) sample.failure = `the resume threw: ${String(error).slice(0, 160)}`;
  else if (result && result.pending > 0) {
    sample.failure = `the resume paused again (${result.pending} pending)`;
  } else if (result?.output !== FINAL_ANSWER) {
    sample.failure = `the resume answered ${JSON.stringify(result?.output)}`;
  }
  return sample;
}

function worstReExecuted(samples: readonly GatedSample[]): number {
  return Math.max(...samples.map((sample) => reExecuted(sample.resume)));
}

function failures(samples: readonly GatedSample[]): string[] {
  return [...new Set(samples.flatMap((sample) => (sample.failure ? [sample.failure] : [])))];
}

const countText = (counts: Counts) =>
  `main ${counts.main}, writer ${counts.writer}, reader ${counts.reader}`;
const toolText = (counts: Counts) =>
  `lookup ${counts.writerLookup}+${counts.readerLookup}, note ${counts.note}`;
const sameCounts = (a: Counts, b: Counts) =>
  (Object.keys(a) as (keyof Counts)[]).every((key) => a[key] === b[key]);

function countsTable(cells: readonly CellResult[]): Table {
  // The counts do not depend on the latency: the cells at 0 ms show them.
  const rows = cells
    .filter((cell) => cell.latencyMs === LATENCIES_MS[0])
    .flatMap((cell) =>
      (["ours", "deep"] as const).map((name) => {
        const result = cell.systems[name];
        const first = result.gated[0];
        const broken = failures(result.gated);
        return [
          cell.saver,
          SYSTEM_LABEL[name],
          first ? String(modelRequests(first.resume)) : "n/a",
          first ? countText(first.resume) : "n/a",
          first ? String(toolExecutions(first.resume)) : "n/a",
          first ? toolText(first.resume) : "n/a",
          String(worstReExecuted(result.gated)),
          result.gated.every((sample) => sameCounts(sample.turn, result.ungated)) ? "yes" : "no",
          broken.length === 0 ? "resumed" : broken.join("; "),
        ];
      }),
    );
  return {
    title:
      "Approvals: what the resume runs (writer's gated note approved; reader finished during the pause)",
    headers: [
      "saver",
      "system",
      "model requests",
      "by agent",
      "tool executions",
      "by tool",
      "re-executed",
      "turn = ungated",
      "outcome",
    ],
    rows,
    notes: [
      `needed on resume: ${modelRequests(RESUME_COUNTS)} model requests (${countText(RESUME_COUNTS)}) and ${toolExecutions(RESUME_COUNTS)} tool execution (${toolText(RESUME_COUNTS)}); re-executed = finished calls run again (the worst turn); turn = ungated: pause + resume ran exactly what the turn without a gate runs (${countText(TURN_COUNTS)}; ${toolText(TURN_COUNTS)}).`,
      "lookup a+b = the writer's lookup + the reader's; same scripted models and tools for both systems, resumed with Command({ resume: { decisions: [{ type: 'approve' }] } }) (ours: runtime.run({ command: { resume } })).",
    ],
  };
}

function timeTable(cells: readonly CellResult[], repeat: Repeat): Table {
  const rows = cells.flatMap((cell) =>
    (["ours", "deep"] as const).map((name) => {
      const result = cell.systems[name];
      const turn = median(result.gated.map((sample) => sample.pauseMs + sample.resumeMs));
      const ungated = median(result.ungatedMs);
      return [
        cell.saver,
        String(cell.latencyMs),
        SYSTEM_LABEL[name],
        fmt(median(result.gated.map((sample) => sample.pauseMs)), 1),
        fmt(median(result.gated.map((sample) => sample.resumeMs)), 1),
        fmt(turn, 1),
        fmt(ungated, 1),
        ratio(turn / ungated, 3),
      ];
    }),
  );
  return {
    title:
      "Approvals: the paused and resumed turn against the same turn without a gate (median ms)",
    headers: [
      "saver",
      "model ms",
      "system",
      "pause run",
      "resume run",
      "pause + resume",
      "ungated turn",
      "turn ratio",
    ],
    rows,
    notes: [
      `turn ratio = median(pause + resume) ÷ median(ungated turn), the person's wait left out; ${repeat.iterations} turns each after ${repeat.warmup} warm-up rounds, ours and Deep Agents gated and ungated in a rotating order, on one saver instance per row pair; model ms = every model call's latency.`,
    ],
  };
}

function reExecutionTarget(saver: SaverName, cells: readonly CellResult[]): TargetCheck {
  const target = `0 finished calls re-executed on resume (${saver})`;
  const mine = cells.filter((cell) => cell.saver === saver);
  if (mine.length === 0) return { target, met: undefined, detail: `${saver} not available here` };
  const worst = (name: SystemName) =>
    Math.max(...mine.map((cell) => worstReExecuted(cell.systems[name].gated)));
  const broken = (name: SystemName) => mine.flatMap((cell) => failures(cell.systems[name].gated));
  const deepBroken = broken("deep");
  return {
    target,
    met: worst("ours") === 0 && broken("ours").length === 0,
    detail: `ours ${worst("ours")}${broken("ours").length ? ` (${broken("ours").join("; ")})` : ""}; Deep Agents ${worst("deep")}${deepBroken.length ? ` (${deepBroken.join("; ")})` : ", resumed"}`,
  };
}

function timeTarget(
  saver: SaverName,
  latencyMs: number,
  cells: readonly CellResult[],
): TargetCheck {
  const target = `paused + resumed turn ≤ ${MAX_TURN_RATIO} × the ungated turn (${saver}, ${latencyMs} ms model)`;
  const cell = cells.find((c) => c.saver === saver && c.latencyMs === latencyMs);
  if (!cell) return { target, met: undefined, detail: `${saver} not available here` };
  const atZero = cells.find((c) => c.saver === saver && c.latencyMs === 0);
  const turnRatio = (name: SystemName, at: CellResult = cell) => {
    const result = at.systems[name];
    return (
      median(result.gated.map((sample) => sample.pauseMs + sample.resumeMs)) /
      median(result.ungatedMs)
    );
  };
  return {
    target,
    met: turnRatio("ours") <= MAX_TURN_RATIO,
    detail: `ours ${ratio(turnRatio("ours"), 3)}, Deep Agents ${ratio(turnRatio("deep"), 3)}${atZero ? ` (0 ms model, not judged: ours ${ratio(turnRatio("ours", atZero), 3)}, Deep Agents ${ratio(turnRatio("deep", atZero), 3)})` : ""}`,
  };
}
