import { type ChildProcess, spawn } from "node:child_process";
import { Client } from "@langchain/langgraph-sdk";
import { freePort } from "./free-port.js";

/**
 * The environment of someone who configured nothing of ours and has no LangSmith or OpenAI key:
 * the current one without `OPENAI_*`, `SUBAGENT_*`, `LANGGRAPH_*`, `LANGSMITH_*`, `LANGCHAIN_*`,
 * plus `extra`.
 */
export function bareEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = Object.fromEntries(
    Object.entries(process.env).filter(
      ([key]) => !/^(OPENAI_|SUBAGENT_|LANGGRAPH_|LANGSMITH_|LANGCHAIN_)/.test(key),
    ),
  );
  return { ...env, ...extra };
}

/** A LangGraph dev server started by a test (directly, or through our `studio` command). */
export interface DevServer {
  /** `http://127.0.0.1:<port>`. */
  url: string;
  /** An SDK client on it, as Studio's UI and a newcomer's script use it (no API key). */
  client: Client;
  /** Resolves once `GET /ok` answers; rejects (with the server's output) if it never does. */
  ready(): Promise<void>;
  /** Everything the server printed so far. */
  output(): string;
  /** Stops the whole process group (the CLI, the server it spawns, its workers). */
  stop(): Promise<void>;
}

/**
 * Spawns `command args…` in its own process group with `port` free for it. Call `ready()` before
 * using it and `stop()` in `afterAll` (it is safe when the start failed half-way).
 */
export async function spawnDevServer(options: {
  command: string;
  /** The arguments, given the port the server must listen on. */
  args(port: number): string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  startTimeoutMs?: number;
}): Promise<DevServer> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  let output = "";
  const child: ChildProcess = spawn(options.command, options.args(port), {
    cwd: options.cwd,
    env: options.env,
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  child.stdout?.on("data", (chunk) => {
    output += String(chunk);
  });
  child.stderr?.on("data", (chunk) => {
    output += String(chunk);
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));

  return {
    url,
    client: new Client({ apiUrl: url, apiKey: null }),
    output: () => output,
    async ready() {
      const deadline = Date.now() + (options.startTimeoutMs ?? 60_000);
      for (;;) {
        const up = await fetch(`${url}/ok`).then(
          (response) => response.ok,
          () => false,
        );
        if (up) return;
        if (Date.now() > deadline || child.exitCode !== null || child.signalCode !== null) {
          throw new Error(`the dev server did not come up on ${url}:\n${output}`);
        }
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    },
    async stop() {
      if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
      const signal = (name: NodeJS.Signals) => {
        try {
          process.kill(-(child.pid as number), name);
        } catch {
          // The group is already gone.
        }
      };
      signal("SIGTERM");
      const stopped = await Promise.race([
        exited.then(() => true),
        new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 5_000)),
      ]);
      // The CLI's own children may outlive it for a moment, still writing .langgraph_api: the
      // group goes too, so a caller can remove the project folder.
      signal("SIGKILL");
      if (!stopped) await exited;
    },
  };
}
