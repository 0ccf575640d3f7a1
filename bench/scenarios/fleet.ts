import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { isFinishedStatus } from "../../contract.js";
import { createRuntime, type Runtime } from "../../runtime.js";
import { openPostgresDatabase } from "../../store/database.js";
import type { ServerProcess } from "../../test/support/server-process.js";
import { type CpuUsage, pidsNamed, startCpuMeter } from "../lib/cpu-usage.js";
import {
  fleetEnv,
  fleetLoad,
  pickupTimes,
  seedFleetUser,
  startFleetModel,
  startFleetProcess,
} from "../lib/fleet-setup.js";
import { ClientProcess } from "../lib/load-client-process.js";
import { LOAD_HEADERS, loadCells } from "../lib/load-row.js";
import { freshPostgresDatabase } from "../lib/postgres.js";
import type { Scenario, TargetCheck } from "../lib/scenario.js";
import { percentile } from "../lib/stats.js";
import { MAIN_SLUG, UID } from "../lib/systems.js";
import { fmt, type Table } from "../lib/table.js";

const LATENCY_MS = 50;
const TURNS = 3;
/** The lease the fleet runs with here (SUBAGENT_THREAD_LEASE_MS). */
const LEASE_MS = 3000;
/** The split-roles level's name in the table. */
const SPLIT = "api + worker";
/** The input whose subagent takes long enough to kill its worker mid-run. */
const SLOW_INPUT = "fan out 1 slowly";

interface FleetLevel {
  /** "1" or "2" processes each API and worker, or "api + worker" (split roles). */
  processes: string;
  clients: number;
  runs: number;
  errors: number;
  errorSamples: string[];
  runsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  pickupP50Ms: number;
  pickupP99Ms: number;
  /** CPU over the level: the machine's busy share and the cores each group used. */
  cpu: CpuUsage;
  /** The servers' event loop delay over the level (the worst server's), in ms. */
  loopDelayP50Ms: number;
  loopDelayP99Ms: number;
}

/**
 * The fleet scenario, the load scenario's fleet mode: real `serve` processes on one PostgreSQL
 * database (1 process, then 2, each answering requests and running queued runs), a fake OpenAI
 * server with a 50 ms model, and 32 and 64 clients running 3-turn conversations with a subagent per
 * turn; then the takeover time after a SIGKILL of the worker running a run.
 */
export const fleetScenario: Scenario = {
  name: "fleet",
  title: "Service load on a fleet (PostgreSQL, 50 ms model)",
  async run({ quick }) {
    const databaseUrl = await freshPostgresDatabase("fleet");
    if (!databaseUrl) {
      return {
        tables: [],
        data: { skipped: "PostgreSQL is not installed" },
        targets: [{ target: "fleet", met: undefined, detail: "PostgreSQL is not installed" }],
      };
    }
    const levels = quick ? [8, 16] : [32, 64];
    const fake = await startFleetModel(LATENCY_MS);
    const env = fleetEnv(databaseUrl, fake.url, LEASE_MS);
    const dirs: string[] = [];
    const servers: ServerProcess[] = [];
    const clients = new ClientProcess();
    let admin: Runtime | undefined;
    const database = await openPostgresDatabase(databaseUrl);
    try {
      const adminDir = await mkdtemp(join(tmpdir(), "bench-fleet-"));
      dirs.push(adminDir);
      admin = await createRuntime({ dataDir: adminDir, env });
      const token = await seedFleetUser(admin);
      const start = () => startFleetProcess(env, dirs, servers);

      const results: FleetLevel[] = [];
      /** Runs every level against `bases` (the processes clients talk to). */
      const measure = async (processes: string, bases: string[]) => {
        // Warm-up: every process compiles its graphs once.
        await clients.send({ ...fleetLoad(bases, token, TURNS), clients: 2 * servers.length });
        for (const clientCount of levels) {
          const since = new Date().toISOString();
          // A scrape starts the servers' event loop delay afresh (see loopDelay).
          await Promise.all(servers.map((server) => loopDelay(server.base())));
          const meter = startCpuMeter({
            servers: () => servers.map((server) => server.child.pid),
            postgres: () => pidsNamed("postgres"),
            // The fake model answers from this process.
            "clients + model": () => [clients.pid, process.pid],
          });
          const report = await clients.send({
            ...fleetLoad(bases, token, TURNS),
            clients: clientCount,
          });
          const cpu = meter.stop();
          const delays = await Promise.all(servers.map((server) => loopDelay(server.base())));
          const pickups = await pickupTimes(database, since);
          results.push({
            processes,
            clients: clientCount,
            runs: report.runs,
            errors: report.errors.length,
            errorSamples: report.errors.slice(0, 3),
            runsPerSecond: report.runs / (report.wallMs / 1000),
            p50Ms: report.p50Ms,
            p99Ms: report.p99Ms,
            pickupP50Ms: percentile(pickups, 50),
            pickupP99Ms: percentile(pickups, 99),
            cpu,
            loopDelayP50Ms: Math.max(...delays.map((delay) => delay.p50Ms)),
            loopDelayP99Ms: Math.max(...delays.map((delay) => delay.p99Ms)),
          });
        }
      };
      for (const processes of [1, 2]) {
        while (servers.length < processes) await start();
        await measure(
          String(processes),
          servers.map((server) => server.base()),
        );
      }
      const takeover = await measureTakeover(admin, servers, token, start);
      // Split roles: every run goes through the queue (an API-only process claims nothing), so
      // this is the queue's pickup; processes that are also workers start most runs at once.
      for (const server of servers.splice(0)) {
        server.child.kill("SIGKILL");
        await server.exited;
      }
      const api = await startFleetProcess(env, dirs, servers, { role: "api" });
      await startFleetProcess(env, dirs, servers, { role: "worker" });
      await measure(SPLIT, [api.base()]);

      const table: Table = {
        title:
          "Fleet: one PostgreSQL, 1 vs 2 processes (each API and worker), then an API-only process and a worker, 50 ms model",
        headers: [
          "processes",
          "clients",
          ...LOAD_HEADERS,
          "pickup p50 ms",
          "pickup p99 ms",
          "loop delay p50 ms",
          "loop delay p99 ms",
          "CPU busy",
          "servers",
          "postgres",
          "clients + model",
        ],
        rows: results.map((r) => [
          r.processes,
          String(r.clients),
          ...loadCells(r),
          fmt(r.pickupP50Ms, 1),
          fmt(r.pickupP99Ms, 1),
          fmt(r.loopDelayP50Ms, 1),
          fmt(r.loopDelayP99Ms, 1),
          `${fmt(r.cpu.machineBusy * 100, 0)}%`,
          fmt(r.cpu.cores.servers ?? 0, 2),
          fmt(r.cpu.cores.postgres ?? 0, 2),
          fmt(r.cpu.cores["clients + model"] ?? 0, 2),
        ]),
        notes: [
          `a run = one POST /threads/:id/runs/wait of a ${TURNS}-turn conversation (main, child, main: 3 model calls of ${LATENCY_MS} ms); clients alternate between the processes; pickup = a run's first claim − its creation (runs.claimed_at − runs.created_at).`,
          `a process that is also a worker starts a run it is asked for in the request itself while it has a free slot (pickup 0 by construction); "${SPLIT}" sends every run through the queue: an API-only process writes it, the worker-only process is woken and claims it.`,
          "loop delay: how late the busiest server's event loop ran what was due over the level (its /metrics, nodejs_eventloop_lag_*): a woken worker waits that long before it sends its claim.",
          "CPU: the machine's busy share of its 2 cores over the level, and the cores (CPU seconds ÷ wall seconds) used by the server processes, PostgreSQL and the load clients with the fake model.",
          `takeover: a run whose subagent takes 4 s, its worker SIGKILLed mid-child; ${takeover.detail}`,
        ],
      };
      const errors = results.reduce((sum, r) => sum + r.errors, 0);
      const ratios = levels.map((clientCount) => {
        const one = results.find((r) => r.processes === "1" && r.clients === clientCount);
        const two = results.find((r) => r.processes === "2" && r.clients === clientCount);
        return (two?.runsPerSecond ?? 0) / (one?.runsPerSecond ?? Number.NaN);
      });
      const ceilings = levels.map((clientCount) => {
        const one = results.find((r) => r.processes === "1" && r.clients === clientCount);
        return one ? machineCeiling(one.cpu) : Number.NaN;
      });
      // The queue's pickup: the split roles' (elsewhere most runs never wait in the queue).
      const pickupP50 = Math.max(
        ...results.filter((r) => r.processes === SPLIT).map((r) => r.pickupP50Ms),
      );
      const targets: TargetCheck[] = [
        {
          target: "fleet: 0 errors and 0 lost runs",
          met: errors === 0 && takeover.status === "success",
          detail: `${errors} errors; the killed worker's run ended ${takeover.status}`,
        },
        {
          target: "fleet: 2 processes ≥ 1.6 × one process's runs/s",
          met: ratios.every((ratio) => ratio >= 1.6),
          detail: ratios
            .map(
              (ratio, i) =>
                `${levels[i]} clients ${fmt(ratio, 2)}× (this machine's ceiling ${fmt(ceilings[i] ?? Number.NaN, 2)}×)`,
            )
            .join(", "),
        },
        {
          target: "fleet: pickup p50 ≤ 20 ms",
          met: pickupP50 <= 20,
          detail: `worst level's p50 ${fmt(pickupP50, 1)} ms through the queue (${SPLIT})`,
        },
        {
          target: "fleet: takeover ≤ lease + 1 s",
          met: takeover.ms <= LEASE_MS + 1000,
          detail: `${fmt(takeover.ms, 0)} ms (lease ${LEASE_MS} ms)`,
        },
      ];
      return {
        tables: [table],
        data: {
          latencyMs: LATENCY_MS,
          turns: TURNS,
          leaseMs: LEASE_MS,
          results,
          takeover,
          ratios,
          ceilings,
        },
        targets,
      };
    } finally {
      clients.stop();
      for (const server of servers) server.child.kill("SIGKILL");
      await Promise.all(servers.map((server) => server.exited));
      await admin?.close();
      await database.close();
      await fake.close();
      for (const dir of dirs) await rm(dir, { recursive: true, force: true });
    }
  },
};

/**
 * A server's event loop delay since its previous `/metrics` scrape (which this one restarts), in
 * ms; NaN when it does not answer.
 */
async function loopDelay(base: string): Promise<{ p50Ms: number; p99Ms: number }> {
  try {
    const text = await (await fetch(`${base}/metrics`)).text();
    const gauge = (name: string) => {
      const line = text
        .split("\n")
        .find((l) => l.startsWith(`nodejs_eventloop_lag_${name}_seconds `));
      return Number(line?.split(" ")[1]) * 1000;
    };
    return { p50Ms: gauge("p50"), p99Ms: gauge("p99") };
  } catch {
    return { p50Ms: Number.NaN, p99Ms: Number.NaN };
  }
}

/** The machine's cores (the fleet shares them with PostgreSQL, the clients and the model). */
const MACHINE_CORES = 2;

/**
 * The most runs/s any number of processes could reach on this machine, as a multiple of one
 * process's: every run costs the CPU one process's level spent per run (server, PostgreSQL,
 * clients and model alike), and the machine has {@link MACHINE_CORES} cores to spend.
 */
function machineCeiling(one: CpuUsage): number {
  const coresPerOneProcessLevel = Object.values(one.cores).reduce((sum, cores) => sum + cores, 0);
  return MACHINE_CORES / coresPerOneProcessLevel;
}

/**
 * Starts a run whose subagent takes 4 s, SIGKILLs the worker running it once the subagent has
 * started, and measures until another worker has claimed it again (its attempt 2, polled).
 */
async function measureTakeover(
  admin: Runtime,
  servers: ServerProcess[],
  token: string,
  start: () => Promise<ServerProcess>,
): Promise<{ ms: number; status: string; attempt: number; detail: string }> {
  const base = servers[0]?.base() ?? "";
  const headers = { authorization: `Bearer ${token}`, "content-type": "application/json" };
  const thread = (await (
    await fetch(`${base}/threads`, { method: "POST", headers, body: "{}" })
  ).json()) as { thread_id: string };
  const run = (await (
    await fetch(`${base}/threads/${thread.thread_id}/runs`, {
      method: "POST",
      headers,
      body: JSON.stringify({
        assistant_id: MAIN_SLUG,
        input: { messages: [{ type: "human", content: SLOW_INPUT }] },
      }),
    })
  ).json()) as { run_id: string };
  // Once the run is on its subagent (well into its 4 s), kill the process running it.
  let info = await admin.runInfo(UID, run.run_id);
  const deadline = Date.now() + 30_000;
  while ((info?.status !== "running" || info.runner_pid === null) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    info = await admin.runInfo(UID, run.run_id);
  }
  await new Promise((resolve) => setTimeout(resolve, 1500));
  const victim = servers.find((server) => server.child.pid === info?.runner_pid);
  if (!victim) return { ms: Number.NaN, status: "unknown", attempt: 0, detail: "no victim" };
  const killedAt = Date.now();
  victim.child.kill("SIGKILL");
  await victim.exited;
  servers.splice(servers.indexOf(victim), 1);
  if (servers.length === 0) await start();
  let claimedAgain: number | undefined;
  while (Date.now() < killedAt + 60_000) {
    info = await admin.runInfo(UID, run.run_id);
    // Seen by polling every 20 ms (the row keeps the first claim's time only).
    if (claimedAgain === undefined && Number(info?.attempt) >= 2) claimedAgain = Date.now();
    if (info && isFinishedStatus(info.status)) break;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const ms = (claimedAgain ?? Number.NaN) - killedAt;
  const status = info?.status ?? "unknown";
  return {
    ms,
    status,
    attempt: Number(info?.attempt),
    detail: `claimed again as attempt ${info?.attempt} ${fmt(ms, 0)} ms after the kill (a worker on the same machine sees the dead pid; on another machine it waits for the ${LEASE_MS} ms lease), ended ${status}`,
  };
}
