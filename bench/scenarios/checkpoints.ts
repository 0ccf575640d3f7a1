import { join } from "node:path";
import { type Footprint, footprintReader, treeSize } from "../lib/footprint.js";
import { BenchModel } from "../lib/model.js";
import type { Scenario, TargetCheck } from "../lib/scenario.js";
import { childReply, fanOutInput, mainReply } from "../lib/scripts.js";
import { mean, quadraticFit } from "../lib/stats.js";
import { deepAgent, openOurs, SAVERS, type SaverName } from "../lib/systems.js";
import { bytes, fmt, int, ratio, type Table } from "../lib/table.js";

type System = "ours" | "deep";

/** What one conversation left in the saver, turn by turn. */
interface Series {
  system: System;
  saver: SaverName;
  turns: number;
  /** Footprint before the first turn and after each turn (index = turns done). */
  footprints: Footprint[];
  /** Files and bytes the runtime left in its data dir's `threads/` folder (ours only). */
  dataDir?: { files: number; dirs: number; bytes: number };
}

interface Analysis {
  system: System;
  saver: SaverName;
  turns: number;
  /** Rows and payload bytes written per subagent call into the child's own checkpoints. */
  childRowsPerCall: number;
  childBytesPerCall: number;
  /** Parent rows per turn, and parent bytes per turn early (turns 1-5) and late (last 5). */
  parentRowsPerTurn: number;
  parentBytesEarly: number;
  parentBytesLate: number;
  /** Total payload bytes per turn early and late, and their ratio. */
  turnBytesEarly: number;
  turnBytesLate: number;
  lateOverEarly: number;
  totalBytes: number;
  totalRows: number;
  storeBytes: number;
  /** Quadratic fit of total payload bytes over turns; `quadraticShare` = c·T² / total at T. */
  fit: { a: number; b: number; c: number; r2: number; quadraticShare: number };
  growth: "linear" | "quadratic";
  dataDirFilesPerCall?: number;
  dataDirBytesPerCall?: number;
}

/**
 * Scenario 3: one conversation of T turns, one task call per turn, on each saver; the footprint
 * after every turn. Ours and Deep Agents, each on a saver of its own.
 */
export const checkpointScenario: Scenario = {
  name: "checkpoints",
  title: "3. Checkpoint growth",
  async run({ quick }) {
    const turns = quick ? 20 : 50;
    const analyses: Analysis[] = [];
    const series: Series[] = [];
    const skipped: string[] = [];
    for (const saver of SAVERS) {
      for (const system of ["ours", "deep"] as const) {
        const measured = await conversation(system, saver, turns);
        if (!measured) {
          skipped.push(`${system}/${saver}`);
          continue;
        }
        series.push(measured);
        analyses.push(analyse(measured));
      }
    }
    const table: Table = {
      title: `Checkpoint growth: one conversation of ${turns} turns, one task call per turn`,
      headers: [
        "system",
        "saver",
        "child rows/call",
        "child bytes/call",
        "parent rows/turn",
        "parent bytes/turn, turns 1–5",
        `parent bytes/turn, turns ${turns - 4}–${turns}`,
        "late/early",
        `payload after ${turns}`,
        "store size",
        "fit c (B/turn²)",
        "growth",
        "data-dir files/call",
      ],
      rows: analyses.map((a) => [
        a.system === "ours" ? "ours" : "Deep Agents",
        a.saver,
        fmt(a.childRowsPerCall, 1),
        bytes(a.childBytesPerCall),
        fmt(a.parentRowsPerTurn, 1),
        bytes(a.parentBytesEarly),
        bytes(a.parentBytesLate),
        ratio(a.lateOverEarly),
        bytes(a.totalBytes),
        bytes(a.storeBytes),
        int(a.fit.c),
        `${a.growth} (r²=${fmt(a.fit.r2, 4)}, c·T²=${fmt(a.fit.quadraticShare * 100, 0)}%)`,
        a.dataDirFilesPerCall === undefined ? "—" : fmt(a.dataDirFilesPerCall, 1),
      ]),
      notes: [
        "payload = serialized checkpoints + metadata + blobs + pending writes; store size = SQLite pages × page size (after a WAL checkpoint), pg_total_relation_size of the three checkpoint tables, or the payload for the memory saver.",
        "child = our child threads (Deep Agents: its subgraph namespaces); parent = the conversation's thread, root namespace.",
        "growth: quadratic when the last 5 turns write ≥ 1.5 × the bytes of the first 5 (the fit's c·T² share says how much of the total the quadratic term explains).",
        ...(skipped.length ? [`skipped (PostgreSQL not installed): ${skipped.join(", ")}`] : []),
      ],
    };
    const targets: TargetCheck[] = analyses
      .filter((a) => a.system === "ours")
      .map((a) => ({
        target: `checkpoint bytes per call independent of conversation length (${a.saver})`,
        met: a.lateOverEarly < 1.2,
        detail: `child thread: ${bytes(a.childBytesPerCall)}/call (constant); the whole turn wrote ${bytes(a.turnBytesEarly)} at turns 1–5 and ${bytes(a.turnBytesLate)} at turns ${a.turns - 4}–${a.turns} (${ratio(a.lateOverEarly)}): ${a.growth} total`,
      }));
    return { tables: [table], data: { turns, analyses, series }, targets };
  },
};

async function conversation(
  system: System,
  saver: SaverName,
  turns: number,
): Promise<Series | undefined> {
  const main = new BenchModel("main", mainReply);
  const child = new BenchModel("child", childReply);
  const ours = await openOurs({ saver, mainModel: main, childModel: child });
  if (!ours) return undefined;
  const reader = footprintReader(ours);
  const threadId = `conversation-${system}`;
  try {
    // Creates the saver's tables, so the baseline is the empty schema.
    await ours.saver.getTuple({ configurable: { thread_id: "none", checkpoint_ns: "" } });
    const deep = deepAgent(main, child, ours.saver);
    const footprints = [await reader.read(threadId)];
    for (let turn = 1; turn <= turns; turn += 1) {
      if (system === "ours") {
        const result = await ours.run(fanOutInput(1), threadId);
        if (result.subagentRuns.filter((r) => r.status === "completed").length !== turn) {
          throw new Error(`checkpoint scenario: turn ${turn} did not complete its subagent`);
        }
      } else {
        await deep.run(fanOutInput(1), threadId);
      }
      footprints.push(await reader.read(threadId));
    }
    return {
      system,
      saver,
      turns,
      footprints,
      ...(system === "ours" ? { dataDir: treeSize(join(ours.dataDir, "threads")) } : {}),
    };
  } finally {
    await reader.close();
    await ours.dispose();
  }
}

function analyse(series: Series): Analysis {
  const { footprints, turns } = series;
  const total = (f: Footprint) => f.parent.bytes + f.child.bytes;
  const delta = (turn: number, pick: (f: Footprint) => number) =>
    pick(footprints[turn] as Footprint) - pick(footprints[turn - 1] as Footprint);
  const turnRange = (from: number, to: number) =>
    Array.from({ length: to - from + 1 }, (_, i) => from + i);
  const all = turnRange(1, turns);
  const early = turnRange(1, Math.min(5, turns));
  const late = turnRange(Math.max(1, turns - 4), turns);
  const first = footprints[0] as Footprint;
  const last = footprints[turns] as Footprint;
  const xs = all;
  const ys = all.map((turn) => total(footprints[turn] as Footprint) - total(first));
  const fit = quadraticFit(xs, ys);
  const totalBytes = total(last) - total(first);
  const turnBytesEarly = mean(early.map((t) => delta(t, total)));
  const turnBytesLate = mean(late.map((t) => delta(t, total)));
  const lateOverEarly = turnBytesLate / turnBytesEarly;
  return {
    system: series.system,
    saver: series.saver,
    turns,
    childRowsPerCall: (last.child.rows - first.child.rows) / turns,
    childBytesPerCall: (last.child.bytes - first.child.bytes) / turns,
    parentRowsPerTurn: (last.parent.rows - first.parent.rows) / turns,
    parentBytesEarly: mean(early.map((t) => delta(t, (f) => f.parent.bytes))),
    parentBytesLate: mean(late.map((t) => delta(t, (f) => f.parent.bytes))),
    turnBytesEarly,
    turnBytesLate,
    lateOverEarly,
    totalBytes,
    totalRows: last.parent.rows + last.child.rows - first.parent.rows - first.child.rows,
    storeBytes: last.storeBytes,
    fit: { ...fit, quadraticShare: (fit.c * turns * turns) / totalBytes },
    growth: lateOverEarly >= 1.5 ? "quadratic" : "linear",
    ...(series.dataDir
      ? {
          dataDirFilesPerCall: series.dataDir.files / turns,
          dataDirBytesPerCall: series.dataDir.bytes / turns,
        }
      : {}),
  };
}
