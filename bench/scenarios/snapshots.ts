import { type ConversationResult, runInterleaved } from "../lib/conversation.js";
import type { Scenario, TargetCheck } from "../lib/scenario.js";
import type { SaverName } from "../lib/systems.js";
import { bytes, fmt, ratio, type Table } from "../lib/table.js";
import { analysePoint } from "./checkpoints.js";

/** The snapshot frequencies compared (updates of a delta channel between full snapshots). */
export const FREQUENCIES = [100, 250, 500, 1000] as const;
/** `BENCH_SNAPSHOT_SAVERS` (comma-separated), default SQLite and PostgreSQL. */
function sweepSavers(): SaverName[] {
  const names = (process.env.BENCH_SNAPSHOT_SAVERS ?? "sqlite,postgres").split(",");
  return names.filter((name): name is SaverName => ["memory", "sqlite", "postgres"].includes(name));
}

/**
 * Snapshot frequency sweep (`--only snapshots`): ours with delta storage at each
 * `deltaSnapshotFrequency`, one conversation of `BENCH_SNAPSHOT_TURNS` turns (default 200;
 * quick: 60) per frequency, side by side on each saver of `BENCH_SNAPSHOT_SAVERS`: bytes, where
 * snapshots land, read cost at the end. (500 turns × 4 frequencies × 2 savers take over an hour
 * here: each delta turn still slows down with the thread's length, see the checkpoints scenario.)
 */
export const snapshotScenario: Scenario = {
  name: "snapshots",
  title: "Delta snapshot frequency",
  async run({ quick }) {
    const turns = Number(process.env.BENCH_SNAPSHOT_TURNS) || (quick ? 60 : 200);
    const short = quick ? 20 : 50;
    const results: ConversationResult[] = [];
    const skipped: string[] = [];
    for (const saver of sweepSavers()) {
      const measured = await runInterleaved(
        saver,
        FREQUENCIES.map((frequency) => ({
          key: `f${frequency}`,
          system: "ours" as const,
          storage: "delta" as const,
          snapshotFrequency: frequency,
          turns,
        })),
        {
          readPoints: [turns],
          reads: () => (quick ? { warmup: 1, iterations: 5 } : { warmup: 2, iterations: 20 }),
          sampleFootprint: () => true,
          log: (line) => console.error(line),
        },
      );
      if (!measured) skipped.push(saver);
      else results.push(...measured);
    }
    const rows = results.map((result) => {
      const end = analysePoint(result, turns);
      const atShort = analysePoint(result, short);
      return { result, end, atShort };
    });
    const table: Table = {
      title: `Delta snapshot frequency: ours (delta), one conversation of ${turns} turns`,
      headers: [
        "saver",
        "snapshot every",
        "total payload",
        "bytes/turn, turns 1–5",
        `bytes/turn, turns ${short - 4}–${short}`,
        `${short - 4}–${short} / 1–5`,
        `bytes/turn, turns ${turns - 4}–${turns}`,
        "worst 5 turns / 1–5",
        "messages snapshots (turns)",
        "subagent_runs snapshots (turns)",
        `getState p50 ms at ${turns}`,
        `history p50 ms at ${turns}`,
        "replayed at head",
        "turn ms (last 10)",
      ],
      rows: rows.map(({ result, end, atShort }) => [
        result.saver,
        String(result.spec.snapshotFrequency),
        bytes(end.totalBytes),
        bytes(end.turnBytesEarly),
        bytes(atShort.turnBytesLate),
        ratio(atShort.lateOverEarly),
        bytes(end.turnBytesLate),
        ratio(end.worstWindowOverEarly),
        snapshotText(result.snapshotTurns?.messages),
        snapshotText(result.snapshotTurns?.subagent_runs),
        fmt(end.stateP50),
        fmt(end.historyP50),
        end.replayed ? `${end.replayed.messages ?? 0} / ${end.replayed.subagent_runs ?? 0}` : "—",
        fmt(end.turnMs, 1),
      ]),
      notes: [
        "snapshot every = deltaSnapshotFrequency: updates of a channel (supersteps that change it; `messages` changes ~4 times a turn here) between full snapshots of its value.",
        "snapshots (turns) = the turns whose checkpoints hold a full snapshot of that channel (the conversation's thread).",
        "worst 5 turns = the largest mean bytes/turn of any 5 consecutive turns ÷ turns 1–5: the linear target's ratio wherever its window falls.",
        `getState / history as in the checkpoints scenario (p50 of ${quick ? 5 : 20} interleaved reads); replayed at head = writes a head read replays (messages / subagent_runs).`,
        ...(skipped.length ? [`skipped (PostgreSQL not installed): ${skipped.join(", ")}`] : []),
      ],
    };
    const targets: TargetCheck[] = rows.map(({ result, atShort }) => ({
      target: `bytes per turn at turns ${short - 4}–${short} ≤ 1.2 × turns 1–5 at snapshot frequency ${result.spec.snapshotFrequency} (${result.saver})`,
      met: atShort.lateOverEarly <= 1.2,
      detail: `${ratio(atShort.lateOverEarly)}`,
    }));
    return { tables: [table], data: { turns, frequencies: FREQUENCIES, results }, targets };
  },
};

function snapshotText(turns: number[] | undefined): string {
  if (!turns || turns.length === 0) return "none";
  return turns.length > 6
    ? `${turns.length}: ${turns.slice(0, 4).join(", ")}, …`
    : turns.join(", ");
}
