/**
 * What a process of a fleet on PostgreSQL shares with the others for queued runs: the queue,
 * the wake-up call that tells every worker a run may be claimable (LISTEN/NOTIFY), and the
 * sweep that gives the runs of dead workers back to the queue. The loop that claims and runs
 * them is the server's (`server/live-runs/queue-worker.ts`); this holds no loop of its own.
 */

import type { Notifications } from "../store/pg-notifications.js";
import type { RunQueue } from "../store/run-queue.js";
import type { ProcessIdentity } from "../util/process-identity.js";
import type { AbandonedRuns } from "./abandoned-runs.js";
import type { RunningRuns } from "./running-runs.js";

/** The channel on which a queued run, or a freed thread, wakes every worker. */
export const RUN_QUEUE_CHANNEL = "subagent_graph_run_queue";

/** A process's part in a fleet's queued runs (see the file's comment). */
export interface Fleet {
  queue: RunQueue;
  /** This process, as the rows of the runs it claims name it. */
  runner: ProcessIdentity;
  /** How long a claimed run's thread stays held without a heartbeat, in ms. */
  leaseMs: number;
  /** Attempts after which a run whose worker keeps dying ends `error`. */
  maxAttempts: number;
  /** Tells every worker of the fleet that a run may be claimable. */
  wake(): Promise<void>;
  /** {@link wake}, only if `threadId` (just freed) has a run pending. */
  wakeFor(threadId: string): Promise<void>;
  /** Calls `handler` on every wake-up call (and after a lost one may have been missed). */
  onWake(handler: () => void): Promise<() => void>;
  /** Gives the runs of dead workers back to the queue; how many it found. */
  sweep(): Promise<number>;
  /** Gives every queued run of this process back to the queue (shutting down). */
  handBackAll(reason: string): Promise<void>;
}

/** What {@link createFleet} is made of. */
export interface FleetParts {
  queue: RunQueue;
  notifications: Notifications;
  runner: ProcessIdentity;
  leaseMs: number;
  maxAttempts: number;
  abandoned: AbandonedRuns;
  running: RunningRuns;
}

/** The fleet side of a process on PostgreSQL. */
export function createFleet(parts: FleetParts): Fleet {
  const { queue, notifications, runner, leaseMs, maxAttempts, abandoned, running } = parts;
  return {
    queue,
    runner,
    leaseMs,
    maxAttempts,
    wake: () => notifications.notify(RUN_QUEUE_CHANNEL, ""),
    wakeFor: (threadId) => queue.announcePending(threadId),
    onWake: (handler) => notifications.listen(RUN_QUEUE_CHANNEL, () => handler()),
    sweep: () => abandoned.sweep(),
    handBackAll: (reason) => running.handBackAll(reason),
  };
}
