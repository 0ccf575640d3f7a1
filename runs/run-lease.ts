import { ErrorCode, SubagentGraphError } from "../errors.js";
import type { RunHolder, RunQueue } from "../store/run-queue.js";
import type { RunEnd, RunRepository, StoredRunStatus } from "../store/runs.js";
import type { ProcessIdentity } from "../util/process-identity.js";
import type { AbandonedRuns } from "./abandoned-runs.js";

/** What a held run needs to know. */
export interface RunLeaseOptions {
  runs: RunRepository;
  /** Takes the thread, reclaiming it from a dead run (which it records interrupted). */
  abandoned: AbandonedRuns;
  /** This process, recorded on the run's row so others can tell when it died. */
  runner: ProcessIdentity;
  runId: string;
  threadId: string;
  uid: string;
  agentId: string;
  /** How long the thread stays held without a renewal (a killed process's lease expires). */
  leaseMs: number;
  /** Aborts the run: called when another process asked for it to stop. */
  abort(reason: Error): void;
  /** The client's metadata, kept on the run's row. */
  metadata?: Record<string, unknown>;
  /**
   * Called once the thread is held, before the run is recorded; what it throws refuses the run
   * (the thread is let go). For checks that only hold while no one else holds the thread.
   */
  confirm?: () => Promise<void>;
}

/** A queued run's attempt, claimed by this process (`store/run-queue.ts`). */
export interface ClaimedAttempt {
  queue: RunQueue;
  /** The attempt this process runs (its row's `attempt` when claimed). */
  attempt: number;
}

/**
 * A run's hold on its thread across processes: the thread's lease (so no other process runs
 * it at the same time), the run's row (so any process can report and cancel it), and a
 * heartbeat that renews the lease and polls for a cancel request.
 */
export class RunLease {
  private timer: NodeJS.Timeout | undefined;
  /** Set when another worker took the (queued) run over: its row and lease are not ours. */
  private lost = false;

  private constructor(
    private readonly options: RunLeaseOptions,
    private readonly claimed?: ClaimedAttempt,
  ) {}

  /**
   * The hold of a queued run this process claimed: the claim took the thread's lease and marked
   * the row, so this only keeps them. Its heartbeat also checks that the row still names this
   * attempt and process; if another worker took the run over (this one stalled past its lease),
   * the run is aborted and nothing of it is recorded any more.
   */
  static adopt(options: RunLeaseOptions, claimed: ClaimedAttempt): RunLease {
    const lease = new RunLease(options, claimed);
    lease.beat();
    return lease;
  }

  /**
   * Takes the thread or refuses.
   * @throws SubagentGraphError `THREAD_BUSY` when a run of another process holds it
   */
  static async acquire(options: RunLeaseOptions): Promise<RunLease> {
    const { runs, abandoned, threadId, runId } = options;
    if (!(await abandoned.acquireThread(threadId, runId))) {
      throw new SubagentGraphError(
        ErrorCode.ThreadBusy,
        `thread "${threadId}" already has a run in progress (in another process): wait for it to finish or cancel it`,
        { field: "threadId", details: { thread_id: threadId } },
      );
    }
    try {
      await options.confirm?.();
      await runs.start(options);
    } catch (error) {
      await runs.releaseThread(threadId, runId);
      throw error;
    }
    const lease = new RunLease(options);
    lease.beat();
    return lease;
  }

  /** Ends the hold: the run's outcome (and the subagent records it made) is recorded and the thread is free. */
  async release(status: Exclude<StoredRunStatus, "running">, end: RunEnd = {}): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    const { runs, runId, threadId, runner } = this.options;
    if (this.lost) return;
    const holder = this.claimed
      ? { attempt: this.claimed.attempt, runnerInstance: runner.instanceId }
      : undefined;
    await runs.end(runId, threadId, status, end, holder);
  }

  /** Whether another worker has (or may have) the run now: nothing of it is recorded here. */
  get superseded(): boolean {
    return this.lost;
  }

  /**
   * Gives a claimed run back to the queue for another worker to resume (this process is shutting
   * down), then aborts it here without recording anything: its row is pending again and its
   * thread free before the abort, so the run's unwinding here writes nothing that is not ours.
   */
  async handBack(reason: string): Promise<void> {
    if (!this.claimed || this.lost) return;
    this.lost = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    const { runs, runId, threadId } = this.options;
    try {
      // Not a failure: it never ends the run `error`, nor counts towards its attempts' limit.
      // A run taken over meanwhile is another worker's, and so is its thread's lease.
      if (await this.claimed.queue.handBack(runId, this.claimed.attempt, reason)) {
        await runs.releaseThread(threadId, runId);
      }
    } finally {
      this.options.abort(new Error(reason));
    }
  }

  /** Renews the lease and polls for a cancel request, a few times per lease period. */
  private beat(): void {
    const { runs, runId, threadId, leaseMs } = this.options;
    const every = Math.max(50, Math.min(500, Math.floor(leaseMs / 3)));
    this.timer = setTimeout(async () => {
      try {
        if (this.claimed) {
          const beat = await this.claimed.queue.heartbeat(threadId, runId, leaseMs);
          this.checkClaim(beat.renewed, beat.holder);
        } else {
          await runs.renewThread(threadId, runId, leaseMs);
          if (await runs.cancelRequested(runId)) {
            this.options.abort(new Error(`run ${runId} cancelled from another process`));
          }
        }
      } catch {
        // A database hiccup must not kill the run; the next beat tries again.
      }
      if (this.timer) this.beat();
    }, every);
    // The heartbeat alone never keeps a process alive.
    this.timer.unref();
  }

  /** A claimed run's heartbeat: still this attempt's and this process's, and not cancelled. */
  private checkClaim(renewed: boolean, holder: RunHolder | undefined): void {
    const { runId, runner } = this.options;
    const claimed = this.claimed as ClaimedAttempt;
    const ours =
      renewed &&
      holder?.status === "running" &&
      holder.attempt === claimed.attempt &&
      holder.runnerInstance === runner.instanceId;
    if (!ours) {
      this.lost = true;
      clearTimeout(this.timer);
      this.timer = undefined;
      this.options.abort(
        new Error(`run ${runId} (attempt ${claimed.attempt}) was taken over by another worker`),
      );
    } else if (holder.cancelRequested) {
      this.options.abort(new Error(`run ${runId} cancelled from another process`));
    }
  }
}
