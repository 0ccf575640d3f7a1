import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";
import { sql } from "kysely";
import { messageOf } from "../errors.js";
import type { Database } from "../store/database.js";
import type { RunCounts, RunMetrics } from "./run-metrics.js";
import type { RunningRuns } from "./running-runs.js";

/** One dependency's answer to a readiness probe. */
export interface ReadinessCheck {
  ok: boolean;
  /** How long it took to answer (or to give up), in milliseconds. */
  ms: number;
  /** Why it is not ready (never a password: URLs' credentials are masked). */
  error?: string;
}

/** Whether this runtime can serve runs now: its agent store and its checkpoint saver answer. */
export interface Readiness {
  ready: boolean;
  checks: { store: ReadinessCheck; checkpoints: ReadinessCheck };
}

/** This process's operational figures (the metrics endpoint renders them). */
export interface HealthMetrics {
  runs: RunCounts;
  /** Runs executing in this process now. */
  runningHere: number;
  /**
   * Runs marked running in the store, whichever process runs them, and the age of the oldest
   * (0 when none); null when the store did not answer within {@link PROBE_TIMEOUT_MS}.
   */
  store: { count: number; oldestSeconds: number } | null;
  uptimeSeconds: number;
  residentMemoryBytes: number;
}

/** Readiness and metrics of one runtime (`runtime.health`). */
export interface HealthApi {
  /** Probes the store and the saver, each bounded by {@link PROBE_TIMEOUT_MS}. */
  ready(): Promise<Readiness>;
  metrics(): Promise<HealthMetrics>;
}

/** A probe that has not answered in this long counts as failed (a load balancer's patience). */
export const PROBE_TIMEOUT_MS = 2_000;

/** A thread id no run can have (thread ids are checked on input), probed for reachability. */
const PROBE_THREAD = "__readiness_probe__";

/** `url://user:password@host` → `url://***@host`, in any text a driver put in an error. */
function masked(text: string): string {
  return text.replace(/\/\/[^/@\s]*@/g, "//***@");
}

async function probe(check: () => Promise<unknown>): Promise<ReadinessCheck> {
  const started = performance.now();
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`no answer within ${PROBE_TIMEOUT_MS} ms`)),
      PROBE_TIMEOUT_MS,
    );
  });
  try {
    await Promise.race([check(), timeout]);
    return { ok: true, ms: Math.round(performance.now() - started) };
  } catch (error) {
    const message = messageOf(error);
    return { ok: false, ms: Math.round(performance.now() - started), error: masked(message) };
  } finally {
    clearTimeout(timer);
  }
}

/** The health API over a runtime's store, saver and runs. */
export function createHealthApi(deps: {
  database: Database;
  saver: BaseCheckpointSaver;
  running: RunningRuns;
  metrics: RunMetrics;
}): HealthApi {
  const { database, saver, running, metrics } = deps;
  const startedAt = Date.now();
  return {
    async ready() {
      const [store, checkpoints] = await Promise.all([
        probe(() => sql`select 1`.execute(database.db)),
        probe(() =>
          saver.getTuple({ configurable: { thread_id: PROBE_THREAD, checkpoint_ns: "" } }),
        ),
      ]);
      return { ready: store.ok && checkpoints.ok, checks: { store, checkpoints } };
    },
    async metrics() {
      // The store's figures are left out, not failed, when it does not answer: the process's own
      // counters are what a scraper needs most then.
      let inStore: { count: number; oldestSeconds: number } | undefined;
      await probe(async () => {
        const row = await database.db
          .selectFrom("runs")
          .select((eb) => [
            eb.fn.countAll<number | string>().as("count"),
            eb.fn.min("created_at").as("oldest"),
          ])
          .where("status", "=", "running")
          .executeTakeFirst();
        const oldest = row?.oldest ? Date.parse(String(row.oldest)) : Number.NaN;
        inStore = {
          count: Number(row?.count ?? 0),
          oldestSeconds: Number.isNaN(oldest) ? 0 : Math.max(0, (Date.now() - oldest) / 1000),
        };
      });
      return {
        runs: metrics.counts(),
        runningHere: running.size,
        store: inStore ?? null,
        uptimeSeconds: (Date.now() - startedAt) / 1000,
        residentMemoryBytes: process.memoryUsage.rss(),
      };
    },
  };
}
