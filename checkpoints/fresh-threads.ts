import type { RunnableConfig } from "@langchain/core/runnables";

/**
 * Threads a saver knows to have no checkpoint yet, so that reading one's newest checkpoint
 * needs no round trip: a subagent's new child thread (a new tool call on a run from new input,
 * see `middleware/dispatch.ts`) is read twice before its first step (langchain's agent reads its
 * state to merge it into the input, then LangGraph's loop reads it again), which on PostgreSQL is
 * two round trips that can only find nothing. A thread stops being known empty at its first
 * write, and when its caller says so.
 */
export class FreshThreads {
  readonly #threads = new Map<string, number>();

  /**
   * Marks `threadId` as having no checkpoint, which the caller guarantees, until the returned
   * function is called or the thread is first written to.
   */
  expect(threadId: string): () => void {
    this.#threads.set(threadId, (this.#threads.get(threadId) ?? 0) + 1);
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      const count = this.#threads.get(threadId);
      if (count === undefined) return;
      if (count <= 1) this.#threads.delete(threadId);
      else this.#threads.set(threadId, count - 1);
    };
  }

  /** Whether a read of the newest checkpoint of `config`'s thread (root namespace) finds none. */
  knownEmpty(config: RunnableConfig): boolean {
    const { thread_id, checkpoint_ns = "", checkpoint_id } = config.configurable ?? {};
    return (
      checkpoint_ns === "" &&
      checkpoint_id === undefined &&
      typeof thread_id === "string" &&
      this.#threads.has(thread_id)
    );
  }

  /** A write to `config`'s thread: it is not known empty any more. */
  written(config: RunnableConfig): void {
    const threadId = config.configurable?.thread_id;
    if (typeof threadId === "string") this.#threads.delete(threadId);
  }
}

/** The {@link FreshThreads} of `saver`, if it keeps one (every saver of ours does). */
export function freshThreadsOf(saver: unknown): FreshThreads | undefined {
  const threads = (saver as { freshThreads?: unknown } | null | undefined)?.freshThreads;
  return threads instanceof FreshThreads ? threads : undefined;
}
