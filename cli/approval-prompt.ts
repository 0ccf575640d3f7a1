import { DECISION_TYPES } from "../agents/interrupt-on.js";
import { messageOf } from "../errors.js";
import type {
  ActionRequest,
  ApprovalResponse,
  Decision,
  PendingApproval,
} from "../middleware/approval-request.js";
import { allowedDecisions, describePending } from "./approval-view.js";
import type { Io } from "./context.js";
import { say } from "./context.js";
import { oneLine } from "./text.js";

/**
 * Asks for one line: the next line typed (or piped), or undefined when the input has ended.
 * `draft`, on a terminal, is put on the line for the person to edit.
 */
export type AskLine = (prompt: string, draft?: string) => Promise<string | undefined>;

/** The answers to pending requests, as `command.resume` takes them: interrupt id → decisions. */
export type ResumeMap = Record<string, ApprovalResponse>;

/**
 * Shows each pending request and asks a decision for each of its tool calls, in turn; the answers
 * go back in one resume map. `approve`, `edit` (new arguments as one line of JSON, asked again
 * until it parses as an object) and `reject` (with an optional message for the model) are
 * accepted as words or their first letter, and only when the tool's gate allows them.
 *
 * @returns the resume map, or undefined when the input ended (or the person quit) first.
 */
export async function askDecisions(
  io: Io,
  pending: readonly PendingApproval[],
  ask: AskLine,
  mainAgent: string | undefined,
): Promise<ResumeMap | undefined> {
  const answers: ResumeMap = {};
  for (const [index, entry] of pending.entries()) {
    say(io, describePending(entry, { index, count: pending.length }, mainAgent));
    const response = await askResponse(io, entry, ask);
    if (!response) return undefined;
    answers[entry.id] = response;
  }
  return answers;
}

/** Asks the decisions of one request again (after the runtime refused them). */
export async function askAgain(
  io: Io,
  entry: PendingApproval,
  ask: AskLine,
  mainAgent: string | undefined,
): Promise<ApprovalResponse | undefined> {
  say(io, describePending(entry, { index: 0, count: 1 }, mainAgent));
  return askResponse(io, entry, ask);
}

async function askResponse(
  io: Io,
  entry: PendingApproval,
  ask: AskLine,
): Promise<ApprovalResponse | undefined> {
  const decisions: Decision[] = [];
  for (const [index, action] of entry.value.actionRequests.entries()) {
    const decision = await askDecision(io, action, allowedDecisions(entry, index), ask);
    if (!decision) return undefined;
    decisions.push(decision);
  }
  return { decisions };
}

async function askDecision(
  io: Io,
  action: ActionRequest,
  allowed: readonly string[],
  ask: AskLine,
): Promise<Decision | undefined> {
  const tool = action.name;
  for (;;) {
    const line = await ask(`${tool}: ${allowed.join(" / ")}? `);
    if (line === undefined) return undefined;
    const type = decisionOf(line, allowed);
    if (type === undefined) {
      const word = line.trim().toLowerCase();
      say(
        io,
        (DECISION_TYPES as readonly string[]).includes(word)
          ? `"${word}" is not allowed for ${tool} (its interrupt_on allows ${allowed.join(", ")}): type one of those`
          : `"${line.trim()}" is not a decision for ${tool}: type one of ${allowed.join(", ")} (or its first letter)`,
      );
      continue;
    }
    if (type === "approve") return { type: "approve" };
    if (type === "reject") {
      const message = await ask("message for the model (Enter for none): ");
      if (message === undefined) return undefined;
      return message.trim() === ""
        ? { type: "reject" }
        : { type: "reject", message: message.trim() };
    }
    const args = await askArguments(io, action, ask);
    if (args === undefined) return undefined;
    return { type: "edit", editedAction: { name: tool, args } };
  }
}

/** The decision a typed word names, if `allowed` has it ("a", "approve", " Reject "). */
function decisionOf(line: string, allowed: readonly string[]): string | undefined {
  const word = line.trim().toLowerCase();
  if (word === "") return undefined;
  return allowed.find((type) => type === word || (word.length === 1 && type.startsWith(word)));
}

/** New arguments for a call; on a terminal its current ones are on the line to edit. */
async function askArguments(
  io: Io,
  action: ActionRequest,
  ask: AskLine,
): Promise<Record<string, unknown> | undefined> {
  const tool = action.name;
  let draft = JSON.stringify(action.args ?? {});
  for (;;) {
    const line = await ask(`new arguments for ${tool} (JSON on one line): `, draft);
    if (line === undefined) return undefined;
    const problem = argumentsProblem(line);
    if (typeof problem === "object") return problem;
    draft = line;
    say(
      io,
      `${problem}: type the arguments of ${tool} as one JSON object, like ${oneLine(JSON.stringify(action.args ?? {}), 100)}`,
    );
  }
}

/** The parsed arguments, or why the line is not a JSON object. */
function argumentsProblem(line: string): Record<string, unknown> | string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(line);
  } catch (error) {
    return `not JSON (${messageOf(error)})`;
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    return `${line.trim()} is not an object`;
  }
  return parsed as Record<string, unknown>;
}
