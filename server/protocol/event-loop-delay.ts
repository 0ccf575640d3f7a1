import { type IntervalHistogram, monitorEventLoopDelay } from "node:perf_hooks";

/** How often the event loop's delay is sampled, in ms (prom-client's default). */
const RESOLUTION_MS = 10;

/** The event loop's delay since the previous read, in seconds. */
export interface EventLoopDelaySnapshot {
  p50Seconds: number;
  p99Seconds: number;
  maxSeconds: number;
}

/**
 * How late this process's event loop runs what is due: a timer ticking every 10 ms records how
 * much later than asked it fired (unlike prom-client's `nodejs_eventloop_lag_*`, which report
 * the period with it, so an idle process shows 0 here, not 10 ms). Everything of a run, a
 * request and a queued run's claim waits its turn on that loop, so under load its delay is the
 * wait a fleet worker adds before it claims a run it was woken for (bench/README.md,
 * "Scenario: fleet"). Each read reports the time since the previous one and starts afresh, as
 * prom-client's gauges do.
 */
export class EventLoopDelay {
  readonly #histogram: IntervalHistogram = monitorEventLoopDelay({ resolution: RESOLUTION_MS });

  constructor() {
    this.#histogram.enable();
  }

  /** The delay since the previous read (0 when no sample was taken yet), then a fresh start. */
  read(): EventLoopDelaySnapshot {
    const histogram = this.#histogram;
    // A sample is the time between two ticks of the sampling timer: its period plus the delay.
    const seconds = (nanoseconds: number) =>
      histogram.count > 0 && Number.isFinite(nanoseconds)
        ? Math.max(0, nanoseconds / 1e6 - RESOLUTION_MS) / 1000
        : 0;
    const snapshot = {
      p50Seconds: seconds(histogram.percentile(50)),
      p99Seconds: seconds(histogram.percentile(99)),
      maxSeconds: seconds(histogram.max),
    };
    histogram.reset();
    return snapshot;
  }

  stop(): void {
    this.#histogram.disable();
  }
}
