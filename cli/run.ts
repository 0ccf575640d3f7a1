import type { Runtime } from "../runtime.js";
import { UsageError } from "./command-line.js";
import { type CliContext, EXIT_INTERRUPTED, type Io } from "./context.js";
import { HELP_TEXTS, USAGE } from "./help.js";
import { Interrupts } from "./interrupts.js";
import { type CommandLine, readCommandLine } from "./parse.js";
import { describeError } from "./report.js";

const EXIT_ERROR = 1;
const EXIT_USAGE = 2;

/**
 * Runs the command line `argv` (the arguments after the script name; see {@link USAGE}) and
 * returns the exit code: 0 done, 1 an error, 2 a usage mistake, 130 cut short with Ctrl-C.
 * The runtime it opens is closed before it returns, whatever happened.
 *
 * The modules of the runtime, the server and the commands are imported only once the command
 * line is understood (each command's declaration imports its action lazily, `cli/commands/`):
 * `--help` and a mistyped command answer without loading LangChain.
 */
export async function runCli(argv: readonly string[], io: Io): Promise<number> {
  let action: CommandLine["action"];
  try {
    action = readCommandLine(argv, io.env).action;
  } catch (error) {
    return reportFailure(io, error);
  }
  if (action.needs === "nothing") {
    // `help`, and `serve` and `studio`, which own their runtime or process and its signals.
    try {
      return await action.run(io, HELP_TEXTS);
    } catch (error) {
      return reportFailure(io, error);
    }
  }

  const interrupts = new Interrupts();
  const onInterrupt = () => {
    if (interrupts.press() === "cancelled") {
      io.stderr.write("\n(cancelling the run: press Ctrl-C again to quit)\n");
    }
  };
  process.on("SIGINT", onInterrupt);
  let runtime: Runtime | undefined;
  try {
    const { createRuntime } = await import("../runtime.js");
    runtime = await createRuntime({ dataDir: action.store.dataDir, env: io.env });
    const context: CliContext = { runtime, io, interrupts, onInterrupt };
    // A Ctrl-C outside a run (while seeding, or reading stdin) has nothing to cancel: quit.
    return await Promise.race([action.run(context), interrupts.quit.then(() => EXIT_INTERRUPTED)]);
  } catch (error) {
    return reportFailure(io, error);
  } finally {
    process.off("SIGINT", onInterrupt);
    await runtime?.close();
  }
}

function reportFailure(io: Io, error: unknown): number {
  if (error instanceof UsageError) {
    io.stderr.write(`error: ${error.message}\n\n${USAGE}\n`);
    return EXIT_USAGE;
  }
  io.stderr.write(`${describeError(error)}\n`);
  return EXIT_ERROR;
}
