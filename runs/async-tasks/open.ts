/**
 * Opens a runtime's background tasks: the service every door uses and this process's runner,
 * wired to each other, to the thread deleter (a deleted thread's tasks go with it) and, for
 * `notify_parent`, to the runtime's own runs (a server replaces that with its queue).
 *
 * Hosted (graphs served by a LangGraph server, Studio): the children run on the runtime's own
 * saver, lent to them at run time as the server lends its saver to a `task` call's child (the
 * graphs are compiled without one), because a background child runs later, outside the run of
 * the server that started it. `notify_parent` cannot start a run there (the server's runs are
 * its own): the parent thread is told at its next model call, and a warning says so.
 */

import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";
import type { AgentRepository } from "../../agents/repository.js";
import { ErrorCode, messageOf, SubagentGraphError } from "../../errors.js";
import type { CompiledGraphs } from "../../graphs/compiled-graphs.js";
import type { AsyncTask } from "../../middleware/async-task-records.js";
import { PREGEL_CHECKPOINTER_KEY } from "../../middleware/child-run.js";
import type { LoadedChild } from "../../middleware/task-types.js";
import { AsyncTaskRepository } from "../../store/async-tasks.js";
import type { Database } from "../../store/database.js";
import type { RunStore } from "../run-store.js";
import { AsyncTaskRunner } from "./runner.js";
import { AsyncTasks } from "./service.js";

/** What the background tasks are opened with. */
export interface BackgroundTasksOptions {
  database: Database;
  saver: BaseCheckpointSaver;
  graphs: CompiledGraphs;
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
  /**
   * The graphs are hosted by a LangGraph server and compiled without a saver: children get
   * `saver` lent, and `notify_parent` only warns (see the file's comment).
   */
  hosted: boolean;
  warn(message: string): void;
}

/** The background tasks of a runtime and the runner to close with it. */
export interface BackgroundTasks {
  service: AsyncTasks;
  runner: AsyncTaskRunner;
}

/**
 * The background tasks, opened after the graphs that start them (which need the runs API, wired
 * last): graphs are built only at a run, once `createRuntime` has filled the slot.
 */
export class BackgroundSlot {
  #opened: BackgroundTasks | undefined;

  /** Fills the slot; returns what it was filled with. */
  fill(opened: BackgroundTasks): BackgroundTasks {
    this.#opened = opened;
    return opened;
  }

  /** The opened tasks, undefined before {@link fill}. */
  get opened(): BackgroundTasks | undefined {
    return this.#opened;
  }

  /** The service, for a graph being built; throws `INTERNAL` when the slot is still empty. */
  get service(): AsyncTasks {
    if (!this.#opened) {
      throw new SubagentGraphError(
        ErrorCode.Internal,
        "a graph was built before the runtime's background tasks were opened",
      );
    }
    return this.#opened.service;
  }
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
    loadChild: async (uid, parent, slug) => {
      const child = await graphs.backgroundChild(uid, parent, slug);
      return child && options.hosted ? lendSaver(child, saver) : child;
    },
    onSettled: (task, row) => service.settled(task, row),
    warn,
  });
  service.attach(runner);
  service.setParentNotifier((uid, threadId, task) =>
    options.hosted
      ? notifyUnsupported(options, threadId, task)
      : notifyByRun(options, uid, threadId, task),
  );
  runStore.deleter.backgroundTasks = service;
  runner.start();
  return { service, runner };
}

/** `child` with `saver` lent to each of its runs and state reads (`PREGEL_CHECKPOINTER_KEY`). */
function lendSaver(child: LoadedChild, saver: BaseCheckpointSaver): LoadedChild {
  const { graph } = child;
  const lent = <T extends { configurable?: Record<string, unknown> }>(config: T): T => ({
    ...config,
    configurable: { ...config.configurable, [PREGEL_CHECKPOINTER_KEY]: saver },
  });
  return {
    ...child,
    graph: {
      checkpointer: saver,
      invoke: (input, config) => graph.invoke(input, lent(config)),
      getState: (config) => graph.getState(lent(config)),
    },
  };
}

/** Hosted: no run can be started on the server's thread; its next model call is told. */
async function notifyUnsupported(
  options: BackgroundTasksOptions,
  threadId: string,
  task: AsyncTask,
): Promise<void> {
  options.warn(
    `background task ${task.id} ${task.status}: notify_parent is not supported under a LangGraph server (Studio, langgraphjs dev), whose runs only it can start; thread "${threadId}" is told at its next model call instead`,
  );
}

/**
 * The library's notify run: the notice as the message, started once the thread is free (a run
 * of the runtime refuses a busy thread, so it is tried again every second for five minutes).
 * A thread waiting for an approval takes no new message: the notice then reaches its next model
 * call instead. A parent thread this runtime does not hold gets no run: a LangGraph server's
 * (its task claimed by this process from a data folder or database both use), whose next model
 * call is told, or a deleted one.
 */
async function notifyByRun(
  options: BackgroundTasksOptions,
  uid: string,
  threadId: string,
  task: AsyncTask,
): Promise<void> {
  try {
    await options.checkThread(uid, threadId);
  } catch (error) {
    if (SubagentGraphError.isInstance(error) && error.code === ErrorCode.NotFound) return;
    throw error;
  }
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
            `background task ${task.id}: could not start a run on thread "${threadId}" to tell it (${messageOf(error)}); its next model call is told instead`,
          );
        }
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
}
