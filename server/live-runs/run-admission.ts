import { performance } from "node:perf_hooks";

/** How {@link RunAdmission} decides (see its comment). */
export interface RunAdmissionOptions {
  /** Runs always admitted at once, however busy the loop (default 4). */
  floor?: number;
  /** Most runs running at once (default 256). */
  ceiling?: number;
  /** Event-loop utilization (0–1) above which no run past the floor is admitted (default 0.9). */
  busyAbove?: number;
  /** How often the loop's utilization is sampled while runs wait, in ms (default 50). */
  sampleMs?: number;
  /** The utilization since the last call (tests pass their own). */
  utilization?: () => number;
}

/**
 * Admits this process's runs to its event loop in the order they arrived.
 *
 * Every run of one process shares one event loop. Left alone, a loop saturated by N runs serves
 * each new request only after a turn of all the others' work, and starts it late: measured at 32
 * clients, a request waited 0.27 s (p50) to 3 s (p99) in its socket before the server read it,
 * and the p99 latency was 3–4× the p50 (bench/README.md, "Scenario: cpu"). Here a run past the
 * `floor` is admitted only while the loop has time to spare (its utilization over the last
 * sample at most `busyAbove`), a few per sample, so the loop stays short enough to read new
 * requests at once; the others wait in arrival order. A loop that is not busy (runs waiting on
 * their models, as real models keep them) admits a burst within a few samples, up to `ceiling`.
 */
export class RunAdmission {
  readonly #floor: number;
  readonly #ceiling: number;
  readonly #busyAbove: number;
  readonly #sampleMs: number;
  readonly #utilization: () => number;
  #active = 0;
  readonly #waiting: { admit: () => void }[] = [];
  #timer: NodeJS.Timeout | undefined;

  constructor(options: RunAdmissionOptions = {}) {
    this.#floor = options.floor ?? 4;
    this.#ceiling = Math.max(this.#floor, options.ceiling ?? 256);
    this.#busyAbove = options.busyAbove ?? 0.9;
    this.#sampleMs = options.sampleMs ?? 50;
    this.#utilization = options.utilization ?? loopUtilization();
  }

  /** Runs running now, and runs waiting for their turn. */
  get counts(): { active: number; waiting: number } {
    return { active: this.#active, waiting: this.#waiting.length };
  }

  /**
   * Resolves once the run may go on, with the function that gives its place back (call it once,
   * when the run is over). `onWait` is called when the run has to wait. A run whose `signal`
   * aborts while it waits goes on at once: it only has to stop, which its own run does (and
   * records) as for any cancelled run.
   */
  async enter(signal?: AbortSignal, onWait?: () => void): Promise<() => void> {
    if (signal?.aborted || (this.#waiting.length === 0 && this.#active < this.#floor)) {
      return this.#admitOne();
    }
    return new Promise((resolve) => {
      const entry = {
        admit: () => {
          signal?.removeEventListener("abort", onAbort);
          resolve(this.#admitOne());
        },
      };
      const onAbort = () => {
        const at = this.#waiting.indexOf(entry);
        if (at >= 0) this.#waiting.splice(at, 1);
        entry.admit();
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      this.#waiting.push(entry);
      onWait?.();
      this.#startSampling();
    });
  }

  #admitOne(): () => void {
    this.#active += 1;
    let left = false;
    return () => {
      if (left) return;
      left = true;
      this.#active -= 1;
      // A place below the floor is given at once; above it, the next sample decides.
      this.#admitBelowFloor();
    };
  }

  /** Admits the first waiting runs while there is a place below the floor. */
  #admitBelowFloor(): void {
    while (this.#waiting.length > 0 && this.#active < this.#floor) this.#waiting.shift()?.admit();
  }

  /**
   * Samples the loop while runs wait; stops once none do. A sample with time to spare admits
   * up to `floor` more (below the ceiling): few enough that the next sample shows what they
   * cost, enough that a loop whose runs wait on their models takes a burst in a few samples.
   */
  #startSampling(): void {
    if (this.#timer) return;
    this.#utilization();
    this.#timer = setInterval(() => {
      const spare = this.#utilization() <= this.#busyAbove;
      this.#admitBelowFloor();
      for (let admitted = 0; spare && admitted < this.#floor; admitted += 1) {
        if (this.#waiting.length === 0 || this.#active >= this.#ceiling) break;
        this.#waiting.shift()?.admit();
      }
      if (this.#waiting.length === 0) {
        clearInterval(this.#timer);
        this.#timer = undefined;
      }
    }, this.#sampleMs);
    this.#timer.unref();
  }
}

/** The event loop's utilization since the previous call (`performance.eventLoopUtilization`). */
function loopUtilization(): () => number {
  let last = performance.eventLoopUtilization();
  return () => {
    const now = performance.eventLoopUtilization();
    const { utilization } = performance.eventLoopUtilization(now, last);
    last = now;
    return utilization;
  };
}
