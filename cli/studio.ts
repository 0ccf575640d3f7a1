import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { packageRoot } from "../util/package-root.js";
import type { StoreOptions } from "./commands/declaration.js";
import type { Io } from "./context.js";

/** Default port of `studio` (2024, the dev server's own default, is often taken). */
export const DEFAULT_STUDIO_PORT = 2025;

/** The clone (or, for the installed bin, the package, which ships no `langgraph.json`). */
const ROOT = packageRoot(import.meta.url);

/** What `studio` serves. */
export interface StudioOptions {
  store: StoreOptions;
  host: string;
  port: number;
}

/**
 * The `studio` command (`npm run studio`): the official LangGraph dev server on `langgraph.json`,
 * offline (no LangSmith key, no tracing, no browser), with the graphs reading agents from the
 * data dir (`--data`). The run context defaults to the `demo` user's default agent in the graph
 * itself (`studio.ts`), as it does under a plain `npx @langchain/langgraph-cli dev`. Open
 * the printed Studio URL, or point `@langchain/langgraph-sdk` at it. Ends when the server does
 * (Ctrl-C stops it).
 */
export async function studioCommand(options: StudioOptions, io: Io): Promise<number> {
  if (!existsSync(join(ROOT, "langgraph.json"))) {
    io.stderr.write(
      "error: studio serves the TypeScript sources named in langgraph.json, which the installed " +
        "package does not ship: run it in a clone of the repository (npm ci && npm run studio)\n",
    );
    return 1;
  }
  const bin = join(ROOT, "node_modules", ".bin", "langgraphjs");
  if (!existsSync(bin)) {
    io.stderr.write(
      "error: the LangGraph dev server is a dev dependency: run `npm ci` (with dev dependencies) first\n",
    );
    return 1;
  }
  const env: NodeJS.ProcessEnv = {
    ...io.env,
    SUBAGENT_GRAPH_DATA: options.store.dataDir,
    LANGSMITH_TRACING: io.env.LANGSMITH_TRACING ?? "false",
    LANGCHAIN_TRACING_V2: io.env.LANGCHAIN_TRACING_V2 ?? "false",
    // No LANGGRAPH_CONFIG: the graph's own context schema has the defaults (uid "demo", the
    // user's default agent), so this command serves exactly what `langgraphjs dev` does.
  };
  const child = spawn(
    bin,
    [
      "dev",
      "--config",
      join(ROOT, "langgraph.json"),
      "--host",
      options.host,
      "--port",
      String(options.port),
      "--no-browser",
      "--no-reload",
    ],
    { cwd: ROOT, env, stdio: "inherit" },
  );
  const forward = (signal: NodeJS.Signals) => child.kill(signal);
  process.on("SIGINT", forward);
  process.on("SIGTERM", forward);
  return new Promise((resolve) => {
    child.on("exit", (code, signal) => {
      process.off("SIGINT", forward);
      process.off("SIGTERM", forward);
      resolve(signal ? 0 : (code ?? 1));
    });
  });
}
