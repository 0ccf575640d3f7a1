/**
 * `npm run bench:profile-fleet -- [clients] [conversations] [--sqlite]`: where one fleet process
 * spends its CPU under the fleet scenario's load. Starts one `serve` process on a fresh
 * PostgreSQL database (with `--sqlite`: SQLite in its data dir, the embedded default) under the
 * V8 profiler (`node --cpu-prof`), warms it up, runs `clients` clients (default 32)
 * of `conversations` 3-turn conversations each (default 2) against it, stops it with SIGINT (the
 * profile is written as it exits) and prints, for the load alone, the self time by package, by
 * function and by phase of a run (`lib/profile-phases.ts`), plus the time below each of our own
 * files. `PROFILE_NODE_ARGS` adds arguments to the server's node (e.g. a V8 flag to try). The
 * raw profile goes to `bench/results/` for Chrome's or VS Code's profile viewer.
 */
import { readdirSync, readFileSync, renameSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { createRuntime } from "../runtime.js";
import type { ServerProcess } from "../test/support/server-process.js";
import {
  fleetEnv,
  fleetLoad,
  seedFleetUser,
  startFleetModel,
  startFleetProcess,
} from "./lib/fleet-setup.js";
import { ClientProcess } from "./lib/load-client-process.js";
import { freshPostgresDatabase, stopPostgres } from "./lib/postgres.js";
import { phaseLines } from "./lib/profile-phases.js";
import { type CpuProfile, monotonicMicros, summarizeProfile } from "./lib/profile-summary.js";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const LATENCY_MS = 50;
const TURNS = 3;

/** CPU time (user + system) a process has used, in ms, from Linux's `/proc/<pid>/stat`. */
function cpuMsOf(pid: number | undefined): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.split(" ") ?? [];
  // utime and stime, fields 14 and 15 of stat(5), in clock ticks (100 a second on Linux).
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

async function main(): Promise<void> {
  const sqlite = process.argv.includes("--sqlite");
  const [clientArg, conversationArg] = process.argv.slice(2).filter((arg) => arg !== "--sqlite");
  const clientCount = Number(clientArg ?? 32);
  const conversations = Number(conversationArg ?? 2);
  if (!Number.isInteger(clientCount) || clientCount < 1 || !Number.isInteger(conversations)) {
    console.error("usage: npm run bench:profile-fleet -- [clients] [conversations] [--sqlite]");
    process.exit(2);
  }
  const databaseUrl = sqlite ? undefined : await freshPostgresDatabase("profile_fleet");
  if (!sqlite && !databaseUrl) throw new Error("PostgreSQL is not installed");
  const fake = await startFleetModel(LATENCY_MS);
  const env = fleetEnv(databaseUrl, fake.url, 3000);
  const dirs: string[] = [];
  const servers: ServerProcess[] = [];
  const clients = new ClientProcess();
  const profileDir = await mkdtemp(join(tmpdir(), "bench-fleet-profile-"));
  dirs.push(profileDir);
  try {
    const adminDir = await mkdtemp(join(tmpdir(), "bench-fleet-"));
    dirs.push(adminDir);
    const admin = await createRuntime({ dataDir: adminDir, env });
    const token = await seedFleetUser(admin).finally(() => admin.close());
    const server = await startFleetProcess(env, dirs, servers, {
      nodeArgs: [
        "--cpu-prof",
        `--cpu-prof-dir=${profileDir}`,
        ...(process.env.PROFILE_NODE_ARGS?.split(" ").filter(Boolean) ?? []),
      ],
      // On SQLite the server must open the database the user and agents were seeded into.
      ...(sqlite ? { dataDir: adminDir } : {}),
    });
    const load = fleetLoad([server.base()], token, TURNS);
    await clients.send({ ...load, clients: 2 });
    const cpuBefore = cpuMsOf(server.child.pid);
    const fromUs = monotonicMicros();
    const report = await clients.send({ ...load, clients: clientCount, conversations });
    const toUs = monotonicMicros();
    const cpuMs = cpuMsOf(server.child.pid) - cpuBefore;
    server.child.kill("SIGINT");
    await server.exited;
    const written = readdirSync(profileDir).find((name) => name.endsWith(".cpuprofile"));
    if (!written) throw new Error(`serve wrote no profile: ${server.output().slice(-500)}`);
    const out = join(
      ROOT,
      "bench",
      "results",
      `fleet-${sqlite ? "sqlite-" : ""}c${clientCount}.cpuprofile`,
    );
    renameSync(join(profileDir, written), out);
    const profile = JSON.parse(readFileSync(out, "utf8")) as CpuProfile;
    console.log(
      `one fleet process, ${clientCount} clients: ${report.runs} runs at ${(report.runs / (report.wallMs / 1000)).toFixed(1)} runs/s, p50 ${report.p50Ms.toFixed(0)} ms, p99 ${report.p99Ms.toFixed(0)} ms; the process's CPU (user + system) ${(cpuMs / report.runs).toFixed(1)} ms a run`,
    );
    console.log(
      "(samples of the load only, start-up and warm-up left out, by wall clock: a thread the kernel took off the CPU counts where it stopped)",
    );
    console.log(summarizeProfile(profile, { fromUs, toUs }));
    console.log("\nself time by phase of a run (lib/profile-phases.ts):");
    for (const line of phaseLines(profile, { fromUs, toUs })) console.log(line);
    console.log(`\nwrote ${out} (the load: ${fromUs}–${toUs} µs of the profile's clock)`);
  } finally {
    clients.stop();
    for (const server of servers) server.child.kill("SIGKILL");
    await Promise.all(servers.map((server) => server.exited));
    await fake.close();
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
    stopPostgres();
  }
}

await main();
