import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

/** The project root: the CLI is run from there, as `npm run` does. */
const ROOT = fileURLToPath(new URL("../..", import.meta.url));

/** What a CLI run printed and how it exited. */
export interface CliResult {
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

/** Runs `node --import tsx cli/main.ts …args` to completion. */
export function cli(args: string[]): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", "cli/main.ts", ...args], {
      cwd: ROOT,
      env: offlineEnv(),
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (text: string) => {
      stdout += text;
    });
    child.stderr.setEncoding("utf8").on("data", (text: string) => {
      stderr += text;
    });
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}
