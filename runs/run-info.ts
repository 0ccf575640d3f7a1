import { type SubagentRun, subagentRunSchema } from "../middleware/subagent-runs.js";
import type { RunRow } from "../store/runs.js";

/**
 * A run's record, whichever process ran it (see `Runtime.runInfo`): its row, with the subagent
 * records it made parsed. `status_reason` says why it ended so when it did not end by itself
 * (its process stopped); `runner_*` name the process that ran it.
 */
export interface RunInfo extends Omit<RunRow, "subagent_runs"> {
  /** The records of the `task` calls the run made, whatever its end; [] while it runs. */
  subagent_runs: SubagentRun[];
}

/** `row` as a {@link RunInfo}; records that do not parse (data from disk) are left out. */
export function runInfoOf(row: RunRow): RunInfo {
  let stored: unknown;
  try {
    stored = JSON.parse(row.subagent_runs);
  } catch {
    stored = [];
  }
  const records = Array.isArray(stored) ? stored : [];
  return {
    ...row,
    subagent_runs: records.flatMap((record) => {
      const parsed = subagentRunSchema.safeParse(record);
      return parsed.success ? [parsed.data] : [];
    }),
  };
}
