import { copyFile, mkdtemp, readdir, rm, symlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { bareEnv, type DevServer, spawnDevServer } from "../support/langgraph-dev.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

/** A newcomer's dev server, its project folder and its data dir. */
export interface NewcomerStudio {
  server: DevServer;
  /** The temporary project the server runs in (its `.langgraph_api/` is there). */
  project: string;
  /** The agents' data dir (`SUBAGENT_GRAPH_DATA`): agent store, thread files. */
  dataDir: string;
  /** Stops the server and removes both folders. */
  dispose(): Promise<void>;
}

/**
 * `langgraphjs dev --config langgraph.json` started directly (not through `npm run studio`), as
 * a newcomer runs `npx @langchain/langgraph-cli dev`: nothing of ours configured (no
 * `LANGGRAPH_CONFIG`, no LangSmith or OpenAI variables beyond `env`).
 *
 * The server runs in a temporary project: the repository's `langgraph.json` copied as it is,
 * every other top-level entry linked, so it starts from a fresh `.langgraph_api/` (the dev
 * server keeps its state in the project folder) without touching the repository's own. The
 * agents live in a temporary data dir (`SUBAGENT_GRAPH_DATA`, else the server would write
 * `./data`). Call `dispose()` in `afterAll`, also when the start failed.
 */
export async function startNewcomerStudio(
  env: Record<string, string> = {},
): Promise<NewcomerStudio> {
  const project = await mkdtemp(join(tmpdir(), "studio-project-"));
  const dataDir = await mkdtemp(join(tmpdir(), "studio-data-"));
  let server: DevServer | undefined;
  const dispose = async () => {
    await server?.stop();
    // Retried: a file the dev server wrote as it stopped can land while the folder is emptied.
    await rm(project, { recursive: true, force: true, maxRetries: 10 });
    await rm(dataDir, { recursive: true, force: true });
  };
  try {
    for (const entry of await readdir(ROOT)) {
      if (entry.startsWith(".") || entry === "data" || entry === "langgraph.json") continue;
      await symlink(join(ROOT, entry), join(project, entry));
    }
    await copyFile(join(ROOT, "langgraph.json"), join(project, "langgraph.json"));
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
    });
    await server.ready();
    return { server, project, dataDir, dispose };
  } catch (error) {
    await dispose();
    throw error;
  }
}
