/**
 * `npm run bench:profile-cpu -- [clients] [conversations]`: where our server spends its CPU under
 * the cpu scenario's load (`scenarios/cpu.ts`: SDK clients, a `runs.wait` and a `runs.stream`
 * turn each, `boss` calling `researcher` and `reviewer`, a 50 ms model). Starts one `serve`
 * process on SQLite under the V8 profiler (`node --cpu-prof`, plus `PROFILE_NODE_ARGS`), warms it
 * up, runs `clients` clients (default 8) of `conversations` conversations each (default 8),
 * stops it with SIGINT (the profile is written as it exits) and prints, for the load alone, the
 * process's CPU per run and the time by phase of a run, by package and by function. The raw
 * profile goes to `bench/results/` for Chrome's or VS Code's profile viewer.
 */
import { readdirSync, readFileSync, renameSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { CpuLoadCommand } from "./lib/cpu-client.js";
import { cpuMsOf } from "./lib/cpu-process-tree.js";
import { CPU_SUBAGENTS, startOurs } from "./lib/cpu-servers.js";
import type { LoadReport } from "./lib/load-client.js";
import { ClientProcess } from "./lib/load-client-process.js";
import { phaseLines } from "./lib/profile-phases.js";
import { type CpuProfile, monotonicMicros, summarizeProfile } from "./lib/profile-summary.js";
import { startTokenModel } from "./lib/token-model-server.js";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const CLIENT_SCRIPT = fileURLToPath(new URL("./lib/cpu-client.ts", import.meta.url));

async function main(): Promise<void> {
  const clientCount = Number(process.argv[2] ?? 8);
  const conversations = Number(process.argv[3] ?? 8);
  if (!Number.isInteger(clientCount) || clientCount < 1 || !Number.isInteger(conversations)) {
    console.error("usage: npm run bench:profile-cpu -- [clients] [conversations]");
    process.exit(2);
  }
  const profileDir = await mkdtemp(join(tmpdir(), "bench-cpu-profile-"));
  const model = await startTokenModel({ latencyMs: 50, tokens: 20, subagents: CPU_SUBAGENTS });
  const clients = new ClientProcess<CpuLoadCommand, LoadReport>(CLIENT_SCRIPT);
  const extra = process.env.PROFILE_NODE_ARGS?.split(" ").filter(Boolean) ?? [];
  const server = await startOurs(model.url, "sqlite", 1, [
    "--cpu-prof",
    `--cpu-prof-dir=${profileDir}`,
    ...extra,
  ]);
  try {
    const load = (count: number, each: number): CpuLoadCommand => ({
      bases: server.bases,
      apiKey: server.apiKey,
      assistantId: server.assistantId,
      clients: count,
      conversations: each,
      tokens: 20,
      subagents: CPU_SUBAGENTS,
    });
    await clients.send(load(4, 1));
    const processes = server.processes();
    const cpuBefore = cpuMsOf(processes);
    const fromUs = monotonicMicros();
    const report = await clients.send(load(clientCount, conversations));
    const toUs = monotonicMicros();
    const cpuMs = cpuMsOf(processes) - cpuBefore;
    for (const pid of server.servingPids) process.kill(pid, "SIGINT");
    await new Promise((resolve) => setTimeout(resolve, 3000));
    const written = readdirSync(profileDir).find((name) => name.endsWith(".cpuprofile"));
    if (!written) throw new Error("serve wrote no profile");
    const out = join(ROOT, "bench", "results", `cpu-c${clientCount}.cpuprofile`);
    renameSync(join(profileDir, written), out);
    const profile = JSON.parse(readFileSync(out, "utf8")) as CpuProfile;
    console.log(
      `ours, ${clientCount} clients: ${report.runs} runs (${report.errors.length} errors) at ${(report.runs / (report.wallMs / 1000)).toFixed(1)} runs/s, p50 ${report.p50Ms.toFixed(0)} ms, p99 ${report.p99Ms.toFixed(0)} ms; CPU (user + system) ${(cpuMs / report.runs).toFixed(1)} ms a run`,
    );
    console.log("\nself time by phase of a run (lib/profile-phases.ts):");
    for (const line of phaseLines(profile, { fromUs, toUs })) console.log(line);
    console.log(`\n${summarizeProfile(profile, { fromUs, toUs })}`);
    console.log(`\nwrote ${out} (the load: ${fromUs}–${toUs} µs of the profile's clock)`);
  } finally {
    clients.stop();
    await server.stop();
    await model.close();
    await rm(profileDir, { recursive: true, force: true });
  }
}

await main();
