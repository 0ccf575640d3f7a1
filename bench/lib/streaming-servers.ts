/**
 * The two servers of the streaming scenario (`scenarios/streaming.ts`), each in a process of its
 * own on a free port and a temporary data dir, both on the same token-streaming model
 * (`token-model-server.ts`) and the same two agents (`boss`, which may delegate to `worker`):
 * - ours: `subagent-graph serve` as a user types it (SQLite store and saver in the data dir);
 * - the official dev server: `langgraphjs dev` (@langchain/langgraph-cli) on our
 *   `langgraph.json`, in a temporary project linking the repository (as
 *   test/studio/newcomer-project.ts starts it), its graph `agent` reading the same agents from
 *   `SUBAGENT_GRAPH_DATA` through an assistant whose context names the bench user.
 */
import { copyFile, mkdtemp, readdir, rm, symlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@langchain/langgraph-sdk";
import { createRuntime } from "../../runtime.js";
import { bareEnv, type DevServer, spawnDevServer } from "../../test/support/langgraph-dev.js";
import { mainAgentPayload, subagentPayload } from "../../test/support/runtime-fixture.js";
import {
  cleanEnv,
  type ServerProcess,
  startServerProcess,
} from "../../test/support/server-process.js";
import { MAIN_SLUG, UID } from "./systems.js";
import { STREAM_CHILD } from "./token-model-server.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

/** One server as the scenario drives it: an SDK client and the assistant to run. */
export interface StreamTarget {
  name: "ours" | "dev";
  url: string;
  client: Client;
  /** `boss` on ours; on the dev server an assistant of graph `agent` with `{ uid: "bench" }`. */
  assistantId: string;
  /** The token (ours) for raw requests; undefined on the dev server (no auth). */
  token: string | undefined;
}

export interface StreamServers {
  ours: StreamTarget;
  dev: StreamTarget;
  stop(): Promise<void>;
}

/** The model's environment, as a user sets it for a local OpenAI-compatible server. */
function modelEnv(modelUrl: string): Record<string, string> {
  return { OPENAI_API_KEY: "sk-bench", OPENAI_BASE_URL: modelUrl, OPENAI_MAX_RETRIES: "0" };
}

/** The bench user with `boss` (default, may call `worker`) and `worker`; its token. */
async function seed(dataDir: string, modelUrl: string): Promise<string> {
  const runtime = await createRuntime({ dataDir, env: modelEnv(modelUrl), warn: () => {} });
  try {
    await runtime.users.add(UID);
    const { token } = await runtime.users.issueToken(UID);
    await runtime.agents.create(UID, subagentPayload(STREAM_CHILD, "openai:child-model"));
    await runtime.agents.create(UID, {
      ...mainAgentPayload(MAIN_SLUG, "openai:main-model", [STREAM_CHILD]),
      is_default: true,
    });
    return token;
  } finally {
    await runtime.close();
  }
}

/** Starts both servers; `stop()` ends them and removes their folders (also after a failed start). */
export async function startStreamServers(modelUrl: string): Promise<StreamServers> {
  const dirs: string[] = [];
  let ourProcess: ServerProcess | undefined;
  let devServer: DevServer | undefined;
  const stop = async () => {
    if (ourProcess && ourProcess.child.exitCode === null) {
      ourProcess.child.kill("SIGTERM");
      await ourProcess.exited;
    }
    await devServer?.stop();
    for (const dir of dirs) await rm(dir, { recursive: true, force: true, maxRetries: 10 });
  };
  try {
    const ourData = await mkdtemp(join(tmpdir(), "bench-stream-ours-"));
    const devData = await mkdtemp(join(tmpdir(), "bench-stream-dev-"));
    const project = await mkdtemp(join(tmpdir(), "bench-stream-project-"));
    dirs.push(ourData, devData, project);
    const token = await seed(ourData, modelUrl);
    await seed(devData, modelUrl);

    ourProcess = startServerProcess(ourData, cleanEnv(modelEnv(modelUrl)));
    for (const entry of await readdir(ROOT)) {
      if (entry.startsWith(".") || entry === "data" || entry === "langgraph.json") continue;
      await symlink(join(ROOT, entry), join(project, entry));
    }
    await copyFile(join(ROOT, "langgraph.json"), join(project, "langgraph.json"));
    devServer = await spawnDevServer({
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
      env: bareEnv({
        SUBAGENT_GRAPH_DATA: devData,
        LANGSMITH_TRACING: "false",
        ...modelEnv(modelUrl),
      }),
      startTimeoutMs: 120_000,
    });

    const deadline = Date.now() + 60_000;
    while (ourProcess.base() === "" && ourProcess.child.exitCode === null) {
      if (Date.now() > deadline) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const ourUrl = ourProcess.base();
    if (ourUrl === "") throw new Error(`serve did not start:\n${ourProcess.output()}`);
    await devServer.ready();
    const devClient = new Client({ apiUrl: devServer.url, apiKey: null });
    const assistant = await devClient.assistants.create({
      graphId: "agent",
      context: { uid: UID },
      name: "bench",
    });
    return {
      ours: {
        name: "ours",
        url: ourUrl,
        client: new Client({ apiUrl: ourUrl, apiKey: token }),
        assistantId: MAIN_SLUG,
        token,
      },
      dev: {
        name: "dev",
        url: devServer.url,
        client: devClient,
        assistantId: assistant.assistant_id,
        token: undefined,
      },
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
