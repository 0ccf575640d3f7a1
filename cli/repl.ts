import { createInterface, type Interface } from "node:readline";
import { streamAnswer } from "./answer.js";
import { CHAT_COMMANDS_HELP } from "./args.js";
import { type CliContext, EXIT_INTERRUPTED, say } from "./context.js";
import { describeError } from "./report.js";
import { type ChatTarget, continueHint } from "./session.js";

/** The one-line reminder the chat opens with. */
const HELP = "/help lists the commands, /exit or Ctrl-D quits.";

/** What the prompt got: a line, end of input (Ctrl-D), or a request to quit (Ctrl-C). */
type PromptResult = { line: string } | { end: "eof" | "quit" };

/**
 * The interactive chat: one thread at a time (`/new` starts another), answers streamed with
 * progress. A failing question prints its error and the chat goes on.
 *
 * @returns the exit code: 0 after `/exit` or Ctrl-D, {@link EXIT_INTERRUPTED} after Ctrl-C.
 */
export async function repl(
  context: CliContext,
  target: ChatTarget,
  threadId: string | undefined,
): Promise<number> {
  const { io, interrupts } = context;
  const rl = createInterface({
    input: io.stdin,
    output: io.stdout,
    // Line editing writes escapes: only when the output is a terminal too.
    terminal: io.stdin.isTTY === true && io.stdout.isTTY === true,
    prompt: "› ",
  });
  // A terminal in raw mode sends Ctrl-C to readline as a key, not to the process as a signal.
  rl.on("SIGINT", context.onInterrupt);
  const ended = Promise.race([
    new Promise<PromptResult>((resolve) => rl.once("close", () => resolve({ end: "eof" }))),
    interrupts.quit.then((): PromptResult => ({ end: "quit" })),
  ]);
  const session = { thread: threadId };
  say(
    io,
    `Chatting with "${target.agent.slug}" as ${target.store.uid}${threadId ? ` on thread ${threadId}` : ""}. ${HELP}`,
  );
  try {
    const code = await converse(context, target, session, () =>
      Promise.race([nextLine(rl), ended]),
    );
    // The prompt (or ^C) is still on the line: end it before the last words.
    say(io, "");
    if (session.thread) say(io, `continue later: ${continueHint(target, session.thread)}`);
    return code;
  } finally {
    rl.close();
  }
}

/** The prompt-answer loop; `session.thread` follows the thread in use. */
async function converse(
  context: CliContext,
  target: ChatTarget,
  session: { thread: string | undefined },
  prompt: () => Promise<PromptResult>,
): Promise<number> {
  const { io } = context;
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
      say(io, "Started a new thread.");
      continue;
    }
    if (input.startsWith("/")) {
      say(io, `unknown command ${input.split(/\s/)[0]}: /help lists the commands`);
      continue;
    }
    try {
      const outcome = await streamAnswer(context, {
        uid: target.store.uid,
        agent: target.agent.id,
        threadId: session.thread,
        input,
      });
      if (outcome.kind === "quit") return EXIT_INTERRUPTED;
      const ranOn = outcome.kind === "answered" ? outcome.result.threadId : outcome.threadId;
      if (outcome.kind === "cancelled") say(io, "✗ run cancelled");
      if (ranOn && ranOn !== session.thread) say(io, `(thread ${ranOn})`);
      session.thread = ranOn ?? session.thread;
    } catch (error) {
      // One bad question (a busy thread, a model outage) should not end the conversation.
      io.stderr.write(`${describeError(error)}\n`);
    }
  }
}

/** Shows the prompt and waits for the next line. */
function nextLine(rl: Interface): Promise<PromptResult> {
  rl.prompt();
  return new Promise((resolve) => rl.once("line", (line: string) => resolve({ line })));
}
