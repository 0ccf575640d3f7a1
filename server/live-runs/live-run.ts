import { isFinishedStatus } from "../../contract.js";
import { ErrorCode, SubagentGraphError } from "../../errors.js";
import type { RunInfo } from "../../runs/run-info.js";
import type { Runtime } from "../../runtime.js";
import { type RunJson, runJson } from "../protocol/run-json.js";
import type { RunStreamEvent } from "../protocol/sse.js";
import type { RemoteRuns } from "./remote-runs.js";
import type { ManagedRun } from "./run-registry.js";

/** Following a run's events (see {@link LiveRun.follow}). */
export interface RunFollow {
  /** Stops following; `done` then never settles. */
  stop(): void;
  /** Settles once the run's last event has been handed over. */
  done: Promise<void>;
}

/**
 * A run as every door reads it (the legacy routes, the thread protocol), whichever process runs
 * it: this one (its events in memory) or another of a fleet (its events in the shared log).
 */
export interface LiveRun {
  readonly runId: string;
  readonly threadId: string;
  /** The run as the API shows it now. */
  json(): RunJson;
  /** Hands over its events after `afterId` (-1: all of them), then each new one, to its end. */
  follow(afterId: number, sink: (event: RunStreamEvent) => void): Promise<RunFollow>;
  /**
   * Its final values once it ends (with `__interrupt__` when it paused), or `{ __error__ }`;
   * undefined when `signal` (the caller left) aborts first.
   */
  result(signal?: AbortSignal): Promise<unknown>;
  /**
   * Cancels it and its subagents (through its record too, which another process polls);
   * `clientLeft`: because the client that asked to cancel on disconnect has gone.
   */
  cancel(options?: { clientLeft?: boolean }): Promise<void>;
  /** Whether it has ended, as far as this process knows. */
  readonly finished: boolean;
}

/** A run of this process. */
export class LocalRun implements LiveRun {
  constructor(
    private readonly run: ManagedRun,
    private readonly runtime: Runtime,
  ) {}

  get runId(): string {
    return this.run.runId;
  }

  get threadId(): string {
    return this.run.options.threadId;
  }

  get finished(): boolean {
    return this.run.finished;
  }

  json(): RunJson {
    return this.run.toJSON();
  }

  async follow(afterId: number, sink: (event: RunStreamEvent) => void): Promise<RunFollow> {
    let ended!: () => void;
    const done = new Promise<void>((resolve) => {
      ended = resolve;
    });
    const unsubscribe = this.run.subscribe(afterId, (event) => {
      if (event === "end") ended();
      else sink(event);
    });
    return { stop: unsubscribe, done };
  }

  async result(signal?: AbortSignal): Promise<unknown> {
    const left = new Promise<"left">((resolve) => {
      if (signal?.aborted) resolve("left");
      signal?.addEventListener("abort", () => resolve("left"), { once: true });
    });
    if ((await Promise.race([this.run.done, left])) === "left") return undefined;
    if (this.run.status === "error" && this.run.error) return { __error__: this.run.error };
    return this.run.finalValues ?? {};
  }

  async cancel(options?: { clientLeft?: boolean }): Promise<void> {
    if (this.run.finished) return;
    if (options?.clientLeft) {
      this.run.controller.abort(new Error("client disconnected"));
      return;
    }
    // The request on its row first: the run's record ends with the reason it gives.
    await this.runtime.cancel(this.run.options.uid, this.run.runId);
    this.run.controller.abort(new Error(`run ${this.run.runId} cancelled`));
  }
}

/** A run of another process of a fleet (or one over), read from the shared store and log. */
export class StoredRun implements LiveRun {
  constructor(
    private readonly info: RunInfo,
    private readonly uid: string,
    private readonly runtime: Runtime,
    private readonly remote: RemoteRuns | undefined,
  ) {}

  get runId(): string {
    return this.info.run_id;
  }

  get threadId(): string {
    return this.info.thread_id;
  }

  get finished(): boolean {
    return isFinishedStatus(this.info.status);
  }

  json(): RunJson {
    return runJson(this.info);
  }

  async follow(afterId: number, sink: (event: RunStreamEvent) => void): Promise<RunFollow> {
    const follow = await this.requireRemote().follow(this.uid, this.info, afterId, sink);
    return { stop: () => follow.stop(), done: follow.done.then(() => undefined) };
  }

  result(signal?: AbortSignal): Promise<unknown> {
    return this.requireRemote().result(this.uid, this.info, signal);
  }

  async cancel(): Promise<void> {
    await this.runtime.cancel(this.uid, this.info.run_id);
  }

  private requireRemote(): RemoteRuns {
    // `RunService.find` gives a StoredRun only where a shared log exists (PostgreSQL).
    if (!this.remote) {
      throw new SubagentGraphError(
        ErrorCode.Internal,
        `run "${this.info.run_id}" is another process's, and only a fleet's shared log (PostgreSQL) carries its events`,
      );
    }
    return this.remote;
  }
}
