import { RECORDED_RUN_STATUSES, type RecordedRunStatus } from "../../contract.js";
import type { AsyncTask } from "../../middleware/async-task-records.js";
import type { SubagentRun } from "../../middleware/subagent-runs.js";
import type { RunInfo } from "../../runs/run-info.js";
import { MULTITASK_STRATEGIES, type MultitaskStrategy } from "../../store/run-queue.js";

/** The API's `Run` (`Run` of `@langchain/langgraph-sdk`), plus our `attempt` and records. */
export interface RunJson {
  run_id: string;
  thread_id: string;
  assistant_id: string;
  status: RecordedRunStatus;
  /** 1, or more for a run a fleet's worker took over after its first process died. */
  attempt: number;
  metadata: Record<string, unknown>;
  multitask_strategy: MultitaskStrategy;
  created_at: string;
  updated_at: string;
  status_reason: string | null;
  subagent_runs: SubagentRun[];
  async_tasks: AsyncTask[];
}

/** The fields of a {@link RunJson} a run list's `select` may name. */
export const RUN_FIELDS = [
  "run_id",
  "thread_id",
  "assistant_id",
  "created_at",
  "updated_at",
  "status",
  "attempt",
  "metadata",
  "multitask_strategy",
  "status_reason",
  "subagent_runs",
  "async_tasks",
] as const satisfies readonly (keyof RunJson)[];

/**
 * The API's `Run` from a run's record (whichever process runs or ran it): the one shape every
 * route answers a run with, a run this process has just started included.
 */
export function runJson(row: RunInfo): RunJson {
  return {
    run_id: row.run_id,
    thread_id: row.thread_id,
    assistant_id: row.agent_id,
    status: (RECORDED_RUN_STATUSES as readonly string[]).includes(row.status)
      ? (row.status as RecordedRunStatus)
      : "error",
    attempt: Number(row.attempt) || 1,
    metadata: row.metadata,
    multitask_strategy: strategyOf(row),
    created_at: row.created_at,
    updated_at: row.updated_at,
    status_reason: row.status_reason,
    subagent_runs: row.subagent_runs,
    async_tasks: row.async_tasks,
  };
}

/** The multitask strategy a run was queued with ("reject" for one that never queued). */
function strategyOf(row: RunInfo): MultitaskStrategy {
  try {
    const asked = (JSON.parse(row.request ?? "{}") as { multitaskStrategy?: string })
      .multitaskStrategy;
    return (MULTITASK_STRATEGIES as readonly (string | undefined)[]).includes(asked)
      ? (asked as MultitaskStrategy)
      : "reject";
  } catch {
    return "reject";
  }
}
