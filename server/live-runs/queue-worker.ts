import { messageOf } from "../../errors.js";
import type { Fleet } from "../../runs/fleet.js";
import type { ClaimedRun } from "../../store/run-queue.js";
import type { RunRegistry } from "./run-registry.js";

/** How a {@link QueueWorker} works. */
export interface QueueWorkerOptions {
  /** Queued runs this process runs at once. */
  concurrency: number;
  warn(message: string): void;
}

/** A wake-up call can be lost (a broken connection): the queue is also looked at this often. */
const POLL_MS = 1000;
/**
 * Claim passes a worker runs at once. A wake-up call that comes while a pass waits for its
 * claim's answer starts its own pass instead of queueing behind it: under load that answer
 * comes only when the worker's busy event loop gets to it.
 */
const MAX_PASSES = 4;
/** Runs one pass claims at most per statement, so the other passes keep room to claim. */
const PASS_BATCH = 8;

/** A slot held by {@link QueueWorker.reserve}: use it for a claimed run, or release it. */
export interface WorkerSlot {
  /** Runs `claimed` (a run claimed for this process) in the slot. */
  run(claimed: ClaimedRun): void;
  /** Gives the slot back unused. */
  release(): void;
}

/** What a worker counts (`GET /metrics`). */
export interface QueueWorkerCounts {
  claimed: number;
  finished: number;
  failed: number;
}

/**
 * The worker loop of a process in a fleet: claims queued runs (oldest first, one per thread
 * across the fleet) while it has room, runs them through the registry, and is woken at once by
 * the fleet's wake-up call (a run was queued, or a thread freed), else once a second. It also
 * sweeps, a few times per lease, for runs whose worker died, which go back to the queue.
 */
export class QueueWorker {
  readonly counts: QueueWorkerCounts = { claimed: 0, finished: 0, failed: 0 };
  #active = 0;
  #draining = false;
  /** Claim passes under way, and the slots they may fill (counted as taken meanwhile). */
  readonly #passes = new Set<Promise<void>>();
  #claiming = 0;
  #fillAgain = false;
  #timer: NodeJS.Timeout | undefined;
  #sweepTimer: NodeJS.Timeout | undefined;
  #unlisten: (() => void) | undefined;
  readonly #idle = new Set<() => void>();

  constructor(
    private readonly fleet: Fleet,
    private readonly registry: RunRegistry,
    private readonly options: QueueWorkerOptions,
  ) {}

  /** Starts claiming; resolves once it listens for wake-up calls. */
  async start(): Promise<void> {
    this.#unlisten = await this.fleet.onWake(() => this.fill());
    this.#timer = setInterval(() => this.fill(), POLL_MS);
    this.#timer.unref();
    const sweepEvery = Math.max(250, Math.floor(this.fleet.leaseMs / 2));
    this.#sweepTimer = setInterval(() => void this.#sweep(), sweepEvery);
    this.#sweepTimer.unref();
    this.fill();
  }

  /** Queued runs this process runs now. */
  get active(): number {
    return this.#active;
  }

  /**
   * Stops claiming and waits up to `timeoutMs` for this process's runs to finish; those still
   * running then are given back to the queue, for another worker to resume.
   */
  async drain(timeoutMs: number): Promise<void> {
    this.stop();
    await Promise.all(this.#passes);
    if (this.#active > 0) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, timeoutMs);
        this.#idle.add(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    if (this.#active > 0) {
      await this.fleet.handBackAll("handed back: the worker running it shut down");
      await this.fleet.wake().catch(() => undefined);
    }
  }

  /** Stops claiming (the runs it has go on). Idempotent. */
  stop(): void {
    this.#draining = true;
    clearInterval(this.#timer);
    clearInterval(this.#sweepTimer);
    this.#unlisten?.();
    this.#unlisten = undefined;
  }

  /**
   * Holds one of this worker's slots for a run its caller is about to claim itself (see
   * `RunQueue.enqueueOrClaim`): while held it counts as running, so no claim made after it and
   * no drain overcommits. Undefined when the worker is full or shutting down.
   */
  reserve(): WorkerSlot | undefined {
    // Slots an unanswered claim may fill do not count: such a claim is usually an idle look
    // (after a run's end, or once a second) that finds nothing, and a run asked for here
    // should not go through the queue for it. Should that claim find runs, the worker runs
    // that many more than its slots until they end.
    if (this.#draining || this.#active >= this.options.concurrency) return undefined;
    this.#active += 1;
    let used = false;
    return {
      run: (claimed) => {
        if (used) return;
        used = true;
        this.#execute(claimed);
      },
      release: () => {
        if (used) return;
        used = true;
        this.#settle();
        // The slot may have kept a pass from claiming a queued run.
        this.fill();
      },
    };
  }

  /**
   * Claims runs while there is room, in a pass of its own: one claim statement of up to
   * {@link PASS_BATCH} runs. Unless {@link MAX_PASSES} are under way, or the room is theirs until
   * they answer: then, as after a full claim (more may wait), it looks again once a pass ends.
   */
  fill(): void {
    if (this.#draining) return;
    const room = this.options.concurrency - this.#active - this.#claiming;
    if (this.#passes.size >= MAX_PASSES || (room <= 0 && this.#claiming > 0)) {
      this.#fillAgain = true;
      return;
    }
    if (room <= 0) return;
    const pass: Promise<void> = this.#claim(Math.min(room, PASS_BATCH)).finally(() => {
      this.#passes.delete(pass);
      if (this.#fillAgain) {
        this.#fillAgain = false;
        this.fill();
      }
    });
    this.#passes.add(pass);
  }

  /** One claim of up to `take` runs, their slots counted as taken until it answers. */
  async #claim(take: number): Promise<void> {
    this.#claiming += take;
    let claimed: ClaimedRun[];
    try {
      // Up to `take` runs in one statement (see `RunQueue.claimSome`).
      claimed = await this.fleet.queue.claimSome(this.fleet.runner, this.fleet.leaseMs, take);
    } catch (error) {
      this.options.warn(`claiming a queued run failed: ${messageOf(error)}`);
      return;
    } finally {
      this.#claiming -= take;
    }
    for (const run of claimed) {
      this.#active += 1;
      this.#execute(run);
    }
    if (claimed.length === take) this.#fillAgain = true;
  }

  /** Runs `claimed` in a slot already counted in `#active`, and frees the slot at its end. */
  #execute(claimed: ClaimedRun): void {
    this.counts.claimed += 1;
    void this.registry
      .execute(claimed, this.fleet)
      .then(
        (status) => {
          if (status === "error") this.counts.failed += 1;
          else this.counts.finished += 1;
        },
        (error: unknown) => {
          this.counts.failed += 1;
          this.options.warn(`queued run ${claimed.row.run_id} failed: ${messageOf(error)}`);
        },
      )
      .finally(() => {
        this.#settle();
        // Its thread is free: a run queued behind it may go now, here or elsewhere.
        void this.fleet.wakeFor(claimed.row.thread_id).catch(() => undefined);
        this.fill();
      });
  }

  /** Frees a slot. */
  #settle(): void {
    this.#active -= 1;
    if (this.#active === 0) for (const resolve of this.#idle) resolve();
  }

  async #sweep(): Promise<void> {
    try {
      if ((await this.fleet.sweep()) > 0) this.fill();
    } catch (error) {
      this.options.warn(`looking for runs of stopped workers failed: ${messageOf(error)}`);
    }
  }
}
