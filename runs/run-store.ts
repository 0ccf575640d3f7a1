import { randomUUID } from "node:crypto";
import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";
import type { SandboxLayout } from "../sandbox/layout.js";
import type { Database } from "../store/database.js";
import { RunEventRepository } from "../store/run-events.js";
import { RunQueue } from "../store/run-queue.js";
import { RunRepository } from "../store/runs.js";
import { ThreadRepository } from "../store/threads.js";
import { ThreadDeleter } from "../threads/thread-delete.js";
import { currentProcess, type ProcessIdentity } from "../util/process-identity.js";
import { AbandonedRuns } from "./abandoned-runs.js";
import { createFleet, type Fleet, RUN_QUEUE_CHANNEL } from "./fleet.js";
import { RunEventLog } from "./run-event-log.js";
import { RunningRuns } from "./running-runs.js";

/** What runs and threads are kept in: their rows, this process's runs, the recovery of others'. */
export interface RunStore {
  threads: ThreadRepository;
  runRows: RunRepository;
  /** Settles runs whose process stopped; takes threads for runs. */
  abandoned: AbandonedRuns;
  /** The runs of this process and the threads they hold. */
  running: RunningRuns;
  deleter: ThreadDeleter;
  /** This process, as the rows of its runs name it. */
  runner: ProcessIdentity;
  /** How long a run's hold on its thread lasts without renewal, in ms. */
  threadLeaseMs: number;
  /**
   * Runs' events in the shared database, so any process streams any run: on PostgreSQL (a
   * fleet); undefined on SQLite, whose one process keeps them in memory.
   */
  runEvents: RunEventLog | undefined;
  /** Queued runs shared by a fleet: on PostgreSQL; undefined on SQLite. */
  fleet: Fleet | undefined;
  /**
   * Whether each thread has a run active or pending, as `RunRepository.threadRunStates` reads
   * it, except that a run marked running by a process that died reads as what it is first
   * (as a run's own record is, see `runs/abandoned-runs.ts`).
   */
  threadRunStates: RunRepository["threadRunStates"];
}

/** Where the run store is opened. */
export interface RunStoreOptions {
  database: Database;
  saver: BaseCheckpointSaver;
  layout: SandboxLayout;
  env: NodeJS.ProcessEnv;
  /** The runtime's `threadLeaseMs` option; default `SUBAGENT_THREAD_LEASE_MS`, else 30 s. */
  threadLeaseMs: number | undefined;
  /** A runtime hosting graphs for another server runs nothing, so it recovers nothing either. */
  hosted: boolean;
  warn(message: string): void;
}

/**
 * Opens the run store. Unless hosted, what a stopped process left is recovered first: its runs
 * still `running` are recorded interrupted and their threads freed (the embedded default after a
 * crash: that process was this data dir's last user), and thread deletions it left half-done are
 * finished (see `runs/abandoned-runs.ts` and `threads/thread-delete.ts`).
 */
export async function openRunStore(options: RunStoreOptions): Promise<RunStore> {
  const { database, saver, layout, env, warn } = options;
  const threads = new ThreadRepository(database.db);
  const runRows = new RunRepository(database.db);
  const threadLeaseMs =
    options.threadLeaseMs ?? (Number(env.SUBAGENT_THREAD_LEASE_MS?.trim()) || 30_000);
  const runner = currentProcess(randomUUID());
  const { notifications } = database;
  const queue = notifications
    ? new RunQueue(database.db, { wakeChannel: RUN_QUEUE_CHANNEL })
    : undefined;
  const maxAttempts = Number(env.SUBAGENT_RUN_MAX_ATTEMPTS?.trim()) || 3;
  const abandoned = new AbandonedRuns({
    runs: runRows,
    saver,
    self: runner,
    leaseMs: threadLeaseMs,
    warn,
    ...(queue && notifications
      ? {
          // A queued run whose worker died goes back to the queue, and the workers are told.
          requeue: async (row, reason) => {
            await queue.requeue(row.run_id, reason, maxAttempts);
            await notifications.notify(RUN_QUEUE_CHANNEL, "").catch(() => undefined);
          },
        }
      : {}),
  });
  if (!options.hosted) await abandoned.sweep();
  const running = new RunningRuns();
  const deleter = new ThreadDeleter({
    threads,
    runs: runRows,
    abandoned,
    saver,
    layout,
    isBusy: (threadId) => running.isBusy(threadId),
    warn,
  });
  if (!options.hosted) await deleter.sweep();
  const runEvents = notifications
    ? new RunEventLog({ events: new RunEventRepository(database.db), notifications, warn })
    : undefined;
  const fleet =
    queue && notifications
      ? createFleet({
          queue,
          notifications,
          runner,
          leaseMs: threadLeaseMs,
          maxAttempts,
          abandoned,
          running,
        })
      : undefined;
  return {
    threads,
    runRows,
    abandoned,
    running,
    deleter,
    runner,
    threadLeaseMs,
    runEvents,
    fleet,
    async threadRunStates(threadIds) {
      const states = await runRows.threadRunStates(threadIds);
      const elsewhere = threadIds.filter((id) => states.get(id)?.active && !running.isBusy(id));
      return elsewhere.length > 0 && (await abandoned.settleThreads(elsewhere))
        ? runRows.threadRunStates(threadIds)
        : states;
    },
  };
}
