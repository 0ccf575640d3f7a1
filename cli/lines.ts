import { createInterface, type Interface } from "node:readline";
import type { AskLine } from "./approval-prompt.js";
import type { Io } from "./context.js";

/**
 * Reads stdin one line at a time for whoever asks next: the chat's prompt, or a question about
 * a pending approval. Lines are queued as they arrive, so piped input (a test, a script) loses
 * none while a run is streaming and nobody is asking; on a terminal that is type-ahead.
 *
 * Piped input is not echoed by anything, so each line read is written after its prompt: the
 * transcript then reads as it would on a terminal.
 */
export class LineReader {
  readonly #rl: Interface;
  readonly #echo: (line: string) => void;
  readonly #output: NodeJS.WritableStream;
  readonly #queued: string[] = [];
  #waiting: ((line: string | undefined) => void) | undefined;
  #ended = false;

  /**
   * @param onInterrupt what a Ctrl-C typed at the prompt does: a terminal in raw mode hands it
   *   to readline as a key, not to the process as a signal.
   */
  constructor(io: Io, onInterrupt: () => void) {
    this.#rl = createInterface({
      input: io.stdin,
      output: io.stdout,
      // Line editing writes escapes: only when the output is a terminal too.
      terminal: io.stdin.isTTY === true && io.stdout.isTTY === true,
    });
    this.#output = io.stdout;
    const piped = io.stdin.isTTY !== true;
    this.#echo = piped ? (line) => io.stdout.write(`${line}\n`) : () => undefined;
    this.#rl.on("SIGINT", onInterrupt);
    this.#rl.on("line", (line: string) => {
      const waiting = this.#waiting;
      this.#waiting = undefined;
      if (waiting) waiting(line);
      else this.#queued.push(line);
    });
    this.#rl.once("close", () => {
      this.#ended = true;
      this.#waiting?.(undefined);
      this.#waiting = undefined;
    });
  }

  /**
   * Shows `prompt` and resolves with the next line, or undefined at the end of input (Ctrl-D).
   * On a terminal, `draft` is put on the line ready to edit (nothing is typed for piped input).
   */
  next(prompt: string, draft?: string): Promise<string | undefined> {
    this.#rl.setPrompt(prompt);
    this.#rl.prompt();
    const queued = this.#queued.shift();
    if (queued !== undefined) {
      this.#echo(queued);
      return Promise.resolve(queued);
    }
    if (this.#ended) {
      this.#echo("");
      return Promise.resolve(undefined);
    }
    if (draft && this.#rl.terminal) this.#rl.write(draft);
    return new Promise((resolve) => {
      this.#waiting = (line) => {
        this.#echo(line ?? "");
        resolve(line);
      };
    });
  }

  /**
   * Writes a line above the prompt while one waits for input (then shows the prompt again, with
   * what was typed so far on a terminal); answers false, writing nothing, when no prompt waits.
   */
  notice(text: string): boolean {
    if (this.#waiting === undefined) return false;
    if (this.#rl.terminal) {
      // Erase the prompt's line, write the notice, and draw the prompt and the typing below it.
      this.#output.write(`\r\x1b[2K${text}\n`);
      this.#rl.prompt(true);
    } else {
      // The prompt is on the line with nothing after it: end that line, and show it again.
      this.#output.write(`\n${text}\n${this.#rl.getPrompt()}`);
    }
    return true;
  }

  /** Stops reading (the process may then exit although stdin is a terminal). */
  close(): void {
    this.#rl.close();
  }
}

/**
 * An {@link AskLine} on stdin whose reader starts on the first question only: a chat that never
 * pauses leaves stdin untouched (a terminal's is not put in raw mode, nothing keeps the process
 * alive). `close` stops it if it started.
 */
export function lazyAsker(io: Io, onInterrupt: () => void): { ask: AskLine; close(): void } {
  let reader: LineReader | undefined;
  return {
    ask: (prompt, draft) => {
      reader ??= new LineReader(io, onInterrupt);
      return reader.next(prompt, draft);
    },
    close: () => reader?.close(),
  };
}
