/**
 * Requests for approval (README "Approvals") as the chat page reads and answers them. Pure
 * functions over plain data (no DOM), unit-tested without a browser.
 *
 * Where a pending request is read:
 * - a thread's state (`GET /threads/:id/state`): `tasks[].interrupts` (LangGraph's own place,
 *   as `useStream` reads it after a reload), and `values.subagent_runs` records with status
 *   `waiting`, which carry the parent's interrupt that answers their child;
 * - a run's stream: `__interrupt__` in root `updates` and `values` events (the `values` event
 *   then holds nothing else), and the task tool's `subagent_waiting` custom event.
 *
 * A request is answered by a run on the thread with `command: { resume: { [id]: { decisions } } }`:
 * the map names the one request a card answers, so several pending requests are each answered
 * from their own card (the others stay pending).
 */

import type {
  ActionRequest,
  ApprovalRequest,
  Decision,
  PendingApproval,
} from "../../middleware/approval-request.js";

export type { ActionRequest, ApprovalRequest, Decision, PendingApproval };

/** What a person may decide of one gated call. */
export type DecisionType = "approve" | "edit" | "reject";

/** LangGraph's key for interrupts in `updates` and `values` events. */
export const INTERRUPT_KEY = "__interrupt__";

/** Whether `value` is a request for approval (the only interrupts our agents raise). */
export function isApprovalRequest(value: unknown): value is ApprovalRequest {
  if (typeof value !== "object" || value === null) return false;
  const { actionRequests, reviewConfigs } = value as Partial<ApprovalRequest>;
  return (
    Array.isArray(actionRequests) &&
    Array.isArray(reviewConfigs) &&
    actionRequests.every(
      (action) => typeof action === "object" && action !== null && typeof action.name === "string",
    )
  );
}

/** The approval requests among LangGraph interrupts (`[{ id, value }]`); others are left out. */
export function approvalsOf(interrupts: unknown): PendingApproval[] {
  if (!Array.isArray(interrupts)) return [];
  return interrupts.flatMap((interrupt) => {
    const { id, value } = (interrupt ?? {}) as { id?: unknown; value?: unknown };
    return typeof id === "string" && isApprovalRequest(value) ? [{ id, value }] : [];
  });
}

/** `approvals` with `added` put in: a request already there (same id) is replaced in place. */
export function mergeApprovals(
  approvals: readonly PendingApproval[],
  added: readonly PendingApproval[],
): PendingApproval[] {
  const merged = [...approvals];
  for (const entry of added) {
    const index = merged.findIndex((existing) => existing.id === entry.id);
    if (index === -1) merged.push(entry);
    else merged[index] = entry;
  }
  return merged;
}

/** The requests carried by `waiting` records of a state's `subagent_runs`. */
export function waitingApprovalsOf(values: unknown): PendingApproval[] {
  const runs = (values as { subagent_runs?: unknown } | null | undefined)?.subagent_runs;
  if (!Array.isArray(runs)) return [];
  return approvalsOf(
    runs
      .filter((run) => (run as { status?: unknown } | null)?.status === "waiting")
      .map((run) => (run as { approval?: unknown }).approval),
  );
}

/**
 * The requests a thread waits on, from its state (`threads.getState`): its tasks' interrupts,
 * then the `waiting` subagent records' (the same requests, read twice, count once). A task with
 * a `result` has finished: LangGraph still lists the interrupt it was resumed from (one of
 * several requests answered, the step not over yet), but nothing waits on it any more.
 */
export function pendingFromState(state: { values?: unknown; tasks?: unknown }): PendingApproval[] {
  const tasks = Array.isArray(state.tasks) ? state.tasks : [];
  const fromTasks = tasks.flatMap((task) => {
    const { interrupts, result } = (task ?? {}) as { interrupts?: unknown; result?: unknown };
    return result === undefined || result === null ? approvalsOf(interrupts) : [];
  });
  return mergeApprovals(fromTasks, waitingApprovalsOf(state.values));
}

/**
 * The requests of a thread as `threads.get` returns it (`interrupts`: task id → interrupts).
 * After some of several requests were answered, LangGraph's tasks still list the answered ones
 * until the step ends, and this map cannot tell them apart: the page reads the state instead
 * ({@link pendingFromState}).
 */
export function pendingFromThread(thread: { interrupts?: unknown }): PendingApproval[] {
  const byTask = thread.interrupts;
  if (typeof byTask !== "object" || byTask === null) return [];
  return mergeApprovals([], Object.values(byTask).flatMap(approvalsOf));
}

/**
 * The decisions allowed for action `index` of `request`: its review config (langchain lists one
 * per action, in order; matched by the tool's name when the order does not say).
 */
export function allowedDecisions(request: ApprovalRequest, index: number): DecisionType[] {
  const action = request.actionRequests[index];
  const byIndex = request.reviewConfigs[index];
  const config =
    byIndex && byIndex.actionName === action?.name
      ? byIndex
      : request.reviewConfigs.find((candidate) => candidate.actionName === action?.name);
  const allowed = (config?.allowedDecisions ?? []).filter((type): type is DecisionType =>
    ["approve", "edit", "reject"].includes(type),
  );
  return allowed;
}

/** What a person has chosen for one call so far (an edit and a rejection as typed). */
export type ActionDraft =
  | { type: "approve" }
  | { type: "edit"; argsText: string }
  | { type: "reject"; message: string };

/** An edit starting from the call's own arguments, as indented JSON. */
export function editDraft(action: ActionRequest): ActionDraft {
  return { type: "edit", argsText: JSON.stringify(action.args ?? {}, null, 2) };
}

/** The decisions to send, or why they cannot be sent yet (and which call is at fault). */
export type DecisionsResult =
  | { ok: true; decisions: Decision[] }
  | { ok: false; index: number; message: string };

/**
 * Turns the drafts (one per call of `request`, in order) into langchain's decisions: each must be
 * chosen and allowed, and an edit's arguments must be a JSON object (the server checks them
 * against the tool's schema next, and its 422 names what does not fit).
 */
export function decisionsOf(
  request: ApprovalRequest,
  drafts: readonly (ActionDraft | undefined)[],
): DecisionsResult {
  const decisions: Decision[] = [];
  for (const [index, action] of request.actionRequests.entries()) {
    const draft = drafts[index];
    const allowed = allowedDecisions(request, index);
    if (!draft) {
      return { ok: false, index, message: `Choose ${orList(allowed)} for ${action.name}.` };
    }
    if (!allowed.includes(draft.type)) {
      return {
        ok: false,
        index,
        message: `${capitalised(draft.type)} is not allowed for ${action.name}: choose ${orList(allowed)}.`,
      };
    }
    if (draft.type === "approve") decisions.push({ type: "approve" });
    else if (draft.type === "reject") {
      const message = draft.message.trim();
      decisions.push(message ? { type: "reject", message } : { type: "reject" });
    } else {
      const parsed = parseArgs(draft.argsText);
      if (typeof parsed === "string") {
        return { ok: false, index, message: `The arguments of ${action.name} ${parsed}.` };
      }
      decisions.push({ type: "edit", editedAction: { name: action.name, args: parsed } });
    }
  }
  return { ok: true, decisions };
}

/** The arguments typed in an edit, or what is wrong with them (completing "The arguments …"). */
function parseArgs(text: string): Record<string, unknown> | string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    return `are not valid JSON (${(error as Error).message}): fix them, or choose Approve or Reject`;
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    return `must be a JSON object such as {"path": "notes.md"}, not ${JSON.stringify(parsed)}`;
  }
  return parsed as Record<string, unknown>;
}

/** The run command that answers request `id` (and only it) with `decisions`. */
export function resumeCommand(
  id: string,
  decisions: readonly Decision[],
): { resume: Record<string, { decisions: Decision[] }> } {
  return { resume: { [id]: { decisions: [...decisions] } } };
}

/** The page element id of request `id`'s card (a subagent card links to it). */
export function approvalElementId(id: string): string {
  return `approval-${id}`;
}

/** The requests left once `answered` has been sent. */
export function withoutApproval(
  approvals: readonly PendingApproval[],
  answered: string,
): PendingApproval[] {
  return approvals.filter((entry) => entry.id !== answered);
}

function orList(types: readonly DecisionType[]): string {
  const words = types.map(capitalised);
  if (words.length <= 1) return words[0] ?? "a decision";
  return `${words.slice(0, -1).join(", ")} or ${words.at(-1)}`;
}

function capitalised(type: string): string {
  return type.charAt(0).toUpperCase() + type.slice(1);
}
