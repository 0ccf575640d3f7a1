import { validate } from "@cfworker/json-schema";
import type { StructuredToolInterface } from "@langchain/core/tools";
import { interopSafeParse, isInteropZodSchema } from "@langchain/core/utils/types";
import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";
import { DECISION_TYPES, type DecisionType } from "../agents/interrupt-on.js";
import { getTupleForWrites } from "../checkpoints/writes-reads.js";
import { ErrorCode, SubagentGraphError, validationError } from "../errors.js";
import {
  type ApprovalResponse,
  describeApproval,
  type PendingApproval,
  pendingApprovalsOfWrites,
} from "../middleware/approval-request.js";

/**
 * The approval requests a thread's newest checkpoint waits on, read from its pending writes
 * alone (no state is rebuilt): the interrupts of tasks that have written no output.
 */
export async function pendingApprovalsAt(
  saver: BaseCheckpointSaver,
  threadId: string,
): Promise<PendingApproval[]> {
  const tuple = await getTupleForWrites(saver, {
    configurable: { thread_id: threadId, checkpoint_ns: "" },
  });
  return pendingApprovalsOfWrites(tuple?.pendingWrites ?? []);
}

/** "a1b2… (write_file), c3d4… (researcher: write_file)": pending requests, for messages. */
export function listPending(pending: readonly PendingApproval[]): string {
  return pending.map((entry) => `"${entry.id}" (${describeApproval(entry.value)})`).join(", ");
}

/** A new message on a paused thread: refused, naming what waits and how to answer it. */
export function awaitingApprovalError(threadId: string, pending: readonly PendingApproval[]) {
  return new SubagentGraphError(
    ErrorCode.AwaitingApproval,
    `thread "${threadId}" is waiting for approval of ${listPending(pending)}: answer with command.resume ({ "decisions": [{ "type": "approve" | "edit" | "reject" }] }, or a map from interrupt id to that when several are pending) before sending a new message`,
    {
      field: "input",
      details: { thread_id: threadId, interrupt_ids: pending.map((entry) => entry.id) },
    },
  );
}

/** Finds the tools a pending request's calls would run with, to check an edit against. */
export type ToolsOfRequest = (
  pending: PendingApproval,
) => Promise<readonly StructuredToolInterface[] | undefined>;

/**
 * Checks `resume` against the thread's pending requests before anything runs, and returns it as
 * LangGraph's map from interrupt id to response. Accepted: one response (`{ decisions }`) when
 * one request is pending, or a map naming pending interrupt ids (some or all of them). Each
 * response has one decision per tool call of its request, of a type the tool's gate allows; an
 * edit keeps the tool's name and gives arguments that fit the tool's schema.
 *
 * @throws SubagentGraphError `VALIDATION_FAILED` naming the field (`command.resume…`), the value
 *   and the fix; nothing has been written, and every request stays pending.
 */
export async function checkResume(
  threadId: string,
  pending: readonly PendingApproval[],
  resume: unknown,
  toolsOf: ToolsOfRequest,
): Promise<Record<string, ApprovalResponse>> {
  const field = "command.resume";
  if (pending.length === 0) {
    throw validationError(
      "command",
      `thread "${threadId}" is not waiting for any approval, so there is nothing to resume: send input (a new message) instead`,
    );
  }
  if (!isPlainObject(resume)) {
    throw validationError(
      field,
      `${field} ${shown(resume)} is invalid: use { "decisions": [...] }${pending.length > 1 ? `, or a map from interrupt id to that (pending: ${listPending(pending)})` : ""}`,
    );
  }
  const byId = new Map(pending.map((entry) => [entry.id, entry]));
  let answers: [PendingApproval, unknown, string][];
  if ("decisions" in resume) {
    const [only] = pending;
    if (pending.length > 1 || !only) {
      throw validationError(
        field,
        `${pending.length} requests are pending on thread "${threadId}" (${listPending(pending)}): resume with a map from interrupt id to { "decisions": [...] }`,
      );
    }
    answers = [[only, resume, field]];
  } else {
    const ids = Object.keys(resume);
    if (ids.length === 0) {
      throw validationError(
        field,
        `${field} is an empty map: name a pending interrupt id (${listPending(pending)})`,
      );
    }
    answers = ids.map((id) => {
      const entry = byId.get(id);
      if (!entry) {
        throw validationError(
          `${field}.${id}`,
          `interrupt id ${JSON.stringify(id)} is not pending on thread "${threadId}": use one of ${listPending(pending)}`,
        );
      }
      return [entry, resume[id], `${field}.${id}`];
    });
  }
  const checked: Record<string, ApprovalResponse> = {};
  for (const [entry, response, at] of answers) {
    checked[entry.id] = await checkResponse(entry, response, at, toolsOf);
  }
  return checked;
}

async function checkResponse(
  entry: PendingApproval,
  response: unknown,
  field: string,
  toolsOf: ToolsOfRequest,
): Promise<ApprovalResponse> {
  const { actionRequests, reviewConfigs } = entry.value;
  const names = actionRequests.map((action) => action.name).join(", ");
  const decisions = isPlainObject(response) ? response.decisions : undefined;
  if (!Array.isArray(decisions)) {
    throw validationError(
      `${field}.decisions`,
      `${field}.decisions ${shown(decisions)} is invalid: use a list with one decision per tool call (${names}), e.g. [{ "type": "approve" }]`,
    );
  }
  if (decisions.length !== actionRequests.length) {
    throw validationError(
      `${field}.decisions`,
      `${field}.decisions has ${decisions.length} decision${decisions.length === 1 ? "" : "s"} for ${actionRequests.length} tool call${actionRequests.length === 1 ? "" : "s"} (${names}): give exactly one per tool call, in order`,
    );
  }
  const out: ApprovalResponse["decisions"] = [];
  for (const [index, decision] of decisions.entries()) {
    const at = `${field}.decisions.${index}`;
    const action = actionRequests[index];
    const allowed = (reviewConfigs[index]?.allowedDecisions ?? []) as DecisionType[];
    const type = isPlainObject(decision) ? decision.type : undefined;
    if (!isPlainObject(decision) || !DECISION_TYPES.includes(type as DecisionType)) {
      throw validationError(
        `${at}.type`,
        `${at}.type ${shown(type)} is not a decision: use one of ${quoted(allowed)}`,
      );
    }
    if (!allowed.includes(type as DecisionType)) {
      throw validationError(
        `${at}.type`,
        `${at}.type "${String(type)}" is not allowed for tool "${action?.name}" (its interrupt_on allows ${quoted(allowed)}): use one of those`,
      );
    }
    if (type === "approve") out.push({ type: "approve" });
    else if (type === "reject") {
      const { message } = decision;
      if (message !== undefined && typeof message !== "string") {
        throw validationError(
          `${at}.message`,
          `${at}.message ${shown(message)} is invalid: use a string the model reads as the tool's answer, or leave it out`,
        );
      }
      out.push(message === undefined ? { type: "reject" } : { type: "reject", message });
    } else {
      out.push(await checkEdit(entry, index, decision.editedAction, `${at}.editedAction`, toolsOf));
    }
  }
  return { decisions: out };
}

async function checkEdit(
  entry: PendingApproval,
  index: number,
  edited: unknown,
  field: string,
  toolsOf: ToolsOfRequest,
): Promise<ApprovalResponse["decisions"][number]> {
  const name = entry.value.actionRequests[index]?.name ?? "";
  if (!isPlainObject(edited)) {
    throw validationError(
      field,
      `${field} ${shown(edited)} is invalid: use { "name": "${name}", "args": { … } }`,
    );
  }
  if (edited.name !== undefined && edited.name !== name) {
    throw validationError(
      `${field}.name`,
      `${field}.name ${shown(edited.name)} is invalid: an edit changes the arguments of "${name}" only; keep the name "${name}" (or reject the call)`,
    );
  }
  if (!isPlainObject(edited.args)) {
    throw validationError(
      `${field}.args`,
      `${field}.args ${shown(edited.args)} is invalid: use an object of "${name}"'s arguments`,
    );
  }
  const tool = (await toolsOf(entry))?.find((candidate) => candidate.name === name);
  const problem = tool ? schemaProblem(tool.schema, edited.args) : undefined;
  if (problem !== undefined) {
    throw validationError(
      `${field}.args`,
      `${field}.args do not fit tool "${name}": ${problem}; send arguments its schema accepts`,
    );
  }
  return { type: "edit", editedAction: { name, args: edited.args } };
}

/** Why `args` fail the tool's schema (zod or JSON schema), or undefined when they fit. */
function schemaProblem(schema: unknown, args: Record<string, unknown>): string | undefined {
  if (isInteropZodSchema(schema)) {
    const parsed = interopSafeParse(schema, args);
    if (parsed.success) return undefined;
    const issue = (parsed.error as { issues?: { path?: unknown[]; message?: string }[] })
      .issues?.[0];
    const path = issue?.path?.map(String).join(".");
    return `${path ? `${path}: ` : ""}${issue?.message ?? "invalid"}`;
  }
  if (isPlainObject(schema)) {
    const result = validate(args, schema as Parameters<typeof validate>[1]);
    if (result.valid) return undefined;
    const error = result.errors.at(-1);
    return `${error?.instanceLocation ?? ""} ${error?.error ?? "invalid"}`.trim();
  }
  return undefined;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function quoted(values: readonly string[]): string {
  return values.map((value) => `"${value}"`).join(", ");
}

/** A value as a message shows it: JSON, cut at 60 characters. */
function shown(value: unknown): string {
  if (value === undefined) return "(missing)";
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    text = String(value);
  }
  return text.length > 60 ? `${text.slice(0, 59)}…` : text;
}
