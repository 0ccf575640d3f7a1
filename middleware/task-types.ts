import { z } from "zod";
import type { ChannelStorage } from "../checkpoints/channel-storage.js";
import type { PendingApproval } from "./approval-request.js";
import type { ChildGraph } from "./child-run.js";
import type { ParentRunScope } from "./parent-scope.js";
import type { SubagentRun } from "./subagent-runs.js";

/** The name of the delegation tool (defined once, in `contract.ts`). */
export { TASK_TOOL_NAME } from "../contract.js";

/** A subagent the calling agent may use: the resolved allow-list entry. */
export interface AllowedSubagent {
  slug: string;
  description: string;
}

/** Dispatch limits of the calling agent, re-read on every `task` call. */
export interface DispatchLimits {
  /** The tool result is cut to this many characters (code points). */
  maxResultChars: number;
  /** Per-child time limit; undefined = none. */
  subagentTimeoutMs: number | undefined;
  /** Most task calls one model turn may make; a turn with more has every task call refused. */
  maxParallelSubagents: number;
}

/** A subagent ready to run, as loaded at dispatch time. */
export interface LoadedChild {
  graph: ChildGraph;
  /** Its allowed tool set: its configured tools minus those a subagent may never have. */
  toolNames: readonly string[];
  /** Its `max_rounds` (own config, else the process-wide default), read now. */
  maxRounds: number;
  /** The knowledge bases it may search in this call (its own selection, the caller's user). */
  knowledgeBaseIds?: readonly string[];
}

/**
 * Everything the middleware needs from the outside, injected so that `middleware/` never imports
 * `backends/` (the child's graph comes from a factory it is handed).
 */
export interface TaskMiddlewareOptions {
  /** The resolved allow-list (non-empty; the graph mounts no middleware otherwise). */
  subagents: readonly AllowedSubagent[];
  /**
   * Loads the subagent's current graph for the caller, re-checking visibility at dispatch time;
   * undefined when it is no longer visible (deleted, unshared). It may throw (the store, the
   * model, the tools or the MCP servers failing): the task call is then recorded as failed.
   */
  loadChild(slug: string, scope: ParentRunScope): Promise<LoadedChild | undefined>;
  /** The caller's current dispatch limits (re-read on each dispatch: no restart needed). */
  limits(scope: ParentRunScope): Promise<DispatchLimits>;
  /** How `subagent_runs` is checkpointed (the runtime's `checkpointStorage`). */
  storage: ChannelStorage;
}

/** Arguments of the `task` tool. */
export const taskArgsSchema = z.object({
  description: z
    .string()
    .min(1)
    .describe(
      "The complete, self-contained task for the subagent: it sees nothing else of this conversation.",
    ),
  subagent_type: z
    .string()
    .describe("The slug of one of the subagents listed in your instructions."),
  tools: z
    .array(z.string())
    .optional()
    .describe(
      "Optional: restrict the subagent to these of its tools for this task. Omit (or pass []) for all of its tools.",
    ),
});
export type TaskArgs = z.infer<typeof taskArgsSchema>;

/**
 * Custom stream events the task tool emits (stream mode `custom`): exactly one
 * `subagent_started` and then one `subagent_finished` per task call, also for a call refused or
 * failing before its child runs (its `child_thread_id` is then "").
 */
export type TaskStreamEvent =
  | {
      type: "subagent_started";
      id: string;
      subagent_type: string;
      child_thread_id: string;
      description: string;
      started_at: string;
      /** The stream namespace of the child's own events (`tools:<task id>`, see `contract.ts`). */
      namespace: string[];
    }
  | {
      /** The child paused on a gated call: the parent's interrupt `approval.id` answers it. */
      type: "subagent_waiting";
      id: string;
      subagent_type: string;
      child_thread_id: string;
      description: string;
      started_at: string;
      namespace: string[];
      approval: PendingApproval;
    }
  | { type: "subagent_finished"; run: SubagentRun };
