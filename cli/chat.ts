import { ErrorCode, hasErrorCode } from "../errors.js";
import { type Command, UsageError } from "./args.js";
import type { CliContext } from "./context.js";
import { lazyAsker } from "./lines.js";
import { repl } from "./repl.js";
import { askOnce, prepareChat } from "./session.js";

type ChatCommand = Extract<Command, { name: "chat" }>;

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
  if (interactive) return repl(context, target, command.threadId);
  // Stdin that held the question has no answers left to give.
  const asker =
    command.question !== undefined || answering ? lazyAsker(io, context.onInterrupt) : undefined;
  try {
    return await askOnce(context, target, question?.trim(), command.threadId, asker?.ask);
  } finally {
    asker?.close();
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
