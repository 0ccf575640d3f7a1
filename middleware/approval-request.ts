/**
 * What a paused run asks a person, and what it takes back: langchain's `HITLRequest` and
 * `HITLResponse` (`humanInTheLoopMiddleware`), plus where the request comes from when a
 * subagent made the call. The browser console imports these types (erased by its bundler).
 */

import type { ActionRequest, Decision, HITLRequest, ReviewConfig } from "langchain";

export type { ActionRequest, Decision, ReviewConfig };

/** The subagent whose gated call a parent's interrupt carries (the `task` call that runs it). */
export interface ApprovalSubagent {
  /** The subagent's slug, as the `task` call named it. */
  subagent_type: string;
  /** The child thread paused on the request (its checkpoints hold the call). */
  child_thread_id: string;
  /** The parent's `task` tool call that runs the child. */
  tool_call_id: string;
  /** The task the child was given. */
  description: string;
  /** When the `task` call first started (ISO), for its `subagent_runs` record. */
  started_at: string;
}

/**
 * The value of one pending interrupt: the tool calls waiting (`actionRequests`, each its tool's
 * name, arguments and description) with what may be decided of each (`reviewConfigs`), and
 * `subagent` when the calls are a child's.
 */
export interface ApprovalRequest extends HITLRequest {
  subagent?: ApprovalSubagent;
}

/** The resume value for one request: one decision per action request, in order. */
export interface ApprovalResponse {
  decisions: Decision[];
}

/** A pending request and the LangGraph interrupt id that answers it. */
export interface PendingApproval {
  /** The interrupt's id: the key of `command.resume` when several are pending. */
  id: string;
  value: ApprovalRequest;
}

/** Whether an interrupt's value is an approval request (the only kind our agents raise). */
export function isApprovalRequest(value: unknown): value is ApprovalRequest {
  if (typeof value !== "object" || value === null) return false;
  const { actionRequests, reviewConfigs } = value as Partial<ApprovalRequest>;
  return Array.isArray(actionRequests) && Array.isArray(reviewConfigs);
}

/** The interrupts LangGraph reports (`{ id, value }`) that are approval requests. */
export function pendingApprovalsOf(interrupts: readonly unknown[]): PendingApproval[] {
  return interrupts.flatMap((interrupt) => {
    const { id, value } = (interrupt ?? {}) as { id?: unknown; value?: unknown };
    return typeof id === "string" && isApprovalRequest(value) ? [{ id, value }] : [];
  });
}

/** "write_file" or "researcher: write_file, read_file": what a request waits for, for people. */
export function describeApproval(request: ApprovalRequest): string {
  const tools = request.actionRequests.map((action) => action.name).join(", ");
  return request.subagent ? `${request.subagent.subagent_type}: ${tools}` : tools;
}

/** LangGraph's channel of an interrupted task's request. */
const INTERRUPT_CHANNEL = "__interrupt__";
/** Writes a task makes that are not its output (an interrupted task has made no output). */
const NOT_OUTPUT = new Set([INTERRUPT_CHANNEL, "__resume__", "__error__", "__scheduled__"]);

/**
 * The approval requests a checkpoint waits on, read from its pending writes alone (no state is
 * rebuilt): the interrupts of tasks that have written no output.
 */
export function pendingApprovalsOfWrites(
  writes: readonly (readonly [taskId: string, channel: string, value: unknown])[],
): PendingApproval[] {
  if (!writes.some(([, channel]) => channel === INTERRUPT_CHANNEL)) return [];
  const finished = new Set(
    writes.filter(([, channel]) => !NOT_OUTPUT.has(channel)).map(([taskId]) => taskId),
  );
  return pendingApprovalsOf(
    writes
      .filter(([taskId, channel]) => channel === INTERRUPT_CHANNEL && !finished.has(taskId))
      .flatMap(([, , value]) => (Array.isArray(value) ? value : [])),
  );
}
