import { ErrorCode, hasErrorCode, type SubagentGraphError } from "../errors.js";
import type { PendingApproval } from "../middleware/approval-request.js";
import type { RunRequest } from "../runtime.js";
import { type AnswerOutcome, streamAnswer } from "./answer.js";
import { type AskLine, askAgain, askDecisions, type ResumeMap } from "./approval-prompt.js";
import { type CliContext, say } from "./context.js";

/** How a chat turn ended: as {@link AnswerOutcome}, or paused with nobody left to answer. */
export type TurnOutcome =
  | AnswerOutcome
  /** The run waits for approval and the input ended (or there is none) before the answers. */
  | { kind: "paused"; threadId: string; pending: PendingApproval[] };

/** Where the answers to pending requests come from. */
export interface Approver {
  /** Reads one answer; undefined when stdin holds none (it was the question). */
  ask: AskLine | undefined;
  /** The main agent's slug, to say who asks. */
  agent: string;
}

const RESUME_FIELD = "command.resume";

/**
 * One chat turn to its end: the question's run, and each time it pauses for approval the
 * pending requests shown and asked (see {@link askDecisions}), then the run resumed with the
 * answers, until the turn finishes. A resume the runtime refuses (an edit that does not fit the
 * tool's schema, a decision the gate does not allow) leaves everything pending: the refusal is
 * shown and that request asked again.
 *
 * @throws whatever the run throws, except a refused resume.
 */
export async function runTurn(
  context: CliContext,
  request: Omit<RunRequest, "signal">,
  approver: Approver,
): Promise<TurnOutcome> {
  return continueTurn(context, request.uid, await streamAnswer(context, request), approver);
}

/**
 * Asks the requests `threadId` waits on and resumes the turn to its end: for a chat opened on a
 * thread that was left paused.
 */
export async function answerThread(
  context: CliContext,
  uid: string,
  threadId: string,
  pending: PendingApproval[],
  approver: Approver,
): Promise<TurnOutcome> {
  const resumed = await resumeWith(context, uid, threadId, pending, approver);
  if (resumed === undefined) return { kind: "paused", threadId, pending };
  return continueTurn(context, uid, resumed, approver);
}

async function continueTurn(
  context: CliContext,
  uid: string,
  outcome: AnswerOutcome,
  approver: Approver,
): Promise<TurnOutcome> {
  for (;;) {
    if (outcome.kind !== "answered" || outcome.result.interrupts.length === 0) return outcome;
    const { threadId, interrupts } = outcome.result;
    const resumed = await resumeWith(context, uid, threadId, interrupts, approver);
    if (resumed === undefined) return { kind: "paused", threadId, pending: interrupts };
    outcome = resumed;
  }
}

/** Asks, resumes, and asks again what the runtime refused; undefined when no answer came. */
async function resumeWith(
  context: CliContext,
  uid: string,
  threadId: string,
  pending: readonly PendingApproval[],
  approver: Approver,
): Promise<AnswerOutcome | undefined> {
  const { io } = context;
  const { ask, agent } = approver;
  if (!ask) return undefined;
  const answers: ResumeMap | undefined = await askDecisions(io, pending, ask, agent);
  if (!answers) return undefined;
  const children = pending.flatMap((entry) => entry.value.subagent?.child_thread_id ?? []);
  for (;;) {
    try {
      return await streamAnswer(context, { uid, threadId, command: { resume: answers } }, children);
    } catch (error) {
      const refused = refusedRequest(error, pending);
      if (!refused) throw error;
      // Nothing ran and everything is still pending: ask the refused request again.
      say(io, `✗ refused: ${(error as Error).message}`);
      const again = await askAgain(io, refused, ask, agent);
      if (!again) return undefined;
      answers[refused.id] = again;
    }
  }
}

/** The pending request a `VALIDATION_FAILED` refusal of the resume names, if it names one. */
function refusedRequest(
  error: unknown,
  pending: readonly PendingApproval[],
): PendingApproval | undefined {
  if (!hasErrorCode(error, ErrorCode.Validation)) return undefined;
  const field = (error as SubagentGraphError).field ?? "";
  if (!field.startsWith(`${RESUME_FIELD}.`)) return undefined;
  const rest = field.slice(RESUME_FIELD.length + 1);
  return pending.find((entry) => rest === entry.id || rest.startsWith(`${entry.id}.`));
}
