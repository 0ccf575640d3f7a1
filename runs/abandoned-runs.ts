/**
 * Runs whose process died keep their rows truthful and free their threads.
 *
 * A process killed mid-run cannot write its run's end: the row stays `running` and the thread's
 * lease holds the thread until it expires. Whoever finds such a run records it `interrupted`,
 * with the reason and the subagent records it made, and the thread is free for the next run:
 * - a process on the same machine knows at once, from the pid the row names
 *   (`util/process-identity.ts`): it breaks the dead holder's lease instead of waiting for it;
 * - a process elsewhere knows once the lease has run out (nothing renews it).
 * It is found when a run takes the thread ({@link AbandonedRuns.acquireThread}), when a process
 * starts ({@link AbandonedRuns.sweep}), and when the run's record is read
 * ({@link AbandonedRuns.settle}), so no API ever answers `running` for a dead run.
 *
 * The records are read from the thread's newest checkpoint while the finder holds the thread's
 * lease, so no new run has written to it yet: the dead run's last step, with the children that
 * had completed in it (runs checkpoint with `durability: "sync"`, see `run-lifecycle.ts`).
 */

import { randomUUID } from "node:crypto";
import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";
import { messageOf } from "../errors.js";
import type { SubagentRun } from "../middleware/subagent-runs.js";
import type { RunRepository, RunRow, ThreadLease } from "../store/runs.js";
import { readRunSubagentRuns } from "../threads/thread-state.js";
import { type Liveness, livenessOf, type ProcessIdentity } from "../util/process-identity.js";

/** What {@link AbandonedRuns} works with. */
export interface AbandonedRunsOptions {
  runs: RunRepository;
  /** Where the dead runs' threads are checkpointed (their subagent records are read there). */
  saver: BaseCheckpointSaver;
  /** This process (a row naming it is never judged dead). */
  self: ProcessIdentity;
  /** Length of the short lease a process takes on a thread while it records a dead run there. */
  leaseMs: number;
  warn(message: string): void;
  /**
   * Puts a queued run (one with a `request`) whose worker died back in the queue, for another
   * worker to resume (`store/run-queue.ts`); without it such a run is recorded interrupted too.
   */
  requeue?: (row: RunRow, reason: string) => Promise<void>;
}

/** What the next step is for whoever reads an interrupted run's reason. */
const RESUME_HINT = "run the thread again without input to resume it";

/** Finds runs left `running` by dead processes and records them `interrupted`. */
export class AbandonedRuns {
  constructor(private readonly options: AbandonedRunsOptions) {}

  /**
   * Takes `threadId`'s lease for `runId`, like `RunRepository.acquireThread`, except that a lease
   * held by a process on this machine that has died is broken first (no waiting for it to run
   * out). Once the thread is held, every other run still marked running on it has lost the
   * thread: each whose process is not known to live is recorded `interrupted`.
   *
   * @returns whether the thread is now `runId`'s
   */
  async acquireThread(threadId: string, runId: string): Promise<boolean> {
    const { runs, leaseMs } = this.options;
    const before = await runs.lease(threadId);
    if (before && before.run_id !== runId && !before.expired) {
      const holder = await runs.find(before.run_id);
      if (holder && this.livenessOf(holder) === "dead") {
        await runs.breakLease(threadId, before.run_id, before.lease_until);
      }
    }
    if (!(await runs.acquireThread(threadId, runId, leaseMs))) return false;
    for (const row of await runs.running(threadId)) {
      if (row.run_id === runId) continue;
      const reason = this.deathOf(row, before);
      if (reason) await this.interrupt(row, reason);
    }
    return true;
  }

  /**
   * Records every run left running by a dead process `interrupted` and frees its thread; for a
   * process's start. Failures are warned about, never thrown: a start must not fail over them.
   *
   * @returns how many runs were recorded interrupted
   */
  async sweep(): Promise<number> {
    const failed = (what: string, error: unknown) =>
      this.options.warn(`${what}: ${messageOf(error)}`);
    let rows: RunRow[];
    try {
      rows = await this.options.runs.running();
    } catch (error) {
      failed("could not look for runs left running by stopped processes", error);
      return 0;
    }
    let count = 0;
    for (const row of rows) {
      try {
        if (await this.reclaim(row)) count += 1;
      } catch (error) {
        failed(`could not record run ${row.run_id} (left running) as interrupted`, error);
      }
    }
    return count;
  }

  /**
   * `row` as it truly stands: a running row whose process is gone is first recorded
   * `interrupted` (and its thread freed).
   */
  async settle(row: RunRow): Promise<RunRow> {
    // A run whose process is alive is never recorded interrupted: no lease or row to read again.
    if (row.status !== "running" || this.livenessOf(row) === "alive") return row;
    await this.reclaim(row);
    // Read again: this reclaim, or another process's at the same moment, may have recorded it.
    return (await this.options.runs.find(row.run_id)) ?? row;
  }

  /**
   * {@link settle} for every run marked running on `threadIds`: for a read of those threads'
   * status, so that a thread whose run died never reads `busy`.
   * @returns whether any of them was recorded (or put back in the queue)
   */
  async settleThreads(threadIds: readonly string[]): Promise<boolean> {
    let changed = false;
    for (const threadId of threadIds) {
      for (const row of await this.options.runs.running(threadId)) {
        if ((await this.settle(row)).status !== "running") changed = true;
      }
    }
    return changed;
  }

  /**
   * Records `row` interrupted if its process is gone: takes its thread with a lease of its own
   * (so no new run writes there meanwhile), which records every dead run there, then frees it.
   * @returns whether `row` is now recorded interrupted
   */
  private async reclaim(row: RunRow): Promise<boolean> {
    const { runs } = this.options;
    // A live process's run needs no lease read (sweeps look at every running run).
    if (this.livenessOf(row) === "alive") return false;
    if (!this.deathOf(row, await runs.lease(row.thread_id))) return false;
    const reclaimer = `reclaim:${randomUUID()}`;
    if (!(await this.acquireThread(row.thread_id, reclaimer))) return false;
    try {
      return (await runs.find(row.run_id))?.status === "interrupted";
    } finally {
      await runs.releaseThread(row.thread_id, reclaimer);
    }
  }

  /**
   * Why `row`'s run is not running any more, or undefined while it may be. On this machine its
   * pid decides; elsewhere its lease (`lease`, the thread's lease as last read) does: still held
   * and not run out, the run may live.
   */
  private deathOf(row: RunRow, lease: ThreadLease | undefined): string | undefined {
    const liveness = this.livenessOf(row);
    if (liveness === "alive") return undefined;
    const who =
      row.runner_pid === null
        ? "the process running it"
        : `the process running it (pid ${row.runner_pid} on ${row.runner_host ?? "an unknown host"})`;
    if (liveness === "dead") return `${who} stopped before the run finished`;
    if (lease?.run_id === row.run_id && !lease.expired) return undefined;
    return lease?.run_id === row.run_id
      ? `${who} stopped renewing its hold on the thread (its lease ran out at ${lease.lease_until}) before the run finished`
      : `${who} lost its hold on the thread before the run finished`;
  }

  private livenessOf(row: RunRow): Liveness {
    if (row.runner_pid === null || row.runner_pid_scope === null) return "unknown";
    return livenessOf(
      {
        pid: row.runner_pid,
        pidScope: row.runner_pid_scope,
        pidStart: row.runner_pid_start ?? "",
      },
      this.options.self,
    );
  }

  /**
   * Records `row` interrupted with `reason` and the subagent records its thread shows, or puts
   * it back in the queue if it is a queued run.
   */
  private async interrupt(row: RunRow, reason: string): Promise<void> {
    if (row.request !== null && this.options.requeue) return this.options.requeue(row, reason);
    let children: SubagentRun[] = [];
    try {
      children = await readRunSubagentRuns(this.options.saver, row.thread_id, row.created_at);
    } catch (error) {
      this.options.warn(
        `run ${row.run_id}: its subagent records could not be read from thread "${row.thread_id}": ${messageOf(error)}`,
      );
    }
    await this.options.runs.interrupt(row.run_id, `${reason}; ${RESUME_HINT}`, children);
  }
}
