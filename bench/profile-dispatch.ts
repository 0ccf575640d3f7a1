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
import { childReply, fanOutInput, mainReply } from "./lib/scripts.js";
import { openOurs, SAVERS, type SaverName } from "./lib/systems.js";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");

/** Where a frame's code lives: a package, one of our files, Node itself or V8. */
function place(url: string): string {
  if (url === "") return "(V8: GC, idle, native)";
  const packaged = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (packaged?.[1]) return packaged[1];
  if (url.startsWith("node:")) return "node (runtime)";
  const ours = url.replace(`file://${ROOT}/`, "");
  return ours === url ? url : `ours: ${ours}`;
}

function top(counter: Map<string, number>, total: number, n: number): string[] {
  return [...counter]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([key, us]) => `${((100 * us) / total).toFixed(1).padStart(5)}%  ${key}`);
}

function summarize(profile: Profile): string {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes)
    for (const child of node.children ?? []) parent.set(child, node.id);
  const self = new Map<number, number>();
  for (const [i, id] of profile.samples.entries()) {
    self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
  }
  const total = [...self.values()].reduce((a, b) => a + b, 0);
  const byPlace = new Map<string, number>();
  const byFunction = new Map<string, number>();
  const belowOurs = new Map<string, number>();
  for (const [id, us] of self) {
    const node = byId.get(id);
    if (!node) continue;
    const { functionName, url, lineNumber } = node.callFrame;
    const where = place(url);
    byPlace.set(where, (byPlace.get(where) ?? 0) + us);
    const fn = `${functionName || "(anonymous)"} ${where}:${lineNumber + 1}`;
    byFunction.set(fn, (byFunction.get(fn) ?? 0) + us);
    // Inclusive time of our files: each of our files on the stack once per sample.
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const frame = byId.get(at);
      const file = frame ? place(frame.callFrame.url) : "";
      if (file.startsWith("ours: ") && !seen.has(file)) {
        seen.add(file);
        belowOurs.set(file, (belowOurs.get(file) ?? 0) + us);
      }
    }
  }
  return [
    `sampled ${(total / 1000).toFixed(0)} ms`,
    "",
    "self time by package or file:",
    ...top(byPlace, total, 20),
    "",
    "self time by function:",
    ...top(byFunction, total, 25),
    "",
    "time with one of our files on the stack (synchronous part only; awaits cut the stack):",
    ...top(belowOurs, total, 20),
  ].join("\n");
}

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
    const { profile } = (await session.post("Profiler.stop")) as unknown as { profile: Profile };
    session.disconnect();
    const out = join(ROOT, "bench", "results", `dispatch-${saver}-k${k}.cpuprofile`);
    mkdirSync(dirname(out), { recursive: true });
    writeFileSync(out, JSON.stringify(profile));
    console.log(
      `ours, ${saver} saver, K = ${k}: ${runs} runs in ${elapsed.toFixed(0)} ms (${(elapsed / runs).toFixed(2)} ms a run)`,
    );
    console.log(summarize(profile));
    console.log(`\nwrote ${out}`);
  } finally {
    await ours.dispose();
    stopPostgres();
  }
}

await main();
