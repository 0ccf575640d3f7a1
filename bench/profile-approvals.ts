/**
 * `node --expose-gc --import tsx bench/profile-approvals.ts [memory|sqlite|postgres] [turns] [profile]`:
 * where ours spends the approvals scenario's gated turn (`scenarios/approvals.ts`) beyond the
 * ungated one, at 0 ms per model call. Runs `turns` gated turns (pause, then resume) and ungated
 * turns in turn, after warm-up, and prints the median pause, resume and ungated run. With
 * `profile`, the resume runs alone are run under the V8 profiler and summarized by package and
 * function (the raw profile is written to `bench/results/`).
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";
import { freshThread, openOursApprovals } from "./lib/approvals.js";
import { stopPostgres } from "./lib/postgres.js";
import { type CpuProfile, summarizeProfile } from "./lib/profile-summary.js";
import { median } from "./lib/stats.js";
import { SAVERS, type SaverName } from "./lib/systems.js";
import { collectGarbage, timeMs } from "./lib/timing.js";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");

async function main(): Promise<void> {
  const saver = (process.argv[2] ?? "memory") as SaverName;
  const turns = Number(process.argv[3] ?? 60);
  const profiling = process.argv[4] === "profile";
  if (!SAVERS.includes(saver) || !Number.isInteger(turns)) {
    console.error("usage: bench/profile-approvals.ts [memory|sqlite|postgres] [turns] [profile]");
    process.exit(2);
  }
  const ours = await openOursApprovals(saver, 0);
  if (!ours) throw new Error(`${saver} is not available here`);
  const calls = countSaverCalls(ours.system.saver);
  try {
    for (let i = 0; i < 10; i += 1) {
      const thread = freshThread("warm");
      await ours.pause(thread);
      await ours.resume(thread);
      await ours.ungated(freshThread("warm"));
    }
    const pause: number[] = [];
    const resume: number[] = [];
    const ungated: number[] = [];
    const session = profiling ? new Session() : undefined;
    if (session) {
      session.connect();
      await session.post("Profiler.enable");
      await session.post("Profiler.setSamplingInterval", { interval: 100 });
    }
    if (session) {
      // The pauses first, then the resumes alone under the profiler (started once: starting and
      // stopping it around each run costs more than the run).
      const threads: string[] = [];
      for (let i = 0; i < turns; i += 1) {
        const thread = freshThread("gated");
        calls.phase = "pause";
        pause.push(await timeMs(() => ours.pause(thread)));
        threads.push(thread);
      }
      collectGarbage();
      await session.post("Profiler.start");
      calls.phase = "resume";
      for (const thread of threads) resume.push(await timeMs(() => ours.resume(thread)));
      const { profile } = (await session.post("Profiler.stop")) as unknown as {
        profile: CpuProfile;
      };
      profiles.push(profile);
      calls.phase = undefined;
    }
    for (let i = 0; i < (session ? 0 : turns); i += 1) {
      collectGarbage();
      const thread = freshThread("gated");
      pause.push(await phased(calls, "pause", () => ours.pause(thread)));
      resume.push(await phased(calls, "resume", () => ours.resume(thread)));
      ungated.push(await phased(calls, "ungated", () => ours.ungated(freshThread("ungated"))));
    }
    const ms = (values: number[]) => (values.length ? median(values).toFixed(1) : "n/a");
    console.log(
      `ours, ${saver}, 0 ms model, ${turns} turns (median ms): pause ${ms(pause)}, resume ${ms(resume)}, pause + resume ${ms(pause.map((p, i) => p + (resume[i] ?? 0)))}, ungated ${ms(ungated)}`,
    );
    console.log(
      `  CPU ms (median): ${[...calls.cpu].map(([phase, values]) => `${phase} ${ms(values)}`).join(", ")}`,
    );
    console.log("run parts (median ms): before the loop's load, loop until its last put, after");
    for (const [phase, parts] of calls.parts) {
      console.log(
        `  ${phase.padEnd(8)} ${parts.map((values) => ms(values).padStart(6)).join(" ")}`,
      );
    }
    console.log("saver calls a turn (count, ms):");
    for (const [key, { count, ms: spent }] of [...calls.totals].sort()) {
      console.log(
        `  ${key.padEnd(24)} ${(count / turns).toFixed(1).padStart(6)} ${(spent / turns).toFixed(2).padStart(7)}`,
      );
    }
    if (session) {
      session.disconnect();
      const merged = profiles[0] as CpuProfile;
      const out = join(ROOT, "bench", "results", `approvals-resume-${saver}.cpuprofile`);
      mkdirSync(dirname(out), { recursive: true });
      writeFileSync(out, JSON.stringify(profiles[0]));
      console.log(summarizeProfile(merged));
      console.log(`\nwrote ${out} (the first resume's profile)`);
    }
  } finally {
    await ours.dispose();
    stopPostgres();
  }
}

const profiles: CpuProfile[] = [];

/** One run of `phase`, timed, and split at the root loop's load and last put. */
async function phased(
  calls: ReturnType<typeof countSaverCalls>,
  phase: string,
  run: () => Promise<unknown>,
): Promise<number> {
  calls.phase = phase;
  calls.marks = {};
  const cpu = process.cpuUsage();
  const started = performance.now();
  await run();
  const ended = performance.now();
  const used = process.cpuUsage(cpu);
  calls.phase = undefined;
  const cpuMs = calls.cpu.get(phase) ?? [];
  cpuMs.push((used.user + used.system) / 1000);
  calls.cpu.set(phase, cpuMs);
  const { loop = started, lastPut = ended } = calls.marks;
  const parts = calls.parts.get(phase) ?? [[], [], []];
  parts[0]?.push(loop - started);
  parts[1]?.push(lastPut - loop);
  parts[2]?.push(ended - lastPut);
  calls.parts.set(phase, parts);
  return ended - started;
}
let traced = 0;

/**
 * Counts the saver's calls and the time until each settles (a `list` until its iterator ends),
 * by phase of the turn.
 */
function countSaverCalls(saver: BaseCheckpointSaver) {
  const state = {
    phase: undefined as string | undefined,
    totals: new Map<string, { count: number; ms: number }>(),
    /** When the root graph's loop loaded its checkpoint, and its last checkpoint's put began. */
    marks: {} as { loop?: number; lastPut?: number },
    parts: new Map<string, number[][]>(),
    /** CPU time (user + system) of each run, by phase. */
    cpu: new Map<string, number[]>(),
  };
  const add = (name: string, ms: number) => {
    if (!state.phase) return;
    const key = `${state.phase} ${name}`;
    const entry = state.totals.get(key) ?? { count: 0, ms: 0 };
    entry.count += 1;
    entry.ms += ms;
    state.totals.set(key, entry);
  };
  const target = saver as unknown as Record<string, (...args: unknown[]) => unknown>;
  for (const name of ["getTuple", "getTupleForWrites", "put", "putWrites"]) {
    const original = target[name]?.bind(saver);
    if (!original) continue;
    target[name] = async (...args: unknown[]) => {
      if (process.env.TRACE_SAVER && state.phase === process.env.TRACE_SAVER && traced < 40) {
        traced += 1;
        const config = args[0] as { configurable?: Record<string, unknown> };
        const frames = (new Error().stack ?? "")
          .split("\n")
          .slice(2)
          .filter((line) => !line.includes("node:"))
          .slice(0, 7)
          .map((line) => line.trim().replace(`file://${ROOT}/`, ""));
        console.log(
          `${name} ${String(config?.configurable?.thread_id).slice(0, 50)} ns=${String(config?.configurable?.checkpoint_ns)}\n    ${frames.join("\n    ")}`,
        );
      }
      const started = performance.now();
      const config = args[0] as { configurable?: Record<string, unknown> };
      const thread = String(config?.configurable?.thread_id);
      if (state.phase && !thread.includes("_sub_")) {
        if (name === "getTuple" && config.configurable?.checkpoint_ns === undefined) {
          state.marks.loop ??= started;
        }
        if (name === "put") state.marks.lastPut = started;
      }
      try {
        return await original(...args);
      } finally {
        add(name, performance.now() - started);
      }
    };
  }
  for (const name of ["list", "listForWrites"]) {
    const list = target[name]?.bind(saver) as
      | ((...args: unknown[]) => AsyncGenerator<unknown>)
      | undefined;
    if (!list) continue;
    target[name] = async function* (...args: unknown[]) {
      const started = performance.now();
      try {
        yield* list(...args);
      } finally {
        add(name, performance.now() - started);
      }
    } as unknown as (...args: unknown[]) => unknown;
  }
  return state;
}

await main();
