import type { RunOutcome } from "./run-lifecycle.js";

/** What this process's runs have done since it started (see {@link RunMetrics}). */
export interface RunCounts {
  /** Runs this process started (claimed their thread and lease). */
  started: number;
  /** Runs this process ended, by how they ended. */
  finished: Record<RunOutcome, number>;
}

/**
 * Counters of the runs one runtime executes, for the metrics endpoint. Counted where every run
 * goes through (`run-api.ts`): started once prepared, finished once released.
 */
export class RunMetrics {
  readonly #counts: RunCounts = {
    started: 0,
    finished: { success: 0, error: 0, interrupted: 0 },
  };

  started(): void {
    this.#counts.started += 1;
  }

  finished(status: RunOutcome): void {
    this.#counts.finished[status] += 1;
  }

  /** A copy of the counters now. */
  counts(): RunCounts {
    return { started: this.#counts.started, finished: { ...this.#counts.finished } };
  }
}
