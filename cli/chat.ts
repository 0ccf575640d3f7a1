import { type Command, UsageError } from "./args.js";
import type { CliContext } from "./context.js";
import { repl } from "./repl.js";
import { askOnce, prepareChat } from "./session.js";

type ChatCommand = Extract<Command, { name: "chat" }>;

/**
 * The `chat` command: one question from the arguments (or from piped stdin), or the interactive
 * chat when there is none and stdin is a terminal.
 *
 * @returns the exit code.
 * @throws UsageError when the question is empty.
 */
export async function chatCommand(context: CliContext, command: ChatCommand): Promise<number> {
  const interactive = command.question === undefined && context.io.stdin.isTTY === true;
  // Read piped input before touching the store, so an empty question fails without side effects.
  const question = interactive
    ? undefined
    : (command.question ?? (await readAll(context.io.stdin)));
  if (question !== undefined && question.trim() === "") {
    throw new UsageError(
      command.question === undefined
        ? "stdin was empty: pipe the question in, or give it as an argument"
        : "the question is empty: give it as an argument, or leave it out for the interactive chat",
    );
  }
  const target = await prepareChat(context, command.store, command.agent, command.threadId);
  if (question === undefined) return repl(context, target, command.threadId);
  return askOnce(context, target, question.trim(), command.threadId);
}

async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream as AsyncIterable<unknown>) {
    chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk)));
  }
  return Buffer.concat(chunks).toString("utf8");
}
