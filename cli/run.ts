import { type Command, commandHelp, parseCommandLine, USAGE, UsageError } from "./args.js";
import type { Runtime } from "../runtime.js";
import { type CliContext, EXIT_INTERRUPTED, type Io } from "./context.js";
import { Interrupts } from "./interrupts.js";
import { describeError } from "./report.js";

const EXIT_ERROR = 1;
const EXIT_USAGE = 2;

/**
 * Runs the command line `argv` (the arguments after the script name; see {@link USAGE}) and
 * returns the exit code: 0 done, 1 an error, 2 a usage mistake, 130 cut short with Ctrl-C.
 * The runtime it opens is closed before it returns, whatever happened.
 *
 * The modules of the runtime, the server and the commands are imported only once the command
 * line is understood: `--help` and a mistyped command answer without loading LangChain.
 */
export async function runCli(argv: readonly string[], io: Io): Promise<number> {
  let command: Command;
  try {
    command = parseCommandLine(argv, io.env);
  } catch (error) {
    return reportFailure(io, error);
  }
  if (command.name === "help") {
    io.stdout.write(`${command.topic === undefined ? USAGE : commandHelp(command.topic)}\n`);
    return 0;
  }
  if (command.name === "studio") {
    const { studioCommand } = await import("./studio.js");
    return studioCommand(command, io);
  }
  if (command.name === "serve") {
    // The server owns its runtime and its signals: a Ctrl-C is a graceful shutdown there.
    try {
      const { serveCommand } = await import("./serve.js");
      return await serveCommand(command, io);
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
    const [{ createRuntime }, { dispatch }] = await Promise.all([
      import("../runtime.js"),
      import("./dispatch.js"),
    ]);
    runtime = await createRuntime({ dataDir: command.store.dataDir, env: io.env });
    const context: CliContext = { runtime, io, interrupts, onInterrupt };
    // A Ctrl-C outside a run (while seeding, or reading stdin) has nothing to cancel: quit.
    return await Promise.race([
      dispatch(context, command),
      interrupts.quit.then(() => EXIT_INTERRUPTED),
    ]);
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
