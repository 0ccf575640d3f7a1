import {
  type ConversationResult,
  type ConversationSpec,
  runInterleaved,
} from "../lib/conversation.js";
import type { Footprint } from "../lib/footprint.js";
import type { Scenario, TargetCheck } from "../lib/scenario.js";
import { median, percentile, quadraticFit } from "../lib/stats.js";
import { namedSavers, SAVERS, type SaverName } from "../lib/systems.js";
import { bytes, fmt, int, ratio, type Table } from "../lib/table.js";

/** The three systems of the comparison, by conversation key. */
export const SYSTEM_LABELS: Record<string, string> = {
  delta: "ours (delta)",
  full: "ours (full)",
  deep: "Deep Agents",
};

/**
 * How far the conversations run: a short point (50 turns) and a long point (`BENCH_LONG_TURNS`,
 * default 200) on every saver (`BENCH_CHECKPOINTS_SAVERS=sqlite` names the savers run at all,
 * `BENCH_CHECKPOINTS_LONG` those taken to the long point). Full storage and Deep Agents rewrite
 * the whole history at each step, and every system's model call reads the whole conversation,
 * so a turn's time grows with the thread: 200 turns of the three systems take ~15 min a saver
 * on this 2-core machine, 500 turns about six times that.
 */
function plan(quick: boolean): {
  savers: readonly SaverName[];
  short: number;
  long: number;
  longSavers: readonly SaverName[];
} {
  const long = Number(process.env.BENCH_LONG_TURNS) || (quick ? 60 : 200);
  const savers = namedSavers(process.env.BENCH_CHECKPOINTS_SAVERS) ?? SAVERS;
  const longSavers = namedSavers(process.env.BENCH_CHECKPOINTS_LONG) ?? savers;
  return { savers, short: quick ? 20 : 50, long, longSavers };
}

/** What one conversation shows at one read point (after `turns` turns). */
export interface PointAnalysis {
  key: string;
  system: string;
  saver: SaverName;
  turns: number;
  /** Payload bytes per turn (whole turn: parent and child threads), turns 1–5 and the last 5. */
  turnBytesEarly: number;
  turnBytesLate: number;
  lateOverEarly: number;
  /** The largest 5-turn window mean over turns 1..`turns`, ÷ turns 1–5 (sampled turns only). */
  worstWindowOverEarly: number;
  /** Rows and payload bytes per subagent call in the child's own checkpoints. */
  childBytesPerCall: number;
  parentRowsPerTurn: number;
  totalBytes: number;
  storeBytes: number;
  /** p50 (ms) of `getState` and of the first history page at this point. */
  stateP50: number;
  historyP50: number;
  /** Median whole-turn time (ms) over the last 10 turns up to this point, and its IQR. */
  turnMs: number;
  turnIqr: number;
  /** Writes a head read replays per delta channel (ours, delta only). */
  replayed: Record<string, number> | undefined;
  fit: { a: number; b: number; c: number; r2: number };
  growth: "linear" | "quadratic";
  dataDirFilesPerCall?: number;
}

/**
 * The checkpoints scenario: one conversation per system and saver, one task call per turn, run to a
 * short and a long point (50 and `BENCH_LONG_TURNS`, default 200; quick: 20 and 60): ours with
 * delta storage (the default), ours with full storage (LangGraph's stock storage) and Deep Agents,
 * side by side on each saver (turns interleaved); footprints along the way, reads at both points.
 */
export const checkpointScenario: Scenario = {
  name: "checkpoints",
  title: "Checkpoint growth",
  async run({ quick }) {
    const { savers: planned, short, long, longSavers } = plan(quick);
    const points = [short, long];
    const results: ConversationResult[] = [];
    const skipped: string[] = [];
    const readRounds = (point: number) =>
      quick
        ? { warmup: 1, iterations: 5 }
        : point === short
          ? { warmup: 2, iterations: 20 }
          : { warmup: 1, iterations: 10 };
    for (const saver of planned) {
      const turns = longSavers.includes(saver) ? long : short;
      const specs: ConversationSpec[] = [
        { key: "delta", system: "ours", storage: "delta", turns },
        { key: "full", system: "ours", storage: "full", turns },
        { key: "deep", system: "deep", turns },
      ];
      const measured = await runInterleaved(saver, specs, {
        readPoints: points,
        reads: readRounds,
        sampleFootprint: (turn) => turn <= 5 || turn % 5 === 0 || nearPoint(turn, points),
        log: (line) => console.error(line),
      });
      if (!measured) {
        skipped.push(saver);
        continue;
      }
      results.push(...measured);
    }
    const analyses = points.flatMap((point) =>
      results
        .filter((result) => result.spec.turns >= point)
        .map((result) => analysePoint(result, point)),
    );
    const find = (key: string, saver: SaverName, turns: number) =>
      analyses.find((a) => a.key === key && a.saver === saver && a.turns === turns);
    const savers = planned.filter((saver) => !skipped.includes(saver));

    const growth: Table = {
      title: `Checkpoint growth: one conversation, one task call per turn, at ${short} and ${long} turns`,
      headers: [
        "system",
        "saver",
        "turns",
        "bytes/turn, turns 1–5",
        "bytes/turn, last 5",
        "last/first",
        "total payload",
        "store size",
        "getState p50 ms",
        "history p50 ms",
        "turn ms (last 10)",
        "child bytes/call",
        "replayed at head",
        "growth",
      ],
      rows: analyses
        .sort(
          (a, b) =>
            a.turns - b.turns ||
            SAVERS.indexOf(a.saver) - SAVERS.indexOf(b.saver) ||
            Object.keys(SYSTEM_LABELS).indexOf(a.key) - Object.keys(SYSTEM_LABELS).indexOf(b.key),
        )
        .map((a) => [
          a.system,
          a.saver,
          String(a.turns),
          bytes(a.turnBytesEarly),
          bytes(a.turnBytesLate),
          ratio(a.lateOverEarly),
          bytes(a.totalBytes),
          bytes(a.storeBytes),
          fmt(a.stateP50),
          fmt(a.historyP50),
          fmt(a.turnMs, 1),
          bytes(a.childBytesPerCall),
          a.replayed ? replayedText(a.replayed) : "—",
          `${a.growth} (c=${int(a.fit.c)} B/turn²)`,
        ]),
      notes: [
        "payload = serialized checkpoints + metadata + blobs + pending writes of the conversation's thread and its children (ours: child threads; Deep Agents: its subgraph namespaces); store size = SQLite pages × page size (after a WAL checkpoint), pg_total_relation_size of the three checkpoint tables, or the payload for the memory saver.",
        "bytes/turn = payload added by a whole turn (one main-agent turn with one task call), mean over turns 1–5 and over the last 5 turns up to that point.",
        `getState = the compiled graph's getState at the thread's head; history = its getStateHistory first page (limit 10, as GET …/history); p50 of ${quick ? "5" : `20 (at ${short} turns) or 10 (at ${long})`} reads of each, all systems of a saver interleaved, after warm-up rounds.`,
        "turn ms = median whole-turn time over the last 10 turns (all systems of a saver take their turns in rotating order).",
        "replayed at head = writes a read of the head replays per delta channel (messages / subagent_runs) since that channel's last snapshot.",
        "growth: quadratic when the last 5 turns write ≥ 1.5 × the bytes of the first 5; c = the quadratic term of a least-squares fit of the total over the sampled turns.",
        ...(longSavers.length < planned.length
          ? [
              `${long} turns on ${longSavers.join(" and ")} only (${short} on the others, as BENCH_CHECKPOINTS_LONG named).`,
            ]
          : []),
        ...(skipped.length ? [`skipped (PostgreSQL not installed): ${skipped.join(", ")}`] : []),
      ],
    };

    const ratioRows: string[][] = [];
    for (const point of points) {
      for (const saver of savers) {
        const delta = find("delta", saver, point);
        if (!delta) continue;
        for (const other of ["full", "deep"]) {
          const them = find(other, saver, point);
          ratioRows.push([
            saver,
            String(point),
            `ours (delta) / ${SYSTEM_LABELS[other]}`,
            them ? ratio(delta.totalBytes / them.totalBytes, 3) : "n/a",
            them ? ratio(delta.storeBytes / them.storeBytes, 3) : "n/a",
            them ? ratio(delta.turnBytesLate / them.turnBytesLate, 3) : "n/a",
            them ? ratio(delta.stateP50 / them.stateP50) : "n/a",
            them ? ratio(delta.historyP50 / them.historyP50) : "n/a",
            them ? ratio(delta.turnMs / them.turnMs) : "n/a",
          ]);
        }
      }
    }
    const ratios: Table = {
      title: "Checkpoint growth: ours (delta) against ours (full) and Deep Agents, same run",
      headers: [
        "saver",
        "turns",
        "ratio",
        "total payload",
        "store size",
        "bytes/turn, last 5",
        "getState p50",
        "history p50",
        "turn time",
      ],
      rows: ratioRows,
      notes: [
        "< 1x: ours (delta) is smaller / faster. n/a: that system did not run that long here.",
      ],
    };

    const targets: TargetCheck[] = [];
    for (const saver of planned) {
      const delta = find("delta", saver, short);
      if (skipped.includes(saver)) continue;
      targets.push({
        target: `bytes per turn at turns ${short - 4}–${short} ≤ 1.2 × turns 1–5, ours (delta) (${saver})`,
        met: delta ? delta.lateOverEarly <= 1.2 : undefined,
        detail: delta
          ? `${bytes(delta.turnBytesEarly)}/turn at turns 1–5, ${bytes(delta.turnBytesLate)}/turn at turns ${short - 4}–${short} (${ratio(delta.lateOverEarly)})${atLong(find("delta", saver, long), long)}; ours (full) ${ratio(find("full", saver, short)?.lateOverEarly)}, Deep Agents ${ratio(find("deep", saver, short)?.lateOverEarly)}`
          : "PostgreSQL not installed",
      });
    }
    for (const saver of longSavers) {
      if (skipped.includes(saver)) continue;
      const delta = find("delta", saver, long);
      const full = find("full", saver, long);
      const missing = !delta
        ? `not run to ${long} turns on this saver`
        : `ours (full) ran ${short} turns only`;
      targets.push({
        target: `total checkpoint bytes at ${long} turns ≤ 1/20 of full storage's (${saver})`,
        met: delta && full ? delta.totalBytes * 20 <= full.totalBytes : undefined,
        detail:
          delta && full
            ? `delta ${bytes(delta.totalBytes)}, full ${bytes(full.totalBytes)} (1/${fmt(full.totalBytes / delta.totalBytes, 1)}); Deep Agents ${bytes(find("deep", saver, long)?.totalBytes)}`
            : missing,
      });
      targets.push({
        target: `getState p50 at ${long} turns ≤ 1.5 × full storage's (${saver})`,
        met: delta && full ? delta.stateP50 <= 1.5 * full.stateP50 : undefined,
        detail:
          delta && full
            ? `delta ${fmt(delta.stateP50)} ms, full ${fmt(full.stateP50)} ms (${ratio(delta.stateP50 / full.stateP50)}); history page: ${fmt(delta.historyP50)} vs ${fmt(full.historyP50)} ms`
            : missing,
      });
      targets.push({
        target: `turn time at ${long} turns ≤ full storage's (${saver})`,
        met: delta && full ? delta.turnMs <= full.turnMs : undefined,
        detail:
          delta && full
            ? `median of the last 10 turns: delta ${fmt(delta.turnMs, 1)} ms (IQR ${fmt(delta.turnIqr, 1)}), full ${fmt(full.turnMs, 1)} ms (IQR ${fmt(full.turnIqr, 1)}) (${ratio(delta.turnMs / full.turnMs)}${noise(delta, full)})`
            : missing,
      });
    }
    return {
      tables: [growth, ratios],
      data: { points, analyses, results },
      targets,
    };
  },
};

/** "; at N turns: … (ratio)" when the conversation ran that far. */
function atLong(analysis: PointAnalysis | undefined, long: number): string {
  if (!analysis) return "";
  return `; at ${long} turns: ${bytes(analysis.turnBytesLate)}/turn (${ratio(analysis.lateOverEarly)})`;
}

/** Whether a turn-time difference is within the two series' spread. */
function noise(a: PointAnalysis, b: PointAnalysis): string {
  const spread = Math.max(a.turnIqr, b.turnIqr);
  return Math.abs(a.turnMs - b.turnMs) <= spread ? "; difference within the IQR: noise" : "";
}

function nearPoint(turn: number, points: number[]): boolean {
  return points.some((point) => turn > point - 10 && turn <= point);
}

function replayedText(replayed: Record<string, number>): string {
  return `${replayed.messages ?? 0} / ${replayed.subagent_runs ?? 0}`;
}

/** The footprint total (parent and children) after `turn` turns. */
function total(footprint: Footprint): number {
  return footprint.parent.bytes + footprint.child.bytes;
}

/** Mean payload bytes per turn over turns `from`..`to` (needs footprints at from−1 and to). */
function bytesPerTurn(result: ConversationResult, from: number, to: number): number {
  const before = result.footprints[from - 1];
  const after = result.footprints[to];
  if (!before || !after) return Number.NaN;
  return (total(after) - total(before)) / (to - from + 1);
}

export function analysePoint(result: ConversationResult, point: number): PointAnalysis {
  const first = result.footprints[0] as Footprint;
  const last = result.footprints[point] as Footprint;
  const turnBytesEarly = bytesPerTurn(result, 1, Math.min(5, point));
  const turnBytesLate = bytesPerTurn(result, Math.max(1, point - 4), point);
  const sampled = Object.keys(result.footprints)
    .map(Number)
    .filter((turn) => turn > 0 && turn <= point)
    .sort((a, b) => a - b);
  // Worst 5-turn window among those whose two ends were sampled.
  let worst = 0;
  for (const end of sampled) {
    if (end >= 5 && result.footprints[end - 5]) {
      worst = Math.max(worst, bytesPerTurn(result, end - 4, end));
    }
  }
  const fit = quadraticFit(
    sampled,
    sampled.map((turn) => total(result.footprints[turn] as Footprint) - total(first)),
  );
  const lastTurns = result.turnMs.slice(Math.max(0, point - 10), point);
  const reads = result.reads[point];
  const lateOverEarly = turnBytesLate / turnBytesEarly;
  return {
    key: result.spec.key,
    system: SYSTEM_LABELS[result.spec.key] ?? result.spec.key,
    saver: result.saver,
    turns: point,
    turnBytesEarly,
    turnBytesLate,
    lateOverEarly,
    worstWindowOverEarly: worst / turnBytesEarly,
    childBytesPerCall: (last.child.bytes - first.child.bytes) / point,
    parentRowsPerTurn: (last.parent.rows - first.parent.rows) / point,
    totalBytes: total(last) - total(first),
    storeBytes: last.storeBytes,
    stateP50: reads ? median(reads.state) : Number.NaN,
    historyP50: reads ? median(reads.history) : Number.NaN,
    turnMs: median(lastTurns),
    turnIqr: percentile(lastTurns, 75) - percentile(lastTurns, 25),
    replayed: result.replayed[point],
    fit,
    growth: lateOverEarly >= 1.5 ? "quadratic" : "linear",
    ...(result.dataDir ? { dataDirFilesPerCall: result.dataDir.files / result.spec.turns } : {}),
  };
}
