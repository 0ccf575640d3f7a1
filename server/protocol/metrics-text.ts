import type { HealthMetrics } from "../../runs/health.js";
import type { EventLoopDelaySnapshot } from "./event-loop-delay.js";

/** One metric family: its name, type, help text and samples (labels → value). */
interface Family {
  name: string;
  type: "counter" | "gauge";
  help: string;
  samples: { labels?: Record<string, string>; value: number }[];
}

function sample(name: string, labels: Record<string, string> | undefined, value: number): string {
  const label = labels
    ? `{${Object.entries(labels)
        .map(
          ([key, v]) => `${key}="${v.replace(/[\\"\n]/g, (c) => (c === "\n" ? "\\n" : `\\${c}`))}"`,
        )
        .join(",")}}`
    : "";
  return `${name}${label} ${Number.isFinite(value) ? value : "NaN"}`;
}

/**
 * `metrics` in the Prometheus text exposition format (version 0.0.4): one `# HELP` and
 * `# TYPE` line per family, then its samples. Per process: a scraper sums the fleet itself.
 */
/** A fleet process's queue figures (PostgreSQL): its worker's counts and the shared queue. */
export interface QueueMetrics {
  /** Runs this process's worker claimed, finished (success or interrupted) and failed. */
  claimed: number;
  finished: number;
  failed: number;
  /** Queued runs this process runs now. */
  active: number;
  /** Runs waiting in the queue (every process's), and the age of the oldest (0 when none); null when the store did not answer. */
  queue: { pending: number; oldestSeconds: number } | null;
}

export function prometheusText(
  metrics: HealthMetrics,
  queue?: QueueMetrics,
  eventLoop?: EventLoopDelaySnapshot,
): string {
  const families: Family[] = [
    {
      name: "subagent_graph_runs_started_total",
      type: "counter",
      help: "Runs this process started (thread claimed, lease taken); a queued run refused at its start counts, and ends in error.",
      samples: [{ value: metrics.runs.started }],
    },
    {
      name: "subagent_graph_runs_finished_total",
      type: "counter",
      help: "Runs this process ended, by how they ended.",
      samples: Object.entries(metrics.runs.finished).map(([status, value]) => ({
        labels: { status },
        value,
      })),
    },
    {
      name: "subagent_graph_runs_running",
      type: "gauge",
      help: "Runs executing in this process now.",
      samples: [{ value: metrics.runningHere }],
    },
    {
      name: "subagent_graph_store_up",
      type: "gauge",
      help: "1 when the store answered this scrape within 2 s, else 0 (and no store figures).",
      samples: [{ value: metrics.store ? 1 : 0 }],
    },
    ...(metrics.store
      ? ([
          {
            name: "subagent_graph_store_runs_running",
            type: "gauge",
            help: "Runs marked running in the store, whichever process runs them.",
            samples: [{ value: metrics.store.count }],
          },
          {
            name: "subagent_graph_store_oldest_running_run_age_seconds",
            type: "gauge",
            help: "Age of the oldest run marked running in the store (0 when none).",
            samples: [{ value: metrics.store.oldestSeconds }],
          },
        ] satisfies Family[])
      : []),
    {
      name: "process_uptime_seconds",
      type: "gauge",
      help: "Seconds since this runtime opened.",
      samples: [{ value: metrics.uptimeSeconds }],
    },
    {
      name: "process_resident_memory_bytes",
      type: "gauge",
      help: "Resident memory of this process.",
      samples: [{ value: metrics.residentMemoryBytes }],
    },
    ...(eventLoop ? eventLoopFamilies(eventLoop) : []),
    ...(queue ? queueFamilies(queue) : []),
  ];
  return `${families
    .flatMap((family) => [
      `# HELP ${family.name} ${family.help}`,
      `# TYPE ${family.name} ${family.type}`,
      ...family.samples.map((s) => sample(family.name, s.labels, s.value)),
    ])
    .join("\n")}\n`;
}

function queueFamilies(queue: QueueMetrics): Family[] {
  const families: Family[] = [
    {
      name: "subagent_graph_queue_runs_claimed_total",
      type: "counter",
      help: "Queued runs this process's worker claimed (a resumed run counts again).",
      samples: [{ value: queue.claimed }],
    },
    {
      name: "subagent_graph_queue_runs_finished_total",
      type: "counter",
      help: "Queued runs this process's worker ran to their end (success or interrupted).",
      samples: [{ value: queue.finished }],
    },
    {
      name: "subagent_graph_queue_runs_failed_total",
      type: "counter",
      help: "Queued runs this process's worker ran that ended in error.",
      samples: [{ value: queue.failed }],
    },
    {
      name: "subagent_graph_queue_runs_active",
      type: "gauge",
      help: "Queued runs this process's worker runs now.",
      samples: [{ value: queue.active }],
    },
  ];
  if (queue.queue) {
    families.push(
      {
        name: "subagent_graph_queue_depth",
        type: "gauge",
        help: "Runs waiting in the fleet's queue (every process's).",
        samples: [{ value: queue.queue.pending }],
      },
      {
        name: "subagent_graph_queue_oldest_pending_age_seconds",
        type: "gauge",
        help: "Age of the oldest run waiting in the queue (0 when none).",
        samples: [{ value: queue.queue.oldestSeconds }],
      },
    );
  }
  return families;
}

function eventLoopFamilies(delay: EventLoopDelaySnapshot): Family[] {
  const gauge = (name: string, what: string, value: number): Family => ({
    name,
    type: "gauge",
    help: `${what} delay of this process's event loop since the previous scrape, in seconds.`,
    samples: [{ value }],
  });
  return [
    gauge("nodejs_eventloop_lag_p50_seconds", "Median", delay.p50Seconds),
    gauge("nodejs_eventloop_lag_p99_seconds", "99th percentile", delay.p99Seconds),
    gauge("nodejs_eventloop_lag_max_seconds", "Largest", delay.maxSeconds),
  ];
}
