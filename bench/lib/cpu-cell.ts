/**
 * One measured cell of the cpu scenario (`scenarios/cpu.ts`): a fresh server, a warm-up, then
 * `clients` SDK clients (`cpu-client.ts`, in their own process) running their conversations,
 * with the server's CPU, main-thread CPU and resident memory read from `/proc` around the load,
 * and, on PostgreSQL, the cluster's CPU and each queued run's pickup.
 */
import { openPostgresDatabase } from "../../store/database.js";
import type { CpuLoadCommand } from "./cpu-client.js";
import { cpuMsOf, mainThreadCpuMs, rssOf, sampleRss } from "./cpu-process-tree.js";
import type { CpuServer } from "./cpu-servers.js";
import { pickupTimes } from "./fleet-setup.js";
import type { LoadReport } from "./load-client.js";
import type { ClientProcess } from "./load-client-process.js";

/** The clients' process, as the cell drives it. */
export type CpuClients = ClientProcess<CpuLoadCommand, LoadReport>;

/** What one cell measured (every sample kept for `latest.json`). */
export interface CellSample {
  system: string;
  clients: number;
  repetition: number;
  runs: number;
  errors: number;
  errorSamples: string[];
  wallMs: number;
  runsPerSecond: number;
  latenciesMs: number[];
  /** User + system CPU of the server's processes over the load, ms per run. */
  cpuMsPerRun: number;
  /** The same, of the serving processes' main threads only. */
  mainThreadMsPerRun: number;
  /** The PostgreSQL cluster's CPU over the load, ms per run (0 on SQLite). */
  postgresMsPerRun: number;
  /** The server's processes' resident memory just before the load, bytes. */
  rssBeforeBytes: number;
  /** Their highest resident memory during the load (sampled every 25 ms), bytes. */
  peakRssBytes: number;
  /** (peak − before) ÷ clients: memory per run in flight, bytes. */
  rssPerConcurrentRunBytes: number;
  /** Claim − creation of each queued run (PostgreSQL), ms; [] on SQLite. */
  pickupMs: number[];
}

/** What a cell runs: the load, and the server to run it on. */
export interface CellPlan {
  system: string;
  clients: number;
  conversations: number;
  repetition: number;
  tokens: number;
  subagents: string[];
  start(): Promise<CpuServer>;
}

/** Clients, each running one conversation, that warm a fresh server up (graphs built, JIT). */
const WARMUP_CLIENTS = 4;

/** Starts the cell's server fresh, warms it up, measures the load and stops the server. */
export async function measureCell(plan: CellPlan, clients: CpuClients): Promise<CellSample> {
  const server = await plan.start();
  try {
    const load = (count: number, conversations: number): CpuLoadCommand => ({
      bases: server.bases,
      apiKey: server.apiKey,
      assistantId: server.assistantId,
      clients: count,
      conversations,
      tokens: plan.tokens,
      subagents: plan.subagents,
    });
    const warmup = await clients.send(load(WARMUP_CLIENTS, 1));
    if (warmup.errors.length > 0) {
      throw new Error(
        `${plan.system}: the warm-up failed: ${warmup.errors.slice(0, 3).join("; ")}`,
      );
    }
    // The processes are read once the server is up and warm (the dev server's tree is complete
    // by then) and stay the same through the load.
    const processes = server.processes();
    const postgres = server.postgresProcesses();
    const since = new Date().toISOString();
    const rssBeforeBytes = rssOf(processes);
    const sampler = sampleRss(processes);
    const cpuBefore = cpuMsOf(processes);
    const mainBefore = server.servingPids.reduce((sum, pid) => sum + mainThreadCpuMs(pid), 0);
    const postgresBefore = cpuMsOf(postgres);
    const report = await clients.send(load(plan.clients, plan.conversations));
    const cpuMs = cpuMsOf(processes) - cpuBefore;
    const mainMs =
      server.servingPids.reduce((sum, pid) => sum + mainThreadCpuMs(pid), 0) - mainBefore;
    const postgresMs = cpuMsOf(postgres) - postgresBefore;
    const { peakBytes } = sampler.stop();
    const runs = Math.max(report.runs, 1);
    return {
      system: plan.system,
      clients: plan.clients,
      repetition: plan.repetition,
      runs: report.runs,
      errors: report.errors.length,
      errorSamples: report.errors.slice(0, 3),
      wallMs: report.wallMs,
      runsPerSecond: report.runs / (report.wallMs / 1000),
      latenciesMs: report.latenciesMs,
      cpuMsPerRun: cpuMs / runs,
      mainThreadMsPerRun: mainMs / runs,
      postgresMsPerRun: postgresMs / runs,
      rssBeforeBytes,
      peakRssBytes: peakBytes,
      rssPerConcurrentRunBytes: (peakBytes - rssBeforeBytes) / plan.clients,
      pickupMs: server.databaseUrl ? await pickups(server.databaseUrl, since) : [],
    };
  } finally {
    await server.stop();
  }
}

/** The pickup of every queued run written since `since` on that database. */
async function pickups(databaseUrl: string, since: string): Promise<number[]> {
  const database = await openPostgresDatabase(databaseUrl);
  try {
    return await pickupTimes(database, since);
  } finally {
    await database.close();
  }
}
