/**
 * `npm run bench:idle-pickup -- [runs]`: how long a queued run waits for an idle fleet's worker
 * (issue 42's "pickup on an idle fleet ≤ 20 ms p50"). Starts an API-only `serve` process and a
 * worker-only one on a fresh PostgreSQL database, so every run goes through the queue, sends
 * `runs` delegating runs (default 30) one at a time through the API process, and prints the
 * pickup of each (`claimed_at − created_at`, both the database's clock) as p50, p90 and max.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createRuntime } from "../runtime.js";
import { openPostgresDatabase } from "../store/database.js";
import type { ServerProcess } from "../test/support/server-process.js";
import {
  fleetEnv,
  fleetLoad,
  pickupTimes,
  seedFleetUser,
  startFleetModel,
  startFleetProcess,
} from "./lib/fleet-setup.js";
import { ClientProcess } from "./lib/load-client-process.js";
import { freshPostgresDatabase, stopPostgres } from "./lib/postgres.js";
import { percentile } from "./lib/stats.js";

async function main(): Promise<void> {
  const runs = Number(process.argv[2] ?? 30);
  if (!Number.isInteger(runs) || runs < 1) {
    console.error("usage: npm run bench:idle-pickup -- [runs]");
    process.exit(2);
  }
  const databaseUrl = await freshPostgresDatabase("idle_pickup");
  if (!databaseUrl) throw new Error("PostgreSQL is not installed");
  const model = await startFleetModel(50);
  const env = fleetEnv(databaseUrl, model.url, 3000);
  const dirs: string[] = [];
  const servers: ServerProcess[] = [];
  const clients = new ClientProcess();
  try {
    const adminDir = await mkdtemp(join(tmpdir(), "bench-pickup-"));
    dirs.push(adminDir);
    const admin = await createRuntime({ dataDir: adminDir, env });
    const token = await seedFleetUser(admin).finally(() => admin.close());
    const api = await startFleetProcess(env, dirs, servers, { role: "api" });
    await startFleetProcess(env, dirs, servers, { role: "worker" });
    // Warm-up: graphs built and code compiled in both processes.
    await clients.send({ ...fleetLoad([api.base()], token, 1), clients: 1, conversations: 3 });
    const since = new Date().toISOString();
    // One client, one run at a time: the worker is idle whenever a run is written.
    const report = await clients.send({
      ...fleetLoad([api.base()], token, 1),
      clients: 1,
      conversations: runs,
    });
    const database = await openPostgresDatabase(databaseUrl);
    const pickups = await pickupTimes(database, since).finally(() => database.close());
    console.log(
      `${report.runs} runs one at a time (${report.errors.length} errors), through an API-only process to a worker-only one: pickup p50 ${percentile(pickups, 50).toFixed(1)} ms, p90 ${percentile(pickups, 90).toFixed(1)} ms, max ${Math.max(...pickups).toFixed(1)} ms over ${pickups.length} queued runs`,
    );
  } finally {
    clients.stop();
    for (const server of servers) server.child.kill("SIGKILL");
    await Promise.all(servers.map((server) => server.exited));
    await model.close();
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
    stopPostgres();
  }
}

await main();
