import { ToolMessage } from "@langchain/core/messages";
import type { ToolRuntime } from "@langchain/core/tools";
import { Command } from "@langchain/langgraph";
import type { PendingApproval } from "./approval-request.js";
import { finishedRun, type RunIdentity } from "./run-records.js";
import type { SubagentRun } from "./subagent-runs.js";
import { TASK_TOOL_NAME, type TaskStreamEvent } from "./task-types.js";

/** The two events of one task call: `started` at most once, always before `finished`. */
export class CallEvents {
  private started = false;

  constructor(
    private readonly identity: RunIdentity,
    /** Where the child's own events stream (`child-namespace.ts`). */
    readonly namespace: string[],
    private readonly writer: ToolRuntime["writer"],
  ) {}

  start(): void {
    if (this.started) return;
    this.started = true;
    this.write({ type: "subagent_started", ...this.identity, namespace: this.namespace });
  }

  /** Emits `finished` (and `started` first when the call ended before it) and the result. */
  finish(run: SubagentRun, content: string): Command {
    this.start();
    this.write({ type: "subagent_finished", run });
    return result(run, content);
  }

  /** Ends a call before its child ran (refused, or it could not start), for `reason`. */
  end(reason: string, status: SubagentRun["status"] = "failed"): Command {
    return this.finish(endedRun(this.identity, reason, status), reason);
  }

  /** The child waits for a person: this call pauses until the parent is resumed. */
  waiting(pending: PendingApproval): void {
    this.write({
      type: "subagent_waiting",
      ...this.identity,
      namespace: this.namespace,
      approval: pending,
    });
  }

  private write(event: TaskStreamEvent): void {
    this.writer?.(event);
  }
}

/** The record of a call that ended before its child ran: no rounds, no child thread. */
function endedRun(
  identity: RunIdentity,
  reason: string,
  status: SubagentRun["status"],
): SubagentRun {
  return finishedRun(identity, {
    status,
    messages: [],
    maxRoundsReached: false,
    preview: "",
    error: reason,
  });
}

/** The ToolMessage (with the record as artifact) and the state update of one call. */
function result(run: SubagentRun, content: string): Command {
  return new Command({
    update: {
      messages: [
        new ToolMessage({
          content,
          tool_call_id: run.id,
          name: TASK_TOOL_NAME,
          status: run.status === "completed" ? "success" : "error",
          artifact: run,
        }),
      ],
      subagent_runs: [run],
    },
  });
}
