/**
 * The runs the chat page follows, one per conversation: the one owner of that state. A run is
 * followed from the moment it is sent (or, after a reload, from when its conversation is opened
 * and the server says it still runs) to its end, whichever conversation is on screen meanwhile;
 * Cancel and the "connection lost" banner read it by the conversation's thread id, so they never
 * act on another conversation's run.
 */

import { ApiError } from "./api-error.js";
import type { RunRequest, RunsApi } from "./api-types.js";
import type { Conversation } from "./chat-state.js";
import { RunConversation } from "./run-conversation.js";
import { type Connection, type FollowStart, followRun } from "./run-follower.js";

/** One run being followed. */
export interface LiveRun {
  threadId: string;
  /** Known once the server has announced it (the stream's `metadata` event, or a join). */
  runId: string | undefined;
  /** The conversation so far: the thread's state plus what the stream has said since. */
  conversation: Conversation;
  connection: Connection;
  cancelRequested: boolean;
  /**
   * The run is over; its conversation stays on screen until the page has read the thread's
   * final state and calls {@link LiveRuns.release} (else the stale stored state would flash).
   */
  ended: boolean;
}

/** How a followed run ended. */
export interface RunEnd {
  run: LiveRun;
  /** The server took the run (it announced it): a refused one has nothing to reload. */
  accepted: boolean;
  /** A refusal or a fatal error (401); undefined when the run simply ended. */
  error: unknown;
}

export class LiveRuns {
  readonly #runs = new Map<string, LiveRun>();
  readonly #controllers = new Map<string, AbortController>();

  /** `onChange` runs after every change of any followed run (to draw the page again). */
  constructor(
    private readonly api: RunsApi,
    private readonly onChange: () => void,
  ) {}

  /** The run followed on `threadId` (going, or ended and not yet released), if any. */
  get(threadId: string | undefined): LiveRun | undefined {
    return threadId === undefined ? undefined : this.#runs.get(threadId);
  }

  /** The thread ids of every run still going. */
  threadIds(): string[] {
    return [...this.#runs.values()].filter((run) => !run.ended).map((run) => run.threadId);
  }

  /** Forgets an ended run once the page shows the thread's stored state instead. */
  release(run: LiveRun): void {
    if (this.#runs.get(run.threadId) === run) this.#runs.delete(run.threadId);
    this.onChange();
  }

  /** Starts a run on `threadId` (the conversation shown so far is `base`) and follows it. */
  start(threadId: string, base: Conversation, body: RunRequest): Promise<RunEnd> {
    return this.#follow(threadId, base, undefined, false, (signal) => ({
      stream: this.api.streamRun(threadId, body, signal),
    }));
  }

  /**
   * Follows a run already running on `threadId` (found after a reload): its events are replayed
   * from the start over `base`, the thread's stored state.
   */
  join(threadId: string, runId: string, base: Conversation): Promise<RunEnd> {
    return this.#follow(threadId, base, runId, true, () => ({ runId, lastEventId: "-1" }));
  }

  /** Asks the server to cancel the run of `threadId` (only that conversation's). */
  async cancel(threadId: string): Promise<void> {
    const run = this.#runs.get(threadId);
    if (!run?.runId || run.ended) return;
    run.cancelRequested = true;
    this.onChange();
    await this.api.cancelRun(threadId, run.runId);
  }

  /** Stops following every run (the page goes away; the runs go on on the server). */
  dispose(): void {
    for (const controller of this.#controllers.values()) controller.abort();
    this.#controllers.clear();
    this.#runs.clear();
  }

  async #follow(
    threadId: string,
    base: Conversation,
    runId: string | undefined,
    replay: boolean,
    start: (signal: AbortSignal) => FollowStart,
  ): Promise<RunEnd> {
    const run: LiveRun = {
      threadId,
      runId,
      conversation: base,
      connection: "live",
      cancelRequested: false,
      ended: false,
    };
    const controller = new AbortController();
    this.#runs.set(threadId, run);
    this.#controllers.set(threadId, controller);
    // The SDK's stream handling folds the events into the conversation (run-conversation.ts).
    const folded = new RunConversation(base, {
      replay,
      onChange: (conversation) => {
        run.conversation = conversation;
        this.onChange();
      },
    });
    this.onChange();
    let error: unknown;
    try {
      await followRun(
        start(controller.signal),
        {
          join: (id, lastEventId, signal) => this.api.joinRun(threadId, id, lastEventId, signal),
          status: async (id) => (await this.api.run(threadId, id)).status,
        },
        {
          onEvent: (event) => {
            if (event.event === "metadata") {
              const announced = (event.data as { run_id?: unknown } | null)?.run_id;
              if (typeof announced === "string") run.runId = announced;
            }
            folded.push(event.event, event.data);
          },
          onConnection: (connection) => {
            run.connection = connection;
            this.onChange();
          },
        },
        {
          signal: controller.signal,
          isFatal: (caught) =>
            caught instanceof ApiError && caught.status >= 400 && caught.status !== 404
              ? caught.status < 500
              : false,
          isNotFound: (caught) => caught instanceof ApiError && caught.status === 404,
        },
      );
    } catch (caught) {
      error = caught;
    } finally {
      run.conversation = await folded.end();
      run.ended = true;
      run.connection = "live";
      if (this.#controllers.get(threadId) === controller) this.#controllers.delete(threadId);
    }
    this.onChange();
    return { run, accepted: run.runId !== undefined, error };
  }
}
