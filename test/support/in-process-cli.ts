import { PassThrough } from "node:stream";
import type { Io } from "../../cli/context.js";
import { runCli } from "../../cli/run.js";
import type { CliResult } from "./cli.js";

/** How an in-process run's stdin behaves. */
export interface InProcessInput {
  /** The process environment the command sees. Default: none (the offline model answers). */
  env?: NodeJS.ProcessEnv;
  /** Piped on stdin, then stdin is closed (at once without it), as a script does. */
  input?: string;
  /**
   * A terminal-like stdin that types each line once stdout has shown its `after` text (so nothing
   * is typed before the prompt that reads it). stdin stays open.
   */
  tty?: { after: string; type: string }[];
}

/**
 * Streams for `runCli` with what they print collected. The same `Io` `cli/main.ts` hands it from
 * the real process, so a command runs exactly as typed, minus the process start.
 */
export function fakeIo(options: InProcessInput = {}) {
  const stdin = Object.assign(new PassThrough(), { isTTY: options.tty !== undefined });
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  const printed = { stdout: "", stderr: "" };
  const script = [...(options.tty ?? [])];
  stdout.setEncoding("utf8").on("data", (text: string) => {
    printed.stdout += text;
    const next = script[0];
    if (next && printed.stdout.includes(next.after)) {
      script.shift();
      // Typed once the prompt is up: the chat listens for a line only after drawing it.
      setImmediate(() => stdin.write(`${next.type}\n`));
    }
  });
  stderr.setEncoding("utf8").on("data", (text: string) => {
    printed.stderr += text;
  });
  if (options.tty === undefined) stdin.end(options.input ?? "");
  const io: Io = { stdin, stdout, stderr, env: options.env ?? {} };
  return { io, printed };
}

/**
 * Runs the command line in this process (`runCli`, what the bin calls) and returns what it printed
 * and its exit code, in the shape of `cli()` from `test/support/cli.ts`. The real-process door
 * (argv, exit codes, signals) is `test/cli/main.int.test.ts`'s; this one is for the many commands
 * a flow types, at no process start each.
 */
export async function cliInProcess(
  argv: readonly string[],
  options: InProcessInput = {},
): Promise<CliResult & { code: number }> {
  const { io, printed } = fakeIo(options);
  const code = await runCli([...argv], io);
  // Let the streams hand over what was written last.
  await new Promise((resolve) => setImmediate(resolve));
  return { code, stdout: printed.stdout, stderr: printed.stderr };
}
