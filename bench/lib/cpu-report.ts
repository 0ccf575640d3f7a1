/**
 * The cpu scenario's figures (`scenarios/cpu.ts`): each (system, clients) cell summed up over its
 * repetitions, the tables, and the targets of issue 42 judged on them.
 */
import type { CellSample } from "./cpu-cell.js";
import { LOAD_HEADERS, loadCells } from "./load-row.js";
import type { TargetCheck } from "./scenario.js";
import { median, percentile } from "./stats.js";
import { bytes, fmt, ratio, type Table } from "./table.js";

/** A (system, clients) cell over its repetitions. */
export interface CellSummary {
  system: string;
  clients: number;
  repetitions: number;
  runs: number;
  errors: number;
  /** Medians over the repetitions. */
  runsPerSecond: number;
  cpuMsPerRun: number;
  mainThreadMsPerRun: number;
  postgresMsPerRun: number;
  /** Server + PostgreSQL: what a run costs the machine's cores outside the clients and model. */
  totalMsPerRun: number;
  rssBeforeBytes: number;
  peakRssBytes: number;
  rssPerConcurrentRunBytes: number;
  /** Over every run of every repetition (enough runs for a p99). */
  p50Ms: number;
  p99Ms: number;
  pickupP50Ms: number;
  pickupP99Ms: number;
}

/** The two systems compared: `subject` ÷ `reference` is every ratio. */
export interface Comparison {
  subject: string;
  reference: string;
  /** "sqlite" or "postgres": our server's store. */
  saver: string;
  /** Our processes in the subject (2: a fleet against one process). */
  fleet: number;
}

/** Sums `samples` up by (system, clients), in `levels` order. */
export function summarize(
  samples: readonly CellSample[],
  systems: readonly string[],
  levels: readonly number[],
): CellSummary[] {
  return levels.flatMap((clients) =>
    systems.map((system) => {
      const cell = samples.filter((s) => s.system === system && s.clients === clients);
      const mid = (pick: (sample: CellSample) => number) => median(cell.map(pick));
      const latencies = cell.flatMap((s) => s.latenciesMs);
      const pickups = cell.flatMap((s) => s.pickupMs);
      return {
        system,
        clients,
        repetitions: cell.length,
        runs: cell.reduce((sum, s) => sum + s.runs, 0),
        errors: cell.reduce((sum, s) => sum + s.errors, 0),
        runsPerSecond: mid((s) => s.runsPerSecond),
        cpuMsPerRun: mid((s) => s.cpuMsPerRun),
        mainThreadMsPerRun: mid((s) => s.mainThreadMsPerRun),
        postgresMsPerRun: mid((s) => s.postgresMsPerRun),
        totalMsPerRun: mid((s) => s.cpuMsPerRun + s.postgresMsPerRun),
        rssBeforeBytes: mid((s) => s.rssBeforeBytes),
        peakRssBytes: mid((s) => s.peakRssBytes),
        rssPerConcurrentRunBytes: mid((s) => s.rssPerConcurrentRunBytes),
        p50Ms: percentile(latencies, 50),
        p99Ms: percentile(latencies, 99),
        pickupP50Ms: percentile(pickups, 50),
        pickupP99Ms: percentile(pickups, 99),
      };
    }),
  );
}

function find(summaries: readonly CellSummary[], system: string, clients: number) {
  return summaries.find((s) => s.system === system && s.clients === clients);
}

/** `subject ÷ reference` of one figure at `clients`. */
function over(
  summaries: readonly CellSummary[],
  comparison: Comparison,
  clients: number,
  pick: (summary: CellSummary) => number,
): number {
  const subject = find(summaries, comparison.subject, clients);
  const reference = find(summaries, comparison.reference, clients);
  return subject && reference ? pick(subject) / pick(reference) : Number.NaN;
}

/** The cells' table and the ratios' table. */
export function cpuTables(
  summaries: readonly CellSummary[],
  comparison: Comparison,
  levels: readonly number[],
  notes: string[],
): Table[] {
  const postgres = comparison.saver === "postgres";
  const cells: Table = {
    title: `CPU per delegating run: ${comparison.subject} and ${comparison.reference} (our store: ${comparison.saver}), SDK clients, 50 ms model`,
    headers: [
      "system",
      "clients",
      ...LOAD_HEADERS,
      "CPU ms/run",
      "main thread ms/run",
      ...(postgres ? ["postgres ms/run", "total ms/run", "pickup p50 ms"] : []),
      "RSS before",
      "peak RSS",
      "RSS / run in flight",
    ],
    rows: summaries.map((s) => [
      s.system,
      String(s.clients),
      ...loadCells(s),
      fmt(s.cpuMsPerRun, 1),
      fmt(s.mainThreadMsPerRun, 1),
      ...(postgres
        ? [fmt(s.postgresMsPerRun, 1), fmt(s.totalMsPerRun, 1), fmt(s.pickupP50Ms, 1)]
        : []),
      bytes(s.rssBeforeBytes),
      bytes(s.peakRssBytes),
      bytes(s.rssPerConcurrentRunBytes),
    ]),
    notes,
  };
  const ratios: Table = {
    title: `${comparison.subject} ÷ ${comparison.reference}`,
    headers: [
      "clients",
      "runs/s",
      "p50",
      "p99",
      postgres ? "CPU/run (+ postgres)" : "CPU/run",
      "main thread/run",
      "peak RSS",
      "RSS / run in flight",
    ],
    rows: levels.map((clients) => {
      const r = (pick: (summary: CellSummary) => number) =>
        ratio(over(summaries, comparison, clients, pick));
      return [
        String(clients),
        r((s) => s.runsPerSecond),
        r((s) => s.p50Ms),
        r((s) => s.p99Ms),
        r((s) => s.totalMsPerRun),
        r((s) => s.mainThreadMsPerRun),
        r((s) => s.peakRssBytes),
        r((s) => s.rssPerConcurrentRunBytes),
      ];
    }),
  };
  return [cells, ratios];
}

/** Issue 42's targets: against the dev server (targets 1 and 4), or a fleet's (target 3). */
export function cpuTargets(
  summaries: readonly CellSummary[],
  comparison: Comparison,
  levels: readonly number[],
): TargetCheck[] {
  const top = Math.max(...levels);
  const errors = summaries.reduce((sum, s) => sum + s.errors, 0);
  const cpuRatios = levels.map((clients) =>
    over(summaries, comparison, clients, (s) => s.totalMsPerRun),
  );
  const perLevel = (values: number[]) =>
    values.map((value, i) => `N=${levels[i]} ${ratio(value)}`).join(", ");
  const throughput = over(summaries, comparison, top, (s) => s.runsPerSecond);
  const label = `cpu (${comparison.saver})`;
  const checks: TargetCheck[] = [
    {
      target: `${label}: 0 errors (every answer checked: final text and both subagents)`,
      met: errors === 0,
      detail: `${errors} errors`,
    },
  ];
  if (comparison.fleet > 1) {
    const fleet = summaries.filter((s) => s.system === comparison.subject);
    const idle = find(summaries, comparison.subject, Math.min(...levels));
    checks.push(
      {
        target: `${label}: CPU per run of ${comparison.fleet} processes + PostgreSQL ≤ 1.1× one process's`,
        met: cpuRatios.every((value) => value <= 1.1),
        detail: `${perLevel(cpuRatios)} (runs/s at N=${top}: ${ratio(throughput)})`,
      },
      {
        target: `${label}: pickup p50 ≤ 20 ms on an idle fleet`,
        met: idle !== undefined && idle.pickupP50Ms <= 20,
        detail: `N=${idle?.clients} (one run at a time) p50 ${fmt(idle?.pickupP50Ms, 1)} ms, p99 ${fmt(idle?.pickupP99Ms, 1)} ms; at N=${top} p50 ${fmt(fleet.at(-1)?.pickupP50Ms, 1)} ms`,
      },
    );
    return checks;
  }
  const ours = find(summaries, comparison.subject, top);
  const dev = find(summaries, comparison.reference, top);
  checks.push(
    {
      target: `${label}: our server CPU per run ≤ 0.5× the dev server's at every N`,
      met: cpuRatios.every((value) => value <= 0.5),
      detail: perLevel(cpuRatios),
    },
    {
      target: `${label}: runs/s at N=${top} ≥ 2× the dev server's`,
      met: throughput >= 2,
      detail: `${fmt(ours?.runsPerSecond, 1)} vs ${fmt(dev?.runsPerSecond, 1)} runs/s: ${ratio(throughput)}`,
    },
    {
      target: `${label}: fair tail at N=${top}: our p99 ≤ 2× our p50 and ≤ the dev server's p99`,
      met:
        ours !== undefined &&
        dev !== undefined &&
        ours.p99Ms <= 2 * ours.p50Ms &&
        ours.p99Ms <= dev.p99Ms,
      detail: `ours p50 ${fmt(ours?.p50Ms, 0)} ms, p99 ${fmt(ours?.p99Ms, 0)} ms (${ratio((ours?.p99Ms ?? Number.NaN) / (ours?.p50Ms ?? Number.NaN))} p50); dev p99 ${fmt(dev?.p99Ms, 0)} ms`,
    },
  );
  return checks;
}
