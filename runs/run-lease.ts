import { ErrorCode, SubagentGraphError } from "../errors.js";
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

/**
 * A run's hold on its thread across processes: the thread's lease (so no other process runs
 * it at the same time), the run's row (so any process can report and cancel it), and a
 * heartbeat that renews the lease and polls for a cancel request.
 */
export class RunLease {
  private timer: NodeJS.Timeout | undefined;

  private constructor(private readonly options: RunLeaseOptions) {}

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
        { field: "threadId" },
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
    const { runs, runId, threadId } = this.options;
    await runs.finish(runId, status, end);
    await runs.releaseThread(threadId, runId);
  }

  /** Renews the lease and polls for a cancel request, a few times per lease period. */
  private beat(): void {
    const { runs, runId, threadId, leaseMs } = this.options;
    const every = Math.max(50, Math.min(500, Math.floor(leaseMs / 3)));
    this.timer = setTimeout(async () => {
      try {
        await runs.renewThread(threadId, runId, leaseMs);
        if (await runs.cancelRequested(runId)) {
          this.options.abort(new Error(`run ${runId} cancelled from another process`));
        }
      } catch {
        // A database hiccup must not kill the run; the next beat tries again.
      }
      if (this.timer) this.beat();
    }, every);
    // The heartbeat alone never keeps a process alive.
    this.timer.unref();
  }
}
