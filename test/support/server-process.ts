import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { nodeEntry } from "./node-entry.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

/** A `subagent-graph serve` process started as a user types it. */
export interface ServerProcess {
  child: ChildProcess;
  /** Its URL once it has said where it serves ("" before). */
  base: () => string;
  /** What it has printed so far (stdout and stderr). */
  output: () => string;
  exited: Promise<unknown>;
}

/** How {@link startServerProcess} starts `serve`. */
export interface ServerProcessOptions {
  /** Arguments to node itself (e.g. `--cpu-prof`, which NODE_OPTIONS refuses). */
  nodeArgs?: readonly string[];
  /** More arguments to `serve`, as a user types them (e.g. `--role worker`). */
  serveArgs?: readonly string[];
}

/** Starts the CLI's `serve` (see {@link nodeEntry}) on a free port with `dataDir` and `env` (see {@link cleanEnv}). */
export function startServerProcess(
  dataDir: string,
  env: NodeJS.ProcessEnv,
  options: ServerProcessOptions = {},
): ServerProcess {
  const child = spawn(
    process.execPath,
    [
      ...(options.nodeArgs ?? []),
      ...nodeEntry("cli/main.ts"),
      "serve",
      "--port",
      "0",
      "--no-console",
      "--data",
      dataDir,
      ...(options.serveArgs ?? []),
    ],
    { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] },
  );
  let output = "";
  child.stdout?.on("data", (chunk) => {
    output += String(chunk);
  });
  child.stderr?.on("data", (chunk) => {
    output += String(chunk);
  });
  const exited = new Promise((resolve) => child.on("exit", resolve));
  return {
    child,
    base: () => /serving on (http:\/\/\S+)/.exec(output)?.[1] ?? "",
    output: () => output,
    exited,
  };
}

/** This process's environment without our settings or a model key, plus `extra`. */
export function cleanEnv(extra: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const env = Object.fromEntries(
    Object.entries(process.env).filter(
      ([key]) =>
        !key.startsWith("OPENAI_") &&
        !key.startsWith("SUBAGENT_") &&
        key !== "DATABASE_URL" &&
        key !== "PORT",
    ),
  );
  return { ...env, ...extra };
}
