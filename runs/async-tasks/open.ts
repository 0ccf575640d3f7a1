/**
 * Opens a runtime's background tasks: the service every door uses and this process's runner,
 * wired to each other, to the thread deleter (a deleted thread's tasks go with it) and, for
 * `notify_parent`, to the runtime's own runs (a server replaces that with its queue).
 */

import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";
import type { AgentRepository } from "../../agents/repository.js";
import { ErrorCode, SubagentGraphError } from "../../errors.js";
import type { AgentGraphs } from "../../graphs/agent-graphs.js";
import type { AsyncTask } from "../../middleware/async-task-records.js";
import { AsyncTaskRepository } from "../../store/async-tasks.js";
import type { Database } from "../../store/database.js";
import type { RunStore } from "../run-store.js";
import { AsyncTaskRunner } from "./runner.js";
import { AsyncTasks } from "./service.js";

/** What the background tasks are opened with. */
export interface BackgroundTasksOptions {
  database: Database;
  saver: BaseCheckpointSaver;
  graphs: AgentGraphs;
  agents: AgentRepository;
  runStore: Pick<RunStore, "runner" | "threadLeaseMs" | "deleter">;
  checkThread(uid: string, threadId: string): Promise<void>;
  /** Starts a run on a thread (the runtime's `run`), for `notify_parent`. */
  run(request: {
    uid: string;
    threadId: string;
    input: string;
    inputMessageId: string;
  }): Promise<unknown>;
  /** Whether this process runs tasks (not when it only hosts graphs for another server). */
  start: boolean;
  warn(message: string): void;
}

/** The background tasks of a runtime and the runner to close with it. */
export interface BackgroundTasks {
  service: AsyncTasks;
  runner: AsyncTaskRunner;
}

/** How long a notify run waits for a busy parent thread before it gives up, in ms. */
const NOTIFY_PATIENCE_MS = 5 * 60_000;

/** See the file's comment. */
export function openBackgroundTasks(options: BackgroundTasksOptions): BackgroundTasks {
  const { database, saver, graphs, agents, runStore, warn } = options;
  const rows = new AsyncTaskRepository(database.db, database.dialect);
  const parentAgent = (uid: string, agentId: string) => agents.find(uid, agentId);
  const service = new AsyncTasks({
    rows,
    graphs,
    saver,
    parentAgent,
    checkThread: options.checkThread,
  });
  const runner = new AsyncTaskRunner({
    rows,
    runner: runStore.runner,
    leaseMs: runStore.threadLeaseMs,
    parentAgent,
    loadChild: (uid, parent, slug) => graphs.backgroundChild(uid, parent, slug),
    onSettled: (task, row) => service.settled(task, row),
    warn,
  });
  service.attach(runner);
  service.setParentNotifier((uid, threadId, task) => notifyByRun(options, uid, threadId, task));
  runStore.deleter.backgroundTasks = service;
  if (options.start) runner.start();
  return { service, runner };
}

/**
 * The library's notify run: the notice as the message, started once the thread is free (a run
 * of the runtime refuses a busy thread, so it is tried again every second for five minutes).
 * A thread waiting for an approval takes no new message: the notice then reaches its next model
 * call instead.
 */
async function notifyByRun(
  options: BackgroundTasksOptions,
  uid: string,
  threadId: string,
  task: AsyncTask,
): Promise<void> {
  const notice = AsyncTasks.notice(task);
  const deadline = Date.now() + NOTIFY_PATIENCE_MS;
  for (;;) {
    try {
      await options.run({ uid, threadId, input: notice.text, inputMessageId: notice.id });
      return;
    } catch (error) {
      const busy = SubagentGraphError.isInstance(error) && error.code === ErrorCode.ThreadBusy;
      if (!busy || Date.now() > deadline) {
        if (!(SubagentGraphError.isInstance(error) && error.code === ErrorCode.AwaitingApproval)) {
          options.warn(
            `background task ${task.id}: could not start a run on thread "${threadId}" to tell it (${error instanceof Error ? error.message : String(error)}); its next model call is told instead`,
          );
        }
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
  }
}
