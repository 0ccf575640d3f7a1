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
export function modelEnv(modelUrl: string): Record<string, string> {
  return { OPENAI_API_KEY: "sk-bench", OPENAI_BASE_URL: modelUrl, OPENAI_MAX_RETRIES: "0" };
}

/** What {@link seedAgents} writes, and where. */
export interface SeedOptions {
  /** The subagents `boss` may call, each a record on `child-model` (default `worker`). */
  subagents?: readonly string[];
  /** More of the runtime's environment (e.g. `DATABASE_URL`: the agents go to that database). */
  env?: Record<string, string>;
}

/** The bench user with `boss` (default, may call the `subagents`) and those; its token. */
export async function seedAgents(
  dataDir: string,
  modelUrl: string,
  options: SeedOptions = {},
): Promise<string> {
  const subagents = options.subagents ?? [STREAM_CHILD];
  const runtime = await createRuntime({
    dataDir,
    env: { ...modelEnv(modelUrl), ...options.env },
    warn: () => {},
  });
  try {
    await runtime.users.add(UID);
    const { token } = await runtime.users.issueToken(UID);
    for (const slug of subagents) {
      await runtime.agents.create(UID, subagentPayload(slug, "openai:child-model"));
    }
    await runtime.agents.create(UID, {
      ...mainAgentPayload(MAIN_SLUG, "openai:main-model", [...subagents]),
      is_default: true,
    });
    return token;
  } finally {
    await runtime.close();
  }
}

/** Resolves with `serve`'s URL once it says where it serves; throws with its output if it never does. */
export async function servingUrl(server: ServerProcess, timeoutMs = 60_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  while (server.base() === "" && server.child.exitCode === null && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const url = server.base();
  if (url === "") throw new Error(`serve did not start:\n${server.output()}`);
  return url;
}

/** The official dev server as {@link startDevServer} starts it. */
export interface StartedDevServer {
  target: StreamTarget;
  server: DevServer;
  /** Stops it and removes its project folder. */
  stop(): Promise<void>;
}

/**
 * Starts `langgraphjs dev` on our `langgraph.json` in a temporary project linking the
 * repository, its graph reading the agents seeded in `devData`, and creates the bench
 * assistant. `jobs`: its `--n-jobs-per-worker` (runs it runs at once; its default is 10).
 */
export async function startDevServer(
  modelUrl: string,
  devData: string,
  options: { jobs?: number } = {},
): Promise<StartedDevServer> {
  const project = await mkdtemp(join(tmpdir(), "bench-stream-project-"));
  let devServer: DevServer | undefined;
  const stop = async () => {
    await devServer?.stop();
    await rm(project, { recursive: true, force: true, maxRetries: 10 });
  };
  try {
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
        ...(options.jobs === undefined ? [] : ["--n-jobs-per-worker", String(options.jobs)]),
      ],
      cwd: project,
      env: bareEnv({
        SUBAGENT_GRAPH_DATA: devData,
        LANGSMITH_TRACING: "false",
        ...modelEnv(modelUrl),
      }),
      startTimeoutMs: 120_000,
    });
    await devServer.ready();
    const devClient = new Client({ apiUrl: devServer.url, apiKey: null });
    const assistant = await devClient.assistants.create({
      graphId: "agent",
      context: { uid: UID },
      name: "bench",
    });
    return {
      target: {
        name: "dev",
        url: devServer.url,
        client: devClient,
        assistantId: assistant.assistant_id,
        token: undefined,
      },
      server: devServer,
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** Starts both servers; `stop()` ends them and removes their folders (also after a failed start). */
export async function startStreamServers(modelUrl: string): Promise<StreamServers> {
  const dirs: string[] = [];
  let ourProcess: ServerProcess | undefined;
  let dev: StartedDevServer | undefined;
  const stop = async () => {
    if (ourProcess && ourProcess.child.exitCode === null) {
      ourProcess.child.kill("SIGTERM");
      await ourProcess.exited;
    }
    await dev?.stop();
    for (const dir of dirs) await rm(dir, { recursive: true, force: true, maxRetries: 10 });
  };
  try {
    const ourData = await mkdtemp(join(tmpdir(), "bench-stream-ours-"));
    const devData = await mkdtemp(join(tmpdir(), "bench-stream-dev-"));
    dirs.push(ourData, devData);
    const token = await seedAgents(ourData, modelUrl);
    await seedAgents(devData, modelUrl);

    ourProcess = startServerProcess(ourData, cleanEnv(modelEnv(modelUrl)));
    dev = await startDevServer(modelUrl, devData);
    const ourUrl = await servingUrl(ourProcess);
    return {
      ours: {
        name: "ours",
        url: ourUrl,
        client: new Client({ apiUrl: ourUrl, apiKey: token }),
        assistantId: MAIN_SLUG,
        token,
      },
      dev: dev.target,
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
