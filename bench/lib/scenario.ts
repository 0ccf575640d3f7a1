import type { Table } from "./table.js";

/** Options every scenario gets from the command line. */
export interface BenchOptions {
  /** Fewer iterations and sizes: the whole bench in under two minutes. */
  quick: boolean;
  /** Our server's store and saver where a scenario runs `serve` (`--saver`; default sqlite). */
  saver: "sqlite" | "postgres";
  /** Our `serve` processes on one PostgreSQL database (`--fleet`; default 1). */
  fleet: number;
}

/** One of the targets, judged on this run's numbers. */
export interface TargetCheck {
  target: string;
  /** undefined: could not be measured here (e.g. PostgreSQL missing). */
  met: boolean | undefined;
  detail: string;
}

export interface ScenarioResult {
  tables: Table[];
  /** Everything measured, for `bench/results/latest.json`. */
  data: unknown;
  targets: TargetCheck[];
}

export interface Scenario {
  /** The `--only` name. */
  name: string;
  title: string;
  run(options: BenchOptions): Promise<ScenarioResult>;
}
