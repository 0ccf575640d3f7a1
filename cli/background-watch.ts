import type { AsyncTask } from "../middleware/async-task-records.js";
import { activeCount, FinishedTasks, finishedTaskLine } from "./async-task-lines.js";

/** How often a chat looks for background tasks that ended. */
export const BACKGROUND_POLL_MS = 1000;

/** Lists a thread's background tasks (`runtime.asyncTasks.list`). */
export type ListAsyncTasks = (threadId: string) => Promise<AsyncTask[]>;

/**
 * Writes one line where the chat is at the moment, or answers false when it cannot now (the
 * main agent is mid-sentence): the line then waits for the next try.
 */
export type Outlet = (line: string) => boolean;

/** Where the lines go: a turn's progress while one streams, else the prompt. */
export type OutletSlot = "turn" | "prompt";

/** Options of {@link BackgroundWatch}. */
export interface BackgroundWatchOptions {
  list: ListAsyncTasks;
  /** Told once when a listing fails (the chat goes on; the next poll tries again). */
  onError: (error: unknown) => void;
  /** Default {@link BACKGROUND_POLL_MS}; 0 polls only when {@link BackgroundWatch.poll} is called. */
  intervalMs?: number;
}

/**
 * A chat's watch on the background tasks of the thread it is on: polls the thread's tasks, and
 * for each that ends while the chat is open queues {@link finishedTaskLine} and writes it
 * through the outlet in use. A task is told once; tasks that had ended before the chat opened
 * its thread are never told. Lines never break the main agent's text: the turn's outlet
 * refuses a line mid-sentence, and the line waits.
 *
 * The CLI's runtime may run the tasks itself (SQLite: one process), so a poll is a local read;
 * against a fleet's database it is one query a second.
 */
export class BackgroundWatch {
  readonly #list: ListAsyncTasks;
  readonly #onError: (error: unknown) => void;
  readonly #timer: NodeJS.Timeout | undefined;
  readonly #outlets: Partial<Record<OutletSlot, Outlet>> = {};
  readonly #queued: string[] = [];
  #thread: string | undefined;
  #finished = new FinishedTasks();
  #polling: Promise<void> | undefined;
  /** How many of the thread's tasks were still going at the last listing. */
  #active = 0;
  #failed = false;
  #closed = false;

  constructor(options: BackgroundWatchOptions) {
    this.#list = options.list;
    this.#onError = options.onError;
    const interval = options.intervalMs ?? BACKGROUND_POLL_MS;
    if (interval > 0) {
      this.#timer = setInterval(() => void this.poll(), interval);
      // The watch never keeps the process alive: the chat's end does.
      this.#timer.unref();
    }
  }

  /**
   * Watches `threadId`, a thread the chat opened as it was (`--thread`): its tasks that have
   * already ended are not told.
   */
  async open(threadId: string): Promise<void> {
    const tasks = await this.#list(threadId);
    this.#thread = threadId;
    this.#finished = new FinishedTasks(tasks);
    this.#active = activeCount(tasks);
  }

  /**
   * Follows the thread the chat is on now: a thread the chat's own run started (every task of it
   * is news), or none (`/new`). Following the same thread again changes nothing.
   */
  follow(threadId: string | undefined): void {
    if (threadId === this.#thread) return;
    this.#thread = threadId;
    this.#finished = new FinishedTasks();
    this.#active = 0;
    // Lines about the thread left behind are no longer the chat's business.
    this.#queued.length = 0;
  }

  /** Sets (or with undefined, clears) the outlet of a slot, and writes what waited. */
  attach(slot: OutletSlot, outlet: Outlet | undefined): void {
    if (outlet) this.#outlets[slot] = outlet;
    else delete this.#outlets[slot];
    this.#flush();
  }

  /** Lists the thread's tasks once (unless a listing is under way) and writes what ended. */
  poll(): Promise<void> {
    if (this.#closed) return Promise.resolve();
    this.#polling ??= this.#pollOnce().finally(() => {
      this.#polling = undefined;
    });
    return this.#polling;
  }

  /**
   * Stops polling, looks once more, and hands back what the chat should say as it ends: the
   * lines no outlet took, and the thread's tasks still going.
   */
  async close(): Promise<{ lines: string[]; thread: string | undefined; active: number }> {
    clearInterval(this.#timer);
    await this.#polling;
    // The chat is ending (maybe with Ctrl-C, the runtime closing): a failed last look says nothing.
    await this.#pollOnce(false);
    this.#closed = true;
    return { lines: this.#queued.splice(0), thread: this.#thread, active: this.#active };
  }

  async #pollOnce(reportErrors = true): Promise<void> {
    const thread = this.#thread;
    if (thread === undefined) return;
    let tasks: AsyncTask[];
    try {
      tasks = await this.#list(thread);
    } catch (error) {
      if (reportErrors && !this.#failed) this.#onError(error);
      this.#failed = true;
      return;
    }
    // The chat moved to another thread while this listing ran.
    if (thread !== this.#thread) return;
    this.#failed = false;
    this.#active = activeCount(tasks);
    this.#queued.push(...this.#finished.take(tasks).map(finishedTaskLine));
    this.#flush();
  }

  #flush(): void {
    while (this.#queued.length > 0) {
      const outlet = this.#outlets.turn ?? this.#outlets.prompt;
      if (!outlet?.(this.#queued[0] ?? "")) return;
      this.#queued.shift();
    }
  }
}
