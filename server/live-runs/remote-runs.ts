import { INTERRUPT } from "@langchain/langgraph";
import { isFinishedStatus } from "../../contract.js";
import type { LoggedRunEvent, RunEventFollow, RunEventLog } from "../../runs/run-event-log.js";
import type { RunInfo } from "../../runs/run-info.js";
import type { Runtime } from "../../runtime.js";
import { serializeSnapshot, serializeValue } from "../protocol/serialize.js";

/**
 * The events and results of runs that another process runs (or ran), read from the shared event
 * log (`runs/run-event-log.ts`): what `ManagedRun` gives for the runs of this process.
 */
export class RemoteRuns {
  constructor(
    private readonly runtime: Runtime,
    private readonly log: RunEventLog,
  ) {}

  /**
   * Waits for `run` to end and answers with the thread's values then, or the API's
   * `{ __error__ }` (status 200) if it failed. A run followed from before its end answers with
   * the final values its end marker carries, without reading the thread back; a run over
   * already answers with the thread's values now, as the API's join does. `signal` stops the
   * wait (the caller left): the answer is then undefined.
   */
  async result(uid: string, run: RunInfo, signal?: AbortSignal): Promise<unknown> {
    let error: unknown;
    const followedLive = !isFinishedStatus(run.status);
    const follow = await this.follow(uid, run, -1, (event) => {
      if (event.event === "error") error = event.data;
    });
    if (signal?.aborted) follow.stop();
    signal?.addEventListener("abort", () => follow.stop(), { once: true });
    const left = new Promise<"left">((resolve) => {
      signal?.addEventListener("abort", () => resolve("left"), { once: true });
    });
    if ((await Promise.race([follow.done, left])) === "left") return undefined;
    if (error !== undefined) return { __error__: error };
    const ending = followedLive ? follow.ending() : undefined;
    if (ending) return ending.values;
    const snapshot = await this.runtime.threads.state(uid, run.thread_id);
    const values = snapshot ? serializeSnapshot(snapshot, run.thread_id).values : {};
    if (run.status !== "interrupted") return values;
    // A paused run answers with the requests its thread waits on, as it does when followed to
    // its end (its end marker's values) and as a run of this process does (`ManagedRun`).
    const pending = await this.runtime.threads.interrupts(uid, run.thread_id);
    return pending.length > 0 ? { ...values, [INTERRUPT]: serializeValue(pending) } : values;
  }

  /** Follows `run`'s log; a run already over whose log is gone (pruned) ends at once. */
  async follow(
    uid: string,
    run: RunInfo,
    afterId: number,
    sink: (event: LoggedRunEvent) => void,
  ): Promise<RunEventFollow> {
    const isOver = async () =>
      isFinishedStatus((await this.runtime.runInfo(uid, run.run_id))?.status);
    if (isFinishedStatus(run.status) && !(await this.log.has(run.run_id))) {
      return { stop: () => undefined, done: Promise.resolve("over"), ending: () => undefined };
    }
    return this.log.follow(run.run_id, afterId, sink, isOver);
  }
}
