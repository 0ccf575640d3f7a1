/**
 * The columns every load level shares, whoever serves it (`scenarios/load.ts`,
 * `scenarios/fleet.ts`, `lib/cpu-report.ts`): one helper, so the three tables read alike and cannot
 * drift apart.
 */
import { fmt } from "./table.js";

/** A level's outcome: what its clients ran and how long each run took. */
export interface LoadFigures {
  runs: number;
  errors: number;
  runsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
}

/** The headers of {@link loadCells}, in the same order. */
export const LOAD_HEADERS: readonly string[] = ["runs", "errors", "runs/s", "p50 ms", "p99 ms"];

/** A level's runs, errors, runs/s (one decimal) and p50/p99 latency (whole ms). */
export function loadCells(level: LoadFigures): string[] {
  return [
    String(level.runs),
    String(level.errors),
    fmt(level.runsPerSecond, 1),
    fmt(level.p50Ms, 0),
    fmt(level.p99Ms, 0),
  ];
}
