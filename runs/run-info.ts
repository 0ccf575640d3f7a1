import { type AsyncTask, asyncTaskSchema } from "../middleware/async-task-records.js";
import { type SubagentRun, subagentRunSchema } from "../middleware/subagent-runs.js";
import type { RunRow } from "../store/runs.js";

/**
 * A run's record, whichever process ran it (see `Runtime.runInfo`): its row, with the subagent
 * records it made and its metadata parsed. `status_reason` says why it ended so when it did not
 * end by itself (its process stopped); `runner_*` name the process that ran it.
 */
export interface RunInfo extends Omit<RunRow, "subagent_runs" | "metadata" | "async_tasks"> {
  /** The records of the `task` calls the run made, whatever its end; [] while it runs. */
  subagent_runs: SubagentRun[];
  /**
   * The background tasks the run started or saw move on (README "Background subagents"), as
   * they stood when it ended; [] while it runs.
   */
  async_tasks: AsyncTask[];
  /** The metadata its client gave the run (`{}` when none). */
  metadata: Record<string, unknown>;
}

/**
 * `row` as a {@link RunInfo}; records that do not parse (data from disk) are left out, and
 * metadata that does not parse to an object reads as empty.
 */
export function runInfoOf(row: RunRow): RunInfo {
  const records = parsed(row.subagent_runs);
  const metadata = parsed(row.metadata);
  const tasks = parsed(row.async_tasks);
  return {
    ...row,
    async_tasks: (Array.isArray(tasks) ? tasks : []).flatMap((task) => {
      const checked = asyncTaskSchema.safeParse(task);
      return checked.success ? [checked.data] : [];
    }),
    subagent_runs: (Array.isArray(records) ? records : []).flatMap((record) => {
      const checked = subagentRunSchema.safeParse(record);
      return checked.success ? [checked.data] : [];
    }),
    metadata:
      typeof metadata === "object" && metadata !== null && !Array.isArray(metadata)
        ? (metadata as Record<string, unknown>)
        : {},
  };
}

function parsed(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
