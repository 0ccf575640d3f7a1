/**
 * What the fleet scenario (`scenarios/fleet.ts`) and its profile (`profile-fleet.ts`) share:
 * the fake model, the servers' environment, the seeded user and agents, the load and the
 * pickup times read back from the runs table.
 */
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Runtime } from "../../runtime.js";
import type { Database } from "../../store/database.js";
import {
  type FakeOpenAIServer,
  startFakeOpenAIServer,
} from "../../test/support/fake-openai-server.js";
import { mainAgentPayload, subagentPayload } from "../../test/support/runtime-fixture.js";
import {
  cleanEnv,
  type ServerProcess,
  startServerProcess,
} from "../../test/support/server-process.js";
import type { LoadCommand } from "./load-client.js";
import { CHILD_NAME, fanOutInput } from "./scripts.js";
import { MAIN_SLUG, UID } from "./systems.js";

/** Queued runs each fleet process runs at once: more than the clients, so none waits a slot. */
const WORKERS_PER_PROCESS = 64;

/**
 * A fake OpenAI server answering every call after `latencyMs`: the main agent delegates one
 * question to the subagent, then answers. An input saying "slowly" makes the child take 4 s.
 */
export function startFleetModel(latencyMs: number): Promise<FakeOpenAIServer> {
  return startFakeOpenAIServer((request) => {
    const last = request.messages.at(-1);
    const firstHuman = request.messages.find((message) => message.role === "user")?.content;
    if (request.model === "child-model") {
      const slow = String(firstHuman).includes("slowly");
      return { content: `answer to: ${firstHuman}`, delayMs: slow ? 4000 : latencyMs };
    }
    if (last?.role === "tool") {
      return { content: "done (1 results in the thread)", delayMs: latencyMs };
    }
    const slowly = String(last?.content).includes("slowly");
    return {
      content: "",
      toolCalls: [
        {
          name: "task",
          arguments: {
            description: slowly ? "Question 1, slowly" : "Question 1: what is 0 + 1?",
            subagent_type: CHILD_NAME,
          },
        },
      ],
      delayMs: latencyMs,
    };
  });
}

/**
 * A fleet process's environment: the database (none: SQLite in the data dir), the fake model,
 * the lease and the workers.
 */
export function fleetEnv(databaseUrl: string | undefined, modelUrl: string, leaseMs: number) {
  return cleanEnv({
    ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
    OPENAI_API_KEY: "sk-bench",
    OPENAI_BASE_URL: modelUrl,
    OPENAI_MAX_RETRIES: "0",
    SUBAGENT_THREAD_LEASE_MS: String(leaseMs),
    SUBAGENT_WORKERS: String(WORKERS_PER_PROCESS),
  });
}

/** Adds the bench user and its two agents; returns the user's token. */
export async function seedFleetUser(admin: Runtime): Promise<string> {
  await admin.users.add(UID);
  const { token } = await admin.users.issueToken(UID);
  await admin.agents.create(UID, subagentPayload(CHILD_NAME, "openai:child-model"));
  await admin.agents.create(UID, mainAgentPayload(MAIN_SLUG, "openai:main-model", [CHILD_NAME]));
  return token;
}

/** One client's conversation of `turns` runs against the processes at `bases`. */
export function fleetLoad(bases: string[], token: string, turns: number): LoadCommand {
  return {
    base: bases[0] ?? "",
    bases,
    token,
    assistantId: MAIN_SLUG,
    input: fanOutInput(1),
    clients: 1,
    conversations: 1,
    turns,
  };
}

/** Claim − creation of every queued run created since `since`, in ms. */
export async function pickupTimes(database: Database, since: string): Promise<number[]> {
  const rows = await database.db
    .selectFrom("runs")
    .select(["created_at", "claimed_at"])
    .where("created_at", ">=", since)
    .where("claimed_at", "is not", null)
    .execute();
  return rows.map((row) => Date.parse(row.claimed_at ?? "") - Date.parse(row.created_at));
}

/**
 * Starts a `serve` process of the fleet (`--role`, default all) in `dataDir` or a new data folder
 * (added to `dirs`), adds it to
 * `servers` at once (so the caller stops it whatever happens), and resolves once it serves.
 */
export async function startFleetProcess(
  env: NodeJS.ProcessEnv,
  dirs: string[],
  servers: ServerProcess[],
  options: { nodeArgs?: readonly string[]; role?: "all" | "api" | "worker"; dataDir?: string } = {},
): Promise<ServerProcess> {
  let dir = options.dataDir;
  if (dir === undefined) {
    dir = await mkdtemp(join(tmpdir(), "bench-fleet-"));
    dirs.push(dir);
  }
  const server = startServerProcess(dir, env, {
    nodeArgs: options.nodeArgs ?? [],
    serveArgs: ["--role", options.role ?? "all"],
  });
  servers.push(server);
  const deadline = Date.now() + 60_000;
  while (server.base() === "" && server.child.exitCode === null && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  if (server.base() === "") throw new Error(`serve did not start: ${server.output()}`);
  return server;
}
