import { fileURLToPath } from "node:url";
import { type CellPlan, type CellSample, type CpuClients, measureCell } from "../lib/cpu-cell.js";
import type { CpuLoadCommand } from "../lib/cpu-client.js";
import { type Comparison, cpuTables, cpuTargets, summarize } from "../lib/cpu-report.js";
import {
  CPU_SUBAGENTS,
  type CpuServer,
  RUN_SLOTS,
  startDev,
  startOurs,
} from "../lib/cpu-servers.js";
import type { LoadReport } from "../lib/load-client.js";
import { ClientProcess } from "../lib/load-client-process.js";
import { freshPostgresDatabase } from "../lib/postgres.js";
import type { BenchOptions, Scenario } from "../lib/scenario.js";
import { rotated } from "../lib/timing.js";
import { startTokenModel } from "../lib/token-model-server.js";

/** Every model call's wait before its first chunk, as the other server scenarios' model. */
const LATENCY_MS = 50;
/** Words in every answer (the main agent's and each subagent's), one streamed token each. */
const TOKENS = 20;
/** Concurrent clients of the cells. */
const LEVELS = [1, 8, 32];
/** The SDK client module, forked (`cpu-client.ts`). */
const CLIENT_SCRIPT = fileURLToPath(new URL("../lib/cpu-client.ts", import.meta.url));

/** Conversations (2 runs each) per client at each level: ≥ 16, 64 and 128 runs a cell. */
function conversationsAt(clients: number, quick: boolean): number {
  const runs = quick ? { 1: 8, 8: 32, 32: 64 } : { 1: 16, 8: 64, 32: 128 };
  return Math.ceil((runs[clients as keyof typeof runs] ?? 2 * clients) / (2 * clients));
}

/** The two systems of a mode, subject first, and how each starts. */
function systemsOf(
  options: BenchOptions,
  modelUrl: string,
): { comparison: Comparison; start: Record<string, () => Promise<CpuServer>> } {
  if (options.fleet > 1) {
    const fleet = `ours ×${options.fleet}`;
    return {
      comparison: { subject: fleet, reference: "ours ×1", saver: "postgres", fleet: options.fleet },
      start: {
        [fleet]: () => startOurs(modelUrl, "postgres", options.fleet),
        "ours ×1": () => startOurs(modelUrl, "postgres", 1),
      },
    };
  }
  return {
    comparison: { subject: "ours", reference: "dev server", saver: options.saver, fleet: 1 },
    start: {
      ours: () => startOurs(modelUrl, options.saver, 1),
      "dev server": () => startDev(modelUrl),
    },
  };
}

/**
 * The cpu scenario (issue 42): CPU per delegating run, side by side with the official dev server.
 * Both servers run the same graph on the same 50 ms token-streaming model: `boss` calls
 * `researcher` and `reviewer` in one AI message (two parallel `task` calls), then answers. SDK
 * clients in a process of their own run 2-turn conversations (turn 1 `runs.wait`, turn 2
 * `runs.stream`), N = 1, 8 and 32 at once; each cell runs on fresh servers after a warm-up, the
 * servers alternating, 3 times. `--saver postgres` runs ours on PostgreSQL; `--fleet 2` compares
 * a 2-process fleet with one process instead (the dev server has no fleet).
 */
export const cpuScenario: Scenario = {
  name: "cpu",
  title: "CPU per delegating run: ours and the dev server (SDK clients, 50 ms model)",
  async run(options) {
    if (options.saver === "postgres" && !(await freshPostgresDatabase("cpu_probe"))) {
      return {
        tables: [],
        data: { skipped: "PostgreSQL is not installed" },
        targets: [
          { target: "cpu (postgres)", met: undefined, detail: "PostgreSQL is not installed" },
        ],
      };
    }
    const repetitions = options.quick ? 1 : 3;
    const model = await startTokenModel({
      latencyMs: LATENCY_MS,
      tokens: TOKENS,
      subagents: CPU_SUBAGENTS,
    });
    const clients: CpuClients = new ClientProcess<CpuLoadCommand, LoadReport>(CLIENT_SCRIPT);
    const { comparison, start } = systemsOf(options, model.url);
    const systems = [comparison.subject, comparison.reference];
    const samples: CellSample[] = [];
    try {
      let round = 0;
      for (let repetition = 1; repetition <= repetitions; repetition += 1) {
        for (const level of LEVELS) {
          // Alternate which system goes first, so neither always runs on the cooler machine.
          for (const system of rotated(systems, round)) {
            const plan: CellPlan = {
              system,
              clients: level,
              conversations: conversationsAt(level, options.quick),
              repetition,
              tokens: TOKENS,
              subagents: CPU_SUBAGENTS,
              start: start[system] ?? (() => Promise.reject(new Error(`no system ${system}`))),
            };
            samples.push(await measureCell(plan, clients));
          }
          round += 1;
        }
      }
    } finally {
      clients.stop();
      await model.close();
    }
    const summaries = summarize(samples, systems, LEVELS);
    const notes = [
      `a run = one turn of a 2-turn conversation on a new thread (turn 1 \`runs.wait\`, turn 2 \`runs.stream\` with streamMode ${'["values","updates","messages-tuple","custom"]'} and subgraphs, as the SDK's useStream), through the official SDK (one Client per user, retries off), in a client process of its own; each answer checked (the main agent's final text, one answer each from researcher and reviewer, called by two task calls in one AI message). 3 model calls of ${LATENCY_MS} ms to the first token a run, the subagents' in parallel; ${TOKENS} tokens an answer.`,
      `each cell: a fresh server, a warm-up of 4 conversations, then the load; ${repetitions} repetition(s), the systems alternating. runs/s, CPU and RSS: medians over the repetitions; p50/p99 over every run of the cell.`,
      "CPU ms/run: user + system time of the server's whole process tree (/proc/<pid>/stat, every thread) over the load ÷ runs; main thread: /proc/<pid>/task/<pid>/stat of the process serving HTTP and running the graphs (ours: serve; dev server: the node process tsx spawns, listening on the port; its CLI and tsx launcher count in the tree only).",
      `RSS: VmRSS summed over the tree, sampled every 25 ms; RSS / run in flight = (peak during the cell − RSS before it) ÷ clients. Run slots: SUBAGENT_WORKERS=${RUN_SLOTS} for ours, --n-jobs-per-worker ${RUN_SLOTS} for the dev server (both default to 10).`,
      ...(comparison.saver === "postgres"
        ? [
            "ours on PostgreSQL: its private cluster's processes (postmaster and backends) are timed too (postgres ms/run); ratios use server + postgres. The dev server keeps its own in-memory storage.",
          ]
        : []),
      ...(comparison.fleet > 1
        ? [
            `the dev server has no fleet: ${comparison.subject} (${comparison.fleet} serve processes on one PostgreSQL database, clients alternating between them) is compared with one process on the same saver and load. pickup = runs.claimed_at − runs.created_at; a process that is also a worker claims a run it is asked for in the request itself while it has a free slot, so an idle fleet's pickup is that statement's.`,
          ]
        : []),
    ];
    return {
      tables: cpuTables(summaries, comparison, LEVELS, notes),
      data: {
        latencyMs: LATENCY_MS,
        tokens: TOKENS,
        levels: LEVELS,
        repetitions,
        runSlots: RUN_SLOTS,
        comparison,
        summaries,
        samples,
      },
      targets: cpuTargets(summaries, comparison, LEVELS),
    };
  },
};
