#!/usr/bin/env node
/**
 * The command line's entry point: `tsx cli/main.ts <command>` in the repository, the
 * `subagent-graph` bin (compiled to `dist/cli/main.js`, hence the shebang) once installed.
 */

import { EXIT_INTERRUPTED } from "./context.js";
import { runCli } from "./run.js";

const code = await runCli(process.argv.slice(2), {
  stdin: process.stdin,
  stdout: process.stdout,
  stderr: process.stderr,
  env: process.env,
});
// After a quit mid-run the aborted graph may still hold timers or handles for a moment; the
// runtime is closed, so nothing is left to save. Otherwise let the process end on its own.
if (code === EXIT_INTERRUPTED) process.exit(code);
process.exitCode = code;
