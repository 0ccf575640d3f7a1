import { INTERRUPT } from "@langchain/langgraph";
import type { FastifyReply, FastifyRequest } from "fastify";
import type { LoggedRunEvent, RunEventFollow, RunEventLog } from "../../runs/run-event-log.js";
import type { RunInfo } from "../../runs/run-info.js";
import type { Runtime } from "../../runtime.js";
import { serializeSnapshot, serializeValue } from "../protocol/serialize.js";
import { replyHeaders, sseFrame, startSse } from "../protocol/sse.js";
import { unscopeText } from "../thread-scope.js";

/**
 * Streams and joins of runs that another process runs (or ran), read from the shared event log
 * (`runs/run-event-log.ts`): what `ManagedRun` gives for the runs of this process.
 */
export class RemoteRuns {
  constructor(
    private readonly runtime: Runtime,
    private readonly log: RunEventLog,
  ) {}

  /**
   * Streams `run`'s events after `afterId` (-1: all) as SSE until its end; a client that leaves
   * with `cancelOnDisconnect` cancels it (through its record, which its process polls).
   */
  async stream(
    request: FastifyRequest,
    reply: FastifyReply,
    run: RunInfo,
    afterId: number,
    cancelOnDisconnect: boolean,
  ): Promise<void> {
    const shown = (text: string) => unscopeText(request.uid, text);
    // A hijacked reply skips the onSend hooks: the hooks' headers (CORS) and the caller's ids
    // are put in here.
    const headers = {
      ...replyHeaders(reply),
      "content-location": shown(`/threads/${run.thread_id}/runs/${run.run_id}`),
    };
    reply.hijack();
    const response = reply.raw;
    startSse(response, headers);
    let follow: RunEventFollow;
    try {
      follow = await this.follow(request.uid, run, afterId, (event) => {
        response.write(shown(sseFrame(event)));
      });
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      response.end(
        sseFrame({
          id: afterId + 1,
          event: "error",
          data: { error: "INTERNAL", message: `the run's events cannot be read: ${message}` },
        }),
      );
      return;
    }
    const leave = () => {
      follow.stop();
      if (!response.writableFinished && cancelOnDisconnect) {
        request.log.info({ runId: run.run_id }, "client disconnected: cancelling the run");
        void this.runtime.cancel(request.uid, run.run_id).catch(() => undefined);
      }
    };
    if (response.destroyed) return leave();
    void follow.done.then(() => response.end());
    response.on("close", leave);
  }

  /**
   * Waits for `run` to end and answers with the thread's values then, or the API's
   * `{ __error__ }` (status 200) if it failed. A run followed from before its end answers with
   * the final values its end marker carries, without reading the thread back; a run over
   * already answers with the thread's values now, as the API's join does.
   */
  async join(
    request: FastifyRequest,
    reply: FastifyReply,
    run: RunInfo,
    cancelOnDisconnect: boolean,
  ): Promise<unknown> {
    let error: unknown;
    const followedLive = !isOverStatus(run.status);
    const follow = await this.follow(request.uid, run, -1, (event) => {
      if (event.event === "error") error = event.data;
    });
    const onClose = () => {
      if (reply.raw.writableFinished) return;
      follow.stop();
      if (cancelOnDisconnect) void this.runtime.cancel(request.uid, run.run_id).catch(() => null);
    };
    reply.raw.on("close", onClose);
    await follow.done;
    reply.raw.off("close", onClose);
    if (error !== undefined) return { __error__: error };
    const ending = followedLive ? follow.ending() : undefined;
    if (ending) return ending.values;
    const snapshot = await this.runtime.threads.state(request.uid, run.thread_id);
    const values = snapshot ? serializeSnapshot(snapshot, run.thread_id).values : {};
    if (run.status !== "interrupted") return values;
    // A paused run answers with the requests its thread waits on, as it does when followed to
    // its end (its end marker's values) and as a run of this process does (`ManagedRun`).
    const pending = await this.runtime.threads.interrupts(request.uid, run.thread_id);
    return pending.length > 0 ? { ...values, [INTERRUPT]: serializeValue(pending) } : values;
  }

  /** Follows `run`'s log; a run already over whose log is gone (pruned) ends at once. */
  private async follow(
    uid: string,
    run: RunInfo,
    afterId: number,
    sink: (event: LoggedRunEvent) => void,
  ): Promise<RunEventFollow> {
    const isOver = async () => isOverStatus((await this.runtime.runInfo(uid, run.run_id))?.status);
    if (isOverStatus(run.status) && !(await this.log.has(run.run_id))) {
      return { stop: () => undefined, done: Promise.resolve("over"), ending: () => undefined };
    }
    return this.log.follow(run.run_id, afterId, sink, isOver);
  }
}

/** A run neither queued nor running (or gone) is over. */
function isOverStatus(status: string | undefined): boolean {
  return status !== "pending" && status !== "running";
}
