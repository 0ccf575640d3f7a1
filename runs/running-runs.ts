import { ErrorCode, SubagentGraphError } from "../errors.js";

/** A run executing in this process. */
export interface RunningRun {
  runId: string;
  uid: string;
  threadId: string;
  /** Aborting it cancels the run and every running subagent. */
  controller: AbortController;
  /** For a queued run this process claimed: gives it back to the queue (see `RunLease.handBack`). */
  handBack?: (reason: string) => Promise<void>;
}

/**
 * The runs executing in this process and the threads they hold: the one owner of that state.
 * The run lifecycle claims and releases, the threads API asks whether a thread is busy, the run
 * API cancels, and closing the runtime aborts them all. Across processes a thread is held by
 * its run's lease (`runs/run-lease.ts`), which this does not replace: it answers at once, without
 * a database read, for the runs of this process.
 */
export class RunningRuns {
  readonly #byRunId = new Map<string, RunningRun>();
  readonly #busyThreads = new Set<string>();

  /**
   * Records `run` as executing here and its thread as held.
   *
   * @throws SubagentGraphError `THREAD_BUSY` (field `threadId`) when a run of this process
   *   already holds the thread; nothing is recorded then.
   */
  claim(run: RunningRun): void {
    if (this.#busyThreads.has(run.threadId)) {
      throw new SubagentGraphError(
        ErrorCode.ThreadBusy,
        `thread "${run.threadId}" already has a run in progress: wait for it to finish or cancel it`,
        { field: "threadId", details: { thread_id: run.threadId } },
      );
    }
    this.#busyThreads.add(run.threadId);
    this.#byRunId.set(run.runId, run);
  }

  /** Lets `runId` be handed back (see {@link RunningRun.handBack}). */
  setHandBack(runId: string, handBack: (reason: string) => Promise<void>): void {
    const run = this.#byRunId.get(runId);
    if (run) run.handBack = handBack;
  }

  /** Forgets the run and frees its thread (idempotent). */
  release(runId: string): void {
    const run = this.#byRunId.get(runId);
    if (!run) return;
    this.#byRunId.delete(runId);
    this.#busyThreads.delete(run.threadId);
  }

  /** How many runs execute here now. */
  get size(): number {
    return this.#byRunId.size;
  }

  /** A run of this process holds the thread. */
  isBusy(threadId: string): boolean {
    return this.#busyThreads.has(threadId);
  }

  /** Aborts `uid`'s run `runId` if it executes here; false when it does not (or is not theirs). */
  cancel(uid: string, runId: string): boolean {
    const run = this.#byRunId.get(runId);
    if (!run || run.uid !== uid) return false;
    run.controller.abort(new Error(`run ${runId} cancelled`));
    return true;
  }

  /** Gives every queued run of this process back to the queue; resolves once they are. */
  async handBackAll(reason: string): Promise<void> {
    await Promise.all([...this.#byRunId.values()].map((run) => run.handBack?.(reason)));
  }

  /** Aborts every run of this process (the runtime is closing); each releases itself. */
  abortAll(reason: string): void {
    for (const run of this.#byRunId.values()) run.controller.abort(new Error(reason));
  }
}
