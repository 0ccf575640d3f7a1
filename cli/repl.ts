import type { AskLine } from "./approval-prompt.js";
import { CHAT_COMMANDS_HELP } from "./chat-commands.js";
import { type CliContext, EXIT_INTERRUPTED, say } from "./context.js";
import { LineReader } from "./lines.js";
import { describeError } from "./report.js";
import { type ChatTarget, continueHint, sayPaused } from "./session.js";
import { answerThread, runTurn, type TurnOutcome } from "./turn.js";

/** The one-line reminder the chat opens with. */
const HELP = "/help lists the commands, /exit or Ctrl-D quits.";

/** What the chat prompt shows. */
const PROMPT = "› ";

/** What the prompt got: a line, end of input (Ctrl-D), or a request to quit (Ctrl-C). */
type PromptResult = { line: string } | { end: "eof" | "quit" };

/**
 * The interactive chat: one thread at a time (`/new` starts another), answers streamed with
 * progress. A failing question prints its error and the chat goes on. A run that pauses for
 * approval has its requests asked at the prompt (cli/turn.ts); a `threadId` left waiting is
 * answered first.
 *
 * @returns the exit code: 0 after `/exit` or Ctrl-D, {@link EXIT_INTERRUPTED} after Ctrl-C.
 */
export async function repl(
  context: CliContext,
  target: ChatTarget,
  threadId: string | undefined,
): Promise<number> {
  const { io, interrupts } = context;
  const reader = new LineReader(io, context.onInterrupt);
  // A background task that ends while the chat waits for the user is told above the prompt.
  context.background?.attach("prompt", (line) => reader.notice(line));
  const quit = interrupts.quit.then((): PromptResult => ({ end: "quit" }));
  const prompt = (): Promise<PromptResult> =>
    Promise.race([
      reader
        .next(PROMPT)
        .then((line): PromptResult => (line === undefined ? { end: "eof" } : { line })),
      quit,
    ]);
  const session = { thread: threadId };
  say(
    io,
    `Chatting with "${target.agent.slug}" as ${target.store.uid}${threadId ? ` on thread ${threadId}` : ""}. ${HELP}`,
  );
  try {
    const code = await converse(context, target, session, prompt, (text, draft) =>
      reader.next(text, draft),
    );
    // The prompt (or ^C) is still on the line: end it before the last words.
    say(io, "");
    if (session.thread) say(io, `continue later: ${continueHint(target, session.thread)}`);
    return code;
  } finally {
    context.background?.attach("prompt", undefined);
    reader.close();
  }
}

/** The prompt-answer loop; `session.thread` follows the thread in use. */
async function converse(
  context: CliContext,
  target: ChatTarget,
  session: { thread: string | undefined },
  prompt: () => Promise<PromptResult>,
  ask: AskLine,
): Promise<number> {
  const { io } = context;
  const approver = { ask, agent: target.agent.slug };
  const uid = target.store.uid;
  // A thread left waiting for approval is answered before anything else is sent on it.
  if (session.thread) {
    const pending = await context.runtime.threads.interrupts(uid, session.thread);
    if (pending.length > 0) {
      const outcome = await answerThread(context, uid, session.thread, pending, approver);
      const ended = ending(context, target, session, outcome);
      if (ended !== undefined) return ended;
    }
  }
  for (;;) {
    const next = await prompt();
    if ("end" in next) return next.end === "quit" ? EXIT_INTERRUPTED : 0;
    const input = next.line.trim();
    if (input === "") continue;
    if (input === "/exit" || input === "/quit") return 0;
    if (input === "/help") {
      say(io, CHAT_COMMANDS_HELP);
      continue;
    }
    if (input === "/new") {
      session.thread = undefined;
      context.background?.follow(undefined);
      say(io, "Started a new thread.");
      continue;
    }
    if (input.startsWith("/")) {
      say(io, `unknown command ${input.split(/\s/)[0]}: /help lists the commands`);
      continue;
    }
    try {
      const outcome = await runTurn(
        context,
        { uid, agent: target.agent.id, threadId: session.thread, input },
        approver,
      );
      const ended = ending(context, target, session, outcome);
      if (ended !== undefined) return ended;
    } catch (error) {
      // One bad question (a busy thread, a model outage) should not end the conversation.
      io.stderr.write(`${describeError(error)}\n`);
    }
  }
}

/**
 * Reports how a turn ended and follows its thread; returns the exit code when the chat ends
 * with it (Ctrl-C to quit, or the input ended while a request waited for its answer).
 */
function ending(
  context: CliContext,
  target: ChatTarget,
  session: { thread: string | undefined },
  outcome: TurnOutcome,
): number | undefined {
  const { io } = context;
  if (outcome.kind === "quit") return EXIT_INTERRUPTED;
  const ranOn = outcome.kind === "answered" ? outcome.result.threadId : outcome.threadId;
  if (outcome.kind === "cancelled") say(io, "✗ run cancelled");
  if (ranOn && ranOn !== session.thread) say(io, `(thread ${ranOn})`);
  session.thread = ranOn ?? session.thread;
  if (outcome.kind === "paused") {
    sayPaused(io, target, outcome.threadId, outcome.pending);
    return 0;
  }
  return undefined;
}
