import { ErrorCode, hasErrorCode } from "../errors.js";
import { stillActiveLine } from "./async-task-lines.js";
import { BackgroundWatch } from "./background-watch.js";
import { UsageError } from "./command-line.js";
import type { StoreOptions } from "./commands/declaration.js";
import { type CliContext, say } from "./context.js";
import { lazyAsker } from "./lines.js";
import { repl } from "./repl.js";
import { describeError } from "./report.js";
import { askOnce, cliCommand, prepareChat } from "./session.js";

/** What `chat` was asked (parsed by `cli/commands/chat.ts`). */
export interface ChatCommand {
  name: "chat";
  store: StoreOptions;
  agent: string | undefined;
  threadId: string | undefined;
  /** The question from the command line; undefined when none was given. */
  question: string | undefined;
}

/**
 * The `chat` command: one question from the arguments (or from piped stdin), or the interactive
 * chat when there is none and stdin is a terminal. A run that pauses for approval asks its
 * requests on stdin (a terminal, or piped answers one per line) unless stdin held the question.
 * `--thread` on a thread that waits for approval, without a question and with stdin piped,
 * reads the answers from stdin (not a question) and finishes that turn.
 *
 * @returns the exit code.
 * @throws UsageError when the question is empty.
 */
export async function chatCommand(context: CliContext, command: ChatCommand): Promise<number> {
  const { io } = context;
  const interactive = command.question === undefined && io.stdin.isTTY === true;
  const answering =
    !interactive && command.question === undefined && (await waitsForApproval(context, command));
  // Read piped input before touching the store, so an empty question fails without side effects.
  const question =
    interactive || answering ? undefined : (command.question ?? (await readAll(io.stdin)));
  if (question !== undefined && question.trim() === "") {
    throw new UsageError(
      command.question === undefined
        ? "stdin was empty: pipe the question in, or give it as an argument"
        : "the question is empty: give it as an argument, or leave it out for the interactive chat",
    );
  }
  const target = await prepareChat(context, command.store, command.agent, command.threadId);
  const background = await watchBackground(context, command.store.uid, command.threadId);
  const chat: CliContext = { ...context, background };
  try {
    if (interactive) return await repl(chat, target, command.threadId);
    // Stdin that held the question has no answers left to give.
    const asker =
      command.question !== undefined || answering ? lazyAsker(io, context.onInterrupt) : undefined;
    try {
      return await askOnce(chat, target, question?.trim(), command.threadId, asker?.ask);
    } finally {
      asker?.close();
    }
  } finally {
    await sayBackgroundEnd(chat, command.store, background);
  }
}

/**
 * Starts watching the background tasks of the chat's thread (cli/background-watch.ts): the
 * tasks of `threadId` that have already ended are not told.
 */
async function watchBackground(
  context: CliContext,
  uid: string,
  threadId: string | undefined,
): Promise<BackgroundWatch> {
  const background = new BackgroundWatch({
    list: (thread) => context.runtime.asyncTasks.list(uid, thread),
    onError: (error) =>
      context.io.stderr.write(`could not list background tasks: ${describeError(error)}\n`),
  });
  if (threadId !== undefined) await background.open(threadId);
  return background;
}

/** The last lines about background tasks as the chat ends: those not told yet, those going on. */
async function sayBackgroundEnd(
  context: CliContext,
  store: StoreOptions,
  background: BackgroundWatch,
): Promise<void> {
  const { lines, thread, active } = await background.close();
  for (const line of lines) say(context.io, line);
  if (thread !== undefined && active > 0) {
    say(context.io, stillActiveLine(active, `"${cliCommand(store, `threads show ${thread}`)}"`));
  }
}

/** Whether `--thread` names a thread of the user's that waits for approval. */
async function waitsForApproval(context: CliContext, command: ChatCommand): Promise<boolean> {
  if (command.threadId === undefined) return false;
  try {
    const pending = await context.runtime.threads.interrupts(command.store.uid, command.threadId);
    return pending.length > 0;
  } catch (error) {
    // Not the user's thread: prepareChat says so, naming the fix.
    if (hasErrorCode(error, ErrorCode.NotFound)) return false;
    throw error;
  }
}

async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream as AsyncIterable<unknown>) {
    chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk)));
  }
  return Buffer.concat(chunks).toString("utf8");
}
