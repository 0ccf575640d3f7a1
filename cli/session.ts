import { DEMO_UID, seedDemo } from "../agents/demo.js";
import type { AgentRecord } from "../agents/schema.js";
import { ErrorCode, hasErrorCode, SubagentGraphError } from "../errors.js";
import { describeApproval, type PendingApproval } from "../middleware/approval-request.js";
import { defaultModelSpec, OFFLINE_MODEL } from "../models/factory.js";
import type { Runtime } from "../runtime.js";
import type { AskLine } from "./approval-prompt.js";
import type { StoreOptions } from "./commands/declaration.js";
import {
  type CliContext,
  EXIT_AWAITING_APPROVAL,
  EXIT_INTERRUPTED,
  type Io,
  say,
} from "./context.js";
import { answerThread, runTurn, type TurnOutcome } from "./turn.js";

/** The agent a chat talks to, resolved once before the first question. */
export interface ChatTarget {
  store: StoreOptions;
  agent: AgentRecord;
  /** Whether the user picked the agent with `--agent` (hints then repeat it). */
  agentGiven: boolean;
}

/**
 * Resolves the agent to chat with. Without `--agent` the agent of `threadId` goes on (when it
 * has one that still exists), else the user's default agent is used, and a user without one
 * gets the demo agents first, so a fresh install answers straight away. With
 * `--agent` nothing is created: the user asked for a specific agent, and seeding demo agents
 * beside it would be a surprise.
 *
 * Nothing is created for a mistyped `--uid` or `--thread` either: only the demo user comes into
 * being implicitly, and `threadId` must be one of the user's threads; both are checked before
 * anything is written.
 *
 * Prints what it created and, when the offline model will answer, how to use a real one.
 *
 * @throws SubagentGraphError `NOT_FOUND` (field `uid`) for a user other than the demo user
 *   that does not exist; `NOT_FOUND` (field `thread`) for a thread that is not the user's.
 */
export async function prepareChat(
  context: CliContext,
  store: StoreOptions,
  agentSlug: string | undefined,
  threadId?: string,
): Promise<ChatTarget> {
  const { runtime, io } = context;
  await requireUser(runtime, store);
  if (threadId !== undefined) await requireThread(runtime, store, threadId);
  // A thread goes on with the agent it was started with unless --agent says otherwise.
  const threadAgent =
    threadId !== undefined && agentSlug === undefined
      ? await agentOfThread(runtime, store.uid, threadId)
      : undefined;
  const created =
    agentSlug === undefined && threadAgent === undefined ? await seedDemo(runtime, store.uid) : [];
  if (created.length > 0) {
    say(
      io,
      `Created the demo agents for user "${store.uid}": ${created.map((agent) => `${agent.slug} (${agent.is_subagent ? "subagent" : "chat"})`).join(", ")}.`,
    );
  }
  const agent =
    threadAgent ??
    (agentSlug === undefined
      ? await runtime.agents.getDefault(store.uid)
      : await runtime.agents.get(store.uid, agentSlug));
  if (!agent) {
    throw new SubagentGraphError(
      ErrorCode.NotFound,
      `user "${store.uid}" has no default agent: pass --agent <slug> (see "agents list"), or mark one of your chat agents is_default`,
      { field: "agent" },
    );
  }
  const note = offlineNote(agent, io.env);
  if (note) say(io, note);
  return { store, agent, agentGiven: agentSlug !== undefined };
}

/**
 * Fails unless `store.uid` is the demo user or a user that exists: one added with `users add`,
 * or one that owns agents (made through the library or the HTTP API).
 */
async function requireUser(runtime: Runtime, store: StoreOptions): Promise<void> {
  if (store.uid === DEMO_UID || (await runtime.users.get(store.uid))) return;
  const agents = await runtime.agents.list(store.uid, { include_subagents: true });
  if (agents.some((agent) => agent.owner_uid === store.uid)) return;
  throw new SubagentGraphError(
    ErrorCode.NotFound,
    `user "${store.uid}" does not exist${store.dataGiven ? ` in ${store.dataDir}` : ""}: add it with "${cliCommand(store, `users add ${quote(store.uid)}`, false)}" (its first chat then creates its demo agents), or leave out --uid to chat as "${DEMO_UID}"`,
    { field: "uid" },
  );
}

/** The agent `threadId` runs, unless it has none yet or it was deleted since. */
async function agentOfThread(
  runtime: Runtime,
  uid: string,
  threadId: string,
): Promise<AgentRecord | undefined> {
  const { agentId } = await runtime.threads.get(uid, threadId);
  if (agentId === undefined) return undefined;
  try {
    return await runtime.agents.get(uid, agentId);
  } catch (error) {
    if (hasErrorCode(error, ErrorCode.NotFound)) return undefined;
    throw error;
  }
}

/** Fails unless `threadId` is one of the user's threads (a new one is what no --thread gives). */
async function requireThread(
  runtime: Runtime,
  store: StoreOptions,
  threadId: string,
): Promise<void> {
  try {
    await runtime.threads.check(store.uid, threadId);
  } catch (error) {
    if (!hasErrorCode(error, ErrorCode.NotFound)) throw error;
    throw new SubagentGraphError(
      ErrorCode.NotFound,
      `thread "${threadId}" is not one of user "${store.uid}"'s threads: list them with "${cliCommand(store, "threads list")}", or leave out --thread to start a new thread`,
      { field: "thread" },
    );
  }
}

/** A command line for the user to run, with the `--uid` and `--data` this one used. */
export function cliCommand(store: StoreOptions, command: string, withUid = true): string {
  const options = [
    withUid && store.uid !== DEMO_UID ? `--uid ${quote(store.uid)}` : undefined,
    store.dataGiven ? `--data ${quote(store.dataDir)}` : undefined,
  ].filter((option) => option !== undefined);
  return ["subagent-graph", command, ...options].join(" ");
}

/**
 * One line telling the user the offline model will answer, and how to use a real model; or
 * undefined when a real model is configured.
 */
export function offlineNote(agent: AgentRecord, env: NodeJS.ProcessEnv): string | undefined {
  const own = agent.config_json.context.model?.trim();
  if ((own || defaultModelSpec(env)) !== OFFLINE_MODEL) return undefined;
  const fix = own
    ? `agent "${agent.slug}" sets context.model "${own}"; set it to e.g. "openai:gpt-4o-mini" and export OPENAI_API_KEY`
    : "for a real model set OPENAI_API_KEY (or OPENAI_BASE_URL for a local OpenAI-compatible server, or SUBAGENT_GRAPH_MODEL)";
  return `note: answers come from the built-in [offline model] (deterministic, no LLM); ${fix}.`;
}

/** The command that continues `threadId`, repeating the options that chose the store and agent. */
export function continueHint(target: ChatTarget, threadId: string): string {
  const options = [
    target.store.uid === DEMO_UID ? undefined : `--uid ${quote(target.store.uid)}`,
    target.store.dataGiven ? `--data ${quote(target.store.dataDir)}` : undefined,
    target.agentGiven ? `--agent ${quote(target.agent.slug)}` : undefined,
    `--thread ${threadId}`,
  ].filter((option) => option !== undefined);
  return `npm run chat -- ${options.join(" ")} "<your follow-up>"`;
}

/** The command that answers what `threadId` waits on (the chat asks the pending requests first). */
export function answerHint(target: ChatTarget, threadId: string): string {
  return continueHint(target, threadId).replace(/ "<your follow-up>"$/, "");
}

/**
 * Asks one question on a new thread or `threadId`, printing progress, the answer and then the
 * thread id with the command that continues it. A run that pauses for approval has its requests
 * asked on `ask` (see cli/turn.ts); so do the requests `threadId` already waits on, before the
 * question is sent.
 *
 * @param ask reads answers from stdin; undefined when stdin held the question.
 * @returns the exit code: 0 answered, {@link EXIT_INTERRUPTED} when Ctrl-C cut it short,
 *   {@link EXIT_AWAITING_APPROVAL} when the run waits for answers that stdin did not give.
 */
export async function askOnce(
  context: CliContext,
  target: ChatTarget,
  question: string | undefined,
  threadId: string | undefined,
  ask: AskLine | undefined,
): Promise<number> {
  const { io } = context;
  const approver = { ask, agent: target.agent.slug };
  const uid = target.store.uid;
  const waiting =
    threadId === undefined ? [] : await context.runtime.threads.interrupts(uid, threadId);
  let outcome: TurnOutcome | undefined;
  // What the thread waits on is answered first: a new message would be refused.
  if (threadId !== undefined && waiting.length > 0) {
    outcome = await answerThread(context, uid, threadId, waiting, approver);
  }
  if (question !== undefined && (outcome === undefined || outcome.kind === "answered")) {
    outcome = await runTurn(
      context,
      { uid, agent: target.agent.id, threadId, input: question },
      approver,
    );
  }
  if (outcome === undefined) {
    // Only for --thread without a question, whose requests were answered meanwhile elsewhere.
    say(io, `thread ${threadId} is not waiting for approval: nothing to answer`);
    return 0;
  }
  if (outcome.kind === "quit") return EXIT_INTERRUPTED;
  if (outcome.kind === "cancelled") {
    say(io, "✗ run cancelled");
    if (outcome.threadId) say(io, `thread: ${outcome.threadId}`);
    return EXIT_INTERRUPTED;
  }
  if (outcome.kind === "paused") {
    sayPaused(io, target, outcome.threadId, outcome.pending);
    return EXIT_AWAITING_APPROVAL;
  }
  say(io, "");
  say(io, `thread: ${outcome.result.threadId}`);
  say(io, `continue it: ${continueHint(target, outcome.result.threadId)}`);
  return 0;
}

/** Says that `threadId` was left waiting for approval, and how to answer. */
export function sayPaused(
  io: Io,
  target: ChatTarget,
  threadId: string,
  pending: readonly PendingApproval[],
): void {
  say(io, "");
  say(
    io,
    `⏸ thread ${threadId} waits for approval of ${pending.map((entry) => describeApproval(entry.value)).join("; ")}: nothing was decided`,
  );
  say(io, `thread: ${threadId}`);
  say(io, `answer it: ${answerHint(target, threadId)}`);
}

/** Quotes a value for a POSIX shell when it needs it. */
function quote(value: string): string {
  return /^[\w./:@-]+$/.test(value) ? value : `'${value.replaceAll("'", `'\\''`)}'`;
}
