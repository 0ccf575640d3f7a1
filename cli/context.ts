import type { Runtime } from "../runtime.js";
import type { BackgroundWatch } from "./background-watch.js";
import type { Interrupts } from "./interrupts.js";

/**
 * The process streams and environment a command uses (process.* in the CLI). Typed by what the
 * commands use of them, so a test can run a command in-process on plain streams.
 */
export interface Io {
  stdin: NodeJS.ReadableStream & { isTTY?: boolean };
  stdout: NodeJS.WritableStream & { isTTY?: boolean; columns?: number };
  stderr: NodeJS.WritableStream;
  env: NodeJS.ProcessEnv;
}

/** What every command that runs agents gets from `main.ts`. */
export interface CliContext {
  runtime: Runtime;
  io: Io;
  /** Ctrl-C state: the run to cancel, and whether the user asked to quit. */
  interrupts: Interrupts;
  /** Handles one Ctrl-C (cancel the run, or quit) and tells the user which. */
  onInterrupt: () => void;
  /** A chat's watch on its thread's background tasks (cli/chat.ts); other commands have none. */
  background?: BackgroundWatch;
}

/** Exit code of a run cut short with Ctrl-C (128 + SIGINT, as shells report it). */
export const EXIT_INTERRUPTED = 130;

/**
 * Exit code of a chat whose run waits for approval when stdin gave no answers (the question was
 * piped, or the input ended first): the thread stays paused, `chat --thread <id>` answers it.
 */
export const EXIT_AWAITING_APPROVAL = 3;

/** Writes one line to stdout. */
export function say(io: Io, text: string): void {
  io.stdout.write(`${text}\n`);
}
