/**
 * `npm run bench:profile -- [memory|sqlite|postgres] [K] [runs]`: where ours spends a delegating
 * run's time. Runs the dispatch scenario's workload (a main agent making K parallel `task` calls
 * to a subagent that answers at once, default K = 4, 200 runs, memory saver) under the V8
 * profiler, after warm-up runs, and prints the self time by package and by function, plus the
 * time below each of our own files. Writes the raw profile to `bench/results/` for Chrome's or
 * VS Code's profile viewer.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { BenchModel } from "./lib/model.js";
import { stopPostgres } from "./lib/postgres.js";
import { type CpuProfile, summarizeProfile } from "./lib/profile-summary.js";
import { childReply, fanOutInput, mainReply } from "./lib/scripts.js";
import { openOurs, SAVERS, type SaverName } from "./lib/systems.js";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");

async function main(): Promise<void> {
  const saver = (process.argv[2] ?? "memory") as SaverName;
  const k = Number(process.argv[3] ?? 4);
  const runs = Number(process.argv[4] ?? 200);
  if (!SAVERS.includes(saver) || !Number.isInteger(k) || k < 0 || !Number.isInteger(runs)) {
    console.error("usage: npm run bench:profile -- [memory|sqlite|postgres] [K] [runs]");
    process.exit(2);
  }
  const ours = await openOurs({
    saver,
    mainModel: new BenchModel("main", mainReply),
    childModel: new BenchModel("child", childReply),
    limits: { max_parallel_subagents: 16 },
  });
  if (!ours) throw new Error("PostgreSQL is not installed");
  try {
    for (let i = 0; i < 20; i += 1) await ours.run(fanOutInput(k));
    const session = new Session();
    session.connect();
    await session.post("Profiler.enable");
    await session.post("Profiler.setSamplingInterval", { interval: 200 });
    await session.post("Profiler.start");
    const started = performance.now();
    for (let i = 0; i < runs; i += 1) await ours.run(fanOutInput(k));
    const elapsed = performance.now() - started;
    // node:inspector's types give `Profiler.stop` an untyped result; its payload is a V8 profile.
    const { profile } = (await session.post("Profiler.stop")) as unknown as { profile: CpuProfile };
    session.disconnect();
    const out = join(ROOT, "bench", "results", `dispatch-${saver}-k${k}.cpuprofile`);
    mkdirSync(dirname(out), { recursive: true });
    writeFileSync(out, JSON.stringify(profile));
    console.log(
      `ours, ${saver} saver, K = ${k}: ${runs} runs in ${elapsed.toFixed(0)} ms (${(elapsed / runs).toFixed(2)} ms a run)`,
    );
    console.log(summarizeProfile(profile));
    console.log(`\nwrote ${out}`);
  } finally {
    await ours.dispose();
    stopPostgres();
  }
}

await main();
