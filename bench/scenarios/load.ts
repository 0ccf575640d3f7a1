import { createServer } from "../../server/app.js";
import type { LoadReport } from "../lib/load-client.js";
import { ClientProcess } from "../lib/load-client-process.js";
import { LOAD_HEADERS, loadCells } from "../lib/load-row.js";
import { BenchModel } from "../lib/model.js";
import type { Scenario, TargetCheck } from "../lib/scenario.js";
import { childReply, fanOutInput, mainReply } from "../lib/scripts.js";
import { leastSquares } from "../lib/stats.js";
import { MAIN_SLUG, type OurSystem, openOurs, UID } from "../lib/systems.js";
import { fmt, type Table } from "../lib/table.js";
import { collectGarbage } from "../lib/timing.js";

const LATENCY_MS = 50;
/** Turns per conversation; each turn makes one task call. */
const TURNS = 3;
const MiB = 1024 * 1024;
/** Finished runs the server keeps in memory (`MAX_FINISHED_RUNS` in server/live-runs/run-registry.ts). */
const RETAINED_RUNS = 500;

interface LevelResult {
  clients: number;
  conversations: number;
  runs: number;
  errors: number;
  errorSamples: string[];
  wallMs: number;
  runsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  peakRssMiB: number;
}

/**
 * The load scenario: the HTTP service (createServer on an ephemeral port, SQLite store and saver in
 * a temp data dir) with a 50 ms model; N concurrent clients each run conversations of 3 turns
 * (`POST /threads`, then `POST /threads/:id/runs/wait` per turn), one task call per turn. Then
 * repeated rounds of 32 clients with the heap measured after a full GC after each.
 */
export const loadScenario: Scenario = {
  name: "load",
  title: "Service load (HTTP, 50 ms model)",
  async run({ quick }) {
    const levels: [number, number][] = quick
      ? [
          [1, 2],
          [8, 1],
          [32, 1],
        ]
      : [
          [1, 8],
          [8, 3],
          [32, 2],
        ];
    const rounds = quick ? 2 : 12;
    const main = new BenchModel("main", mainReply, { latencyMs: LATENCY_MS });
    const child = new BenchModel("child", childReply, { latencyMs: LATENCY_MS });
    const ours = (await openOurs({
      saver: "sqlite",
      store: "data-dir",
      mainModel: main,
      childModel: child,
    })) as OurSystem;
    const server = await createServer(ours.runtime);
    const clients = new ClientProcess();
    try {
      const base = await server.app.listen({ host: "127.0.0.1", port: 0 });
      await ours.runtime.users.add(UID);
      const { token } = await ours.runtime.users.issueToken(UID);
      const target = { base, token };
      // Warm-up: compile the graphs and JIT the paths once.
      const warm = await level(clients, target, 2, 1);
      if (warm.errors > 0) throw new Error(`load warm-up failed: ${warm.errorSamples.join("; ")}`);

      collectGarbage();
      const rssBeforeMiB = process.memoryUsage().rss / MiB;
      const results: LevelResult[] = [];
      for (const [clientCount, conversations] of levels) {
        results.push(await level(clients, target, clientCount, conversations));
      }

      const memory: { round: number; runsSoFar: number; heapMiB: number; rssMiB: number }[] = [];
      let runsSoFar = warm.runs + results.reduce((sum, r) => sum + r.runs, 0);
      let roundErrors = 0;
      for (let round = 1; round <= rounds; round += 1) {
        const result = await level(clients, target, 32, 1);
        roundErrors += result.errors;
        runsSoFar += result.runs;
        collectGarbage();
        const usage = process.memoryUsage();
        memory.push({
          round,
          runsSoFar,
          heapMiB: usage.heapUsed / MiB,
          rssMiB: usage.rss / MiB,
        });
      }
      const secondHalf = memory.slice(Math.floor(memory.length / 2));
      const heapFit = leastSquares(
        secondHalf.map((m) => m.round),
        secondHalf.map((m) => m.heapMiB),
      );
      const firstOfHalf = secondHalf[0]?.heapMiB ?? Number.NaN;
      const lastHeap = memory.at(-1)?.heapMiB ?? Number.NaN;
      const halfGrowth = (lastHeap - firstOfHalf) / firstOfHalf;
      const gcAvailable = typeof (globalThis as { gc?: unknown }).gc === "function";
      // Until the server's run registry is full (it keeps the last 500 finished runs) the heap
      // grows by design: judge only rounds measured once it was full.
      const pastRegistryCap =
        secondHalf.length >= 2 && (secondHalf[0]?.runsSoFar ?? 0) >= RETAINED_RUNS;

      const loadTable: Table = {
        title: `Service load: ${TURNS}-turn conversations (one task call per turn), model ${LATENCY_MS} ms per call`,
        headers: ["clients", "conversations", ...LOAD_HEADERS, "peak RSS MiB"],
        rows: results.map((r) => [
          String(r.clients),
          String(r.conversations),
          ...loadCells(r),
          fmt(r.peakRssMiB, 0),
        ]),
        notes: [
          `a run = one POST /threads/:id/runs/wait (3 model calls of ${LATENCY_MS} ms on the critical path: main, child, main); peak RSS of the server process, sampled every 25 ms (${fmt(rssBeforeMiB, 0)} MiB after the warm-up, before the first level); the clients run in a separate process.`,
        ],
      };
      const memoryTable: Table = {
        title: `Memory across repeated rounds (32 clients × 1 conversation each), heap after a full GC${gcAvailable ? "" : " (no --expose-gc: not collected)"}`,
        headers: ["round", "runs so far", "heap MiB", "RSS MiB"],
        rows: memory.map((m) => [
          String(m.round),
          String(m.runsSoFar),
          fmt(m.heapMiB, 1),
          fmt(m.rssMiB, 0),
        ]),
        notes: [
          `second half of the rounds: heap slope ${fmt(heapFit.slope * 1024, 0)} KiB/round, growth ${fmt(halfGrowth * 100, 1)}%; the server keeps the last ${RETAINED_RUNS} finished runs (server/live-runs/run-registry.ts), so the heap grows until then.`,
        ],
      };
      const errors = results.reduce((sum, r) => sum + r.errors, 0) + roundErrors;
      const targets: TargetCheck[] = [
        {
          target: "zero errors under load",
          met: errors === 0,
          detail: `${errors} errors in ${runsSoFar} runs${
            errors > 0 ? `: ${results.flatMap((r) => r.errorSamples).join("; ")}` : ""
          }`,
        },
        {
          target: "memory flat across repeated runs",
          met: gcAvailable && pastRegistryCap ? halfGrowth < 0.03 : undefined,
          detail: !gcAvailable
            ? "run with node --expose-gc (npm run bench does)"
            : !pastRegistryCap
              ? `not judged: too few runs (${runsSoFar}) to pass the ${RETAINED_RUNS} finished runs the server keeps (run the full bench)`
              : `heap after GC ${fmt(memory[0]?.heapMiB, 1)} → ${fmt(lastHeap, 1)} MiB over ${rounds} rounds; last half ${fmt(halfGrowth * 100, 1)}% (${fmt(heapFit.slope * 1024, 0)} KiB/round)`,
        },
      ];
      return {
        tables: [loadTable, memoryTable],
        data: {
          latencyMs: LATENCY_MS,
          turns: TURNS,
          rssBeforeMiB,
          results,
          memory,
          heapFit,
          halfGrowth,
        },
        targets,
      };
    } finally {
      clients.stop();
      await server.runs.cancelAll();
      await server.app.close();
      await ours.dispose();
    }
  },
};

/**
 * `clients` concurrent clients (in the client process), each running `conversations`
 * conversations one after another, while this process samples its own RSS.
 */
async function level(
  clients: ClientProcess,
  target: { base: string; token: string },
  clientCount: number,
  conversations: number,
): Promise<LevelResult> {
  let peakRss = process.memoryUsage().rss;
  const sampler = setInterval(() => {
    peakRss = Math.max(peakRss, process.memoryUsage().rss);
  }, 25);
  let report: LoadReport;
  try {
    report = await clients.send({
      ...target,
      assistantId: MAIN_SLUG,
      input: fanOutInput(1),
      clients: clientCount,
      conversations,
      turns: TURNS,
    });
  } finally {
    clearInterval(sampler);
  }
  peakRss = Math.max(peakRss, process.memoryUsage().rss);
  return {
    clients: clientCount,
    conversations: clientCount * conversations,
    runs: report.runs,
    errors: report.errors.length,
    errorSamples: report.errors.slice(0, 3),
    wallMs: report.wallMs,
    runsPerSecond: report.runs / (report.wallMs / 1000),
    p50Ms: report.p50Ms,
    p99Ms: report.p99Ms,
    peakRssMiB: peakRss / MiB,
  };
}
