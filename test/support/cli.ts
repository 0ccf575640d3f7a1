import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { cliCommand, nodeEntry } from "./node-entry.js";

/** The project root: the CLI is run from there, as `npm run` does. */
const ROOT = fileURLToPath(new URL("../..", import.meta.url));

/** What a CLI run printed and how it exited. */
export interface CliResult {
  /** null when it was killed (see `killAfterMs`). */
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The environment minus anything that would select a real model: the offline model answers. */
export function offlineEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(
    Object.entries(process.env).filter(
      ([key]) => !key.startsWith("OPENAI_") && !key.startsWith("SUBAGENT_GRAPH_"),
    ),
  );
}

/**
 * Runs the CLI (see {@link nodeEntry}) with `…args` to completion, in the offline environment plus
 * `env` (e.g. `DATABASE_URL`). `killAfterMs`: SIGKILL it if it
 * has not exited by then (a safety net for a command that could hang, never a time limit that
 * a test asserts on: the result then has `code: null`).
 */
export function cli(
  args: string[],
  options: { killAfterMs?: number; env?: NodeJS.ProcessEnv; input?: string } = {},
): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...nodeEntry("cli/main.ts"), ...args], {
      cwd: ROOT,
      env: { ...offlineEnv(), ...options.env },
      stdio: "pipe",
    });
    // `input` is piped on stdin, then stdin is closed (at once without it), as a script does.
    child.stdin.end(options.input ?? "");
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (text: string) => {
      stdout += text;
    });
    child.stderr.setEncoding("utf8").on("data", (text: string) => {
      stderr += text;
    });
    const killer =
      options.killAfterMs === undefined
        ? undefined
        : setTimeout(() => child.kill("SIGKILL"), options.killAfterMs);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(killer);
      resolve({ code, stdout, stderr });
    });
  });
}

/**
 * Runs `cli/main.ts …args` on a pseudo-terminal (util-linux `script`), as a person at a
 * terminal would: each `script` line is typed once the output so far contains its `after`
 * text. Resolves with the exit code and everything the terminal showed (echo and escapes
 * included). `env` is added to the offline environment, as for {@link cli}.
 */
export function cliInTerminal(
  args: string[],
  script: { after: string; type: string }[],
  options: { killAfterMs?: number; env?: NodeJS.ProcessEnv } = {},
): Promise<{ code: number | null; output: string }> {
  const quote = (value: string) => `'${value.replaceAll("'", `'\\''`)}'`;
  const command = [...cliCommand(), ...args].map(quote);
  return new Promise((resolve, reject) => {
    const child = spawn("script", ["-qec", command.join(" "), "/dev/null"], {
      cwd: ROOT,
      env: { ...offlineEnv(), ...options.env },
      stdio: ["pipe", "pipe", "inherit"],
    });
    const steps = [...script];
    let output = "";
    child.stdout.setEncoding("utf8").on("data", (text: string) => {
      output += text;
      const next = steps[0];
      if (next && output.includes(next.after)) {
        steps.shift();
        child.stdin.write(`${next.type}\r`);
      }
    });
    const killer =
      options.killAfterMs === undefined
        ? undefined
        : setTimeout(() => child.kill("SIGKILL"), options.killAfterMs);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(killer);
      resolve({ code, output });
    });
  });
}
