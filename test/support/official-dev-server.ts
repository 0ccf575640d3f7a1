import { mkdtemp, readdir, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { bareEnv, type DevServer, spawnDevServer } from "./langgraph-dev.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

/** The graph id of the Deep Agents reference graph (test/fixtures/official-hooks/deep-agent.ts). */
export const DEEP_AGENT_GRAPH = "deep";

/** The official dev server on our `langgraph.json` plus the Deep Agents reference graph. */
export interface OfficialDevServer {
  server: DevServer;
  /** Stops the server and removes its project and data folders. */
  dispose(): Promise<void>;
}

/**
 * `langgraphjs dev` in a temporary project: every top-level entry of the repository linked, and
 * its `langgraph.json` as the repository has it with one more graph, {@link DEEP_AGENT_GRAPH}
 * (so one server hosts our graph, `agent`, exactly as Studio does, and the reference beside it).
 * Nothing of ours is configured: `env` is all it gets beyond a bare environment, and our agents
 * live in a temporary data dir. Call `dispose()` in `afterAll`, also when the start failed.
 */
export async function startOfficialDevServer(
  env: Record<string, string>,
): Promise<OfficialDevServer> {
  const project = await mkdtemp(join(tmpdir(), "hooks-project-"));
  const dataDir = await mkdtemp(join(tmpdir(), "hooks-data-"));
  let server: DevServer | undefined;
  const dispose = async () => {
    await server?.stop();
    await rm(project, { recursive: true, force: true, maxRetries: 10 });
    await rm(dataDir, { recursive: true, force: true });
  };
  try {
    for (const entry of await readdir(ROOT)) {
      if (entry.startsWith(".") || entry === "data" || entry === "langgraph.json") continue;
      await symlink(join(ROOT, entry), join(project, entry));
    }
    const config = JSON.parse(await readFile(join(ROOT, "langgraph.json"), "utf8")) as {
      graphs: Record<string, string>;
    };
    config.graphs[DEEP_AGENT_GRAPH] = "./test/fixtures/official-hooks/deep-agent.ts:agent";
    await writeFile(join(project, "langgraph.json"), JSON.stringify(config, null, 2));
    server = await spawnDevServer({
      command: join(ROOT, "node_modules", ".bin", "langgraphjs"),
      args: (port) => [
        "dev",
        "--config",
        "langgraph.json",
        "--port",
        String(port),
        "--no-browser",
        "--no-reload",
      ],
      cwd: project,
      env: bareEnv({ SUBAGENT_GRAPH_DATA: dataDir, LANGSMITH_TRACING: "false", ...env }),
      startTimeoutMs: 90_000,
    });
    await server.ready();
    return { server, dispose };
  } catch (error) {
    await dispose();
    throw error;
  }
}
