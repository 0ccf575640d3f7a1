/**
 * The servers of the cpu scenario (`scenarios/cpu.ts`), each started fresh for one measured cell
 * on the same token-streaming model (`token-model-server.ts`) and the same agents (`boss`, which
 * calls `researcher` and `reviewer` in parallel), with what the scenario reads of them in `/proc`:
 * - ours: `subagent-graph serve` as a user types it (`startFleetProcess`), SQLite in its data dir
 *   or a fresh PostgreSQL database (`DATABASE_URL`), one process or a fleet of several;
 * - dev: the official `langgraphjs dev` on our `langgraph.json` (`streaming-servers.ts`).
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { cleanEnv, type ServerProcess } from "../../test/support/server-process.js";
import { childOnPathTo, listenerPid, processTree } from "./cpu-process-tree.js";
import { startFleetProcess } from "./fleet-setup.js";
import { freshPostgresDatabase } from "./postgres.js";
import { modelEnv, seedAgents, startDevServer } from "./streaming-servers.js";
import { MAIN_SLUG } from "./systems.js";

/** The subagents `boss` calls in one turn, two `task` calls in one AI message. */
export const CPU_SUBAGENTS = ["researcher", "reviewer"];

/**
 * Queued runs each of our processes runs at once (`SUBAGENT_WORKERS`; `serve`'s default is 10,
 * `cli/commands/serve.ts`), and the dev server's `--n-jobs-per-worker` (its default is 10 too): more than
 * the 32 clients, so no run waits for a slot only because of a default, on either server. On
 * SQLite our server queues nothing (every run starts in its request); the setting matters on
 * PostgreSQL, where every HTTP run goes through the fleet's queue.
 */
export const RUN_SLOTS = 64;

export type SaverChoice = "sqlite" | "postgres";

/** One server as a cell measures it. */
export interface CpuServer {
  /** Where clients send requests: one URL a process (client i talks to `bases[i % n]`). */
  bases: string[];
  /** The bearer token (ours), or null (the dev server has no auth). */
  apiKey: string | null;
  assistantId: string;
  /**
   * Every process of the server now (the started processes and their descendants), whose CPU
   * and memory are the server's; resolved again by each call.
   */
  processes(): number[];
  /**
   * The processes that serve HTTP and run the graphs, whose main thread (the event loop) is
   * timed: ours, each `serve` process; the dev server, the node process listening on its port
   * (see {@link startDev}).
   */
  servingPids: number[];
  /** The PostgreSQL database the server runs on (ours with `--saver postgres`). */
  databaseUrl: string | undefined;
  /** The private cluster's processes (postmaster and backends), [] on SQLite. */
  postgresProcesses(): number[];
  stop(): Promise<void>;
}

/**
 * Our server: `processes` `serve` processes on one store (SQLite in the seeded data dir, which
 * only one process can own, or a fresh PostgreSQL database each process shares).
 */
export async function startOurs(
  modelUrl: string,
  saver: SaverChoice,
  processes: number,
  /** Arguments to each process's node (e.g. `--cpu-prof`, for `profile-cpu.ts`). */
  nodeArgs: readonly string[] = [],
): Promise<CpuServer> {
  const dirs: string[] = [];
  const servers: ServerProcess[] = [];
  const stop = async () => {
    for (const server of servers) {
      if (server.child.exitCode === null) server.child.kill("SIGTERM");
    }
    await Promise.all(servers.map((server) => server.exited));
    for (const dir of dirs) await rm(dir, { recursive: true, force: true, maxRetries: 10 });
  };
  try {
    const dataDir = await mkdtemp(join(tmpdir(), "bench-cpu-ours-"));
    dirs.push(dataDir);
    let databaseUrl: string | undefined;
    if (saver === "postgres") {
      databaseUrl = await freshPostgresDatabase("cpu");
      if (!databaseUrl) throw new Error("PostgreSQL is not installed");
    }
    if (saver === "sqlite" && processes > 1) {
      throw new Error("a fleet needs PostgreSQL (--saver postgres)");
    }
    const database: Record<string, string> = databaseUrl ? { DATABASE_URL: databaseUrl } : {};
    const apiKey = await seedAgents(dataDir, modelUrl, { subagents: CPU_SUBAGENTS, env: database });
    const env = cleanEnv({ ...modelEnv(modelUrl), ...database, SUBAGENT_WORKERS: `${RUN_SLOTS}` });
    for (let i = 0; i < processes; i += 1) {
      // The first process serves from the seeded folder (SQLite's store is there); the others
      // get folders of their own, as a fleet's machines have.
      await startFleetProcess(env, dirs, servers, i === 0 ? { dataDir, nodeArgs } : { nodeArgs });
    }
    const roots = servers.map((server) => server.child.pid ?? -1);
    return {
      bases: servers.map((server) => server.base()),
      apiKey,
      assistantId: MAIN_SLUG,
      processes: () => roots.flatMap(processTree),
      servingPids: roots,
      databaseUrl,
      postgresProcesses: () => postgresProcesses(databaseUrl),
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

/**
 * The official dev server. `langgraphjs dev` is a CLI that spawns the tsx CLI, which spawns the
 * node process that serves: its HTTP, its in-memory queue's workers and the graphs all run in
 * that last process, found as the one listening on the server's port. Its main thread is the one
 * timed; its CPU and memory are the whole tree's, launchers included (a user runs them all).
 * `jobs`: its `--n-jobs-per-worker` (default {@link RUN_SLOTS}).
 */
export async function startDev(modelUrl: string, jobs = RUN_SLOTS): Promise<CpuServer> {
  const devData = await mkdtemp(join(tmpdir(), "bench-cpu-dev-"));
  try {
    await seedAgents(devData, modelUrl, { subagents: CPU_SUBAGENTS });
    const dev = await startDevServer(modelUrl, devData, { jobs });
    const stop = async () => {
      await dev.stop();
      await rm(devData, { recursive: true, force: true, maxRetries: 10 });
    };
    const serving = listenerPid(Number(new URL(dev.target.url).port));
    const root = serving === undefined ? undefined : childOnPathTo(serving, process.pid);
    if (serving === undefined || root === undefined) {
      await stop();
      throw new Error(`no process of the dev server listens on ${dev.target.url}`);
    }
    return {
      bases: [dev.target.url],
      apiKey: null,
      assistantId: dev.target.assistantId,
      processes: () => processTree(root),
      servingPids: [serving],
      databaseUrl: undefined,
      postgresProcesses: () => [],
      stop,
    };
  } catch (error) {
    await rm(devData, { recursive: true, force: true, maxRetries: 10 });
    throw error;
  }
}

/**
 * The processes of the PostgreSQL cluster serving `databaseUrl` (its postmaster, found as the
 * process listening on the URL's port, and every backend and helper below it); [] without one.
 * Not every `postgres` process of the machine: another bench or profile may run a cluster of
 * its own meanwhile.
 */
function postgresProcesses(databaseUrl: string | undefined): number[] {
  if (!databaseUrl) return [];
  const postmaster = listenerPid(Number(new URL(databaseUrl).port));
  return postmaster === undefined ? [] : processTree(postmaster);
}
