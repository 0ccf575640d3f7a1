import type { ApprovalResponse } from "../middleware/approval-request.js";
import type { RunQueue } from "../store/run-queue.js";
import type { RunRepository, StoredRunStatus } from "../store/runs.js";
import type { AbandonedRuns } from "./abandoned-runs.js";
import { ChunkTranslator, type GraphStreamChunk, type RunEvent, type RunResult } from "./events.js";
import { type RunInfo, runInfoOf } from "./run-info.js";
import type { RunLifecycle, RunRequest } from "./run-lifecycle.js";
import type { RunMetrics } from "./run-metrics.js";
import type { RunningRuns } from "./running-runs.js";

/** LangGraph stream modes `Runtime.streamChunks` passes through. */
export type GraphStreamMode = "values" | "updates" | "messages" | "custom";

/** What `Runtime.streamChunks` yields: a start, LangGraph's own chunks, then the result. */
export type RawRunItem =
  | { kind: "started"; runId: string; threadId: string; agentId: string; agentSlug: string }
  | { kind: "chunk"; chunk: GraphStreamChunk }
  | { kind: "finished"; result: RunResult };

/** Running, streaming, cancelling and reading runs (the runtime's members of the same names). */
export interface RunApi {
  /** Runs the agent on the thread until it answers. */
  run(request: RunRequest): Promise<RunResult>;
  /** Same as {@link RunApi.run}, yielding events as they happen; the last is `run_finished`. */
  stream(request: RunRequest): AsyncGenerator<RunEvent>;
  /**
   * Same as {@link RunApi.run}, yielding LangGraph's own stream chunks `[namespace, mode, data]` for
   * `streamMode` (with subgraphs: a subagent's chunks, its tokens included, come under
   * `tools:<task id>` as LangGraph streams a graph run inside a tool, its tokens with the
   * child's `thread_id` in their metadata; see `contract.ts`). For protocol adapters.
   */
  streamChunks(
    request: RunRequest,
    streamMode: readonly GraphStreamMode[],
  ): AsyncGenerator<RawRunItem>;
  /**
   * Checks `request.command.resume` against the requests for approval its thread waits on, as
   * {@link RunApi.run} does before it runs, but runs and writes nothing: what a process that
   * queues a resume for a fleet's workers checks first, so a bad resume is refused with nothing
   * queued. Returns it as LangGraph's map from interrupt id to response, which answers exactly
   * the requests it was checked against (a single `{ decisions }` would answer whatever one
   * request is pending when the run starts).
   *
   * @throws SubagentGraphError `VALIDATION_FAILED` naming `command.resume…` (or `command` when
   *   nothing is pending), as `run` would.
   */
  checkResume(request: RunRequest): Promise<Record<string, ApprovalResponse>>;
  /**
   * Stops a running run of `uid` whichever process runs it (this one at once, with every
   * running subagent; another at its next heartbeat); false when `uid` has no such run running.
   */
  cancel(uid: string, runId: string): Promise<boolean>;
  /**
   * A run's record, whichever process ran it: its thread, agent, status and the subagent
   * records it made (whatever its end). A run whose process stopped before it finished reads
   * `interrupted`, with `status_reason` saying so.
   */
  runInfo(uid: string, runId: string): Promise<RunInfo | undefined>;
  /**
   * The records of `uid`'s runs on `threadId` (as {@link RunApi.runInfo} has them), newest first,
   * whichever process ran them; `status` keeps only those, `offset`/`limit` page (default all).
   *
   * @throws SubagentGraphError `NOT_FOUND` (field `thread_id`) when the thread is not `uid`'s.
   */
  listRuns(
    uid: string,
    threadId: string,
    options?: { status?: StoredRunStatus; limit?: number; offset?: number },
  ): Promise<RunInfo[]>;
}

/** What the run API needs from the runtime. */
export interface RunApiDeps {
  /** Throws once the runtime is closed. */
  ensureOpen(): void;
  lifecycle: RunLifecycle;
  running: RunningRuns;
  runRows: RunRepository;
  /** Settles the rows of runs whose process stopped before reading them. */
  abandoned: AbandonedRuns;
  /** Throws `NOT_FOUND` unless `uid` owns the thread. */
  checkThread(uid: string, threadId: string): Promise<unknown>;
  /** Counts every run started and ended here. */
  metrics: RunMetrics;
  /** The fleet's queue (PostgreSQL): a pending run is cancelled there. */
  queue?: RunQueue | undefined;
}

/**
 * The run entry points over one {@link RunLifecycle}: every one prepares, executes, finishes or
 * fails, and releases the run, whatever way its caller consumes it.
 */
export function createRunApi(deps: RunApiDeps): RunApi {
  const { ensureOpen, lifecycle, running, runRows, abandoned, checkThread, metrics, queue } = deps;

  /**
   * `lifecycle.prepare`, counted: every prepared run is released, which counts its end. A
   * queued run refused at its start (its agent deleted since it was queued, nothing left to
   * run) is a run that ended `error` (its record says so), so it counts as one.
   */
  async function prepare(request: RunRequest) {
    let prepared: Awaited<ReturnType<RunLifecycle["prepare"]>>;
    try {
      prepared = await lifecycle.prepare(request);
    } catch (error) {
      // The worker ends such a run `error` (see `server/live-runs/run-registry.ts`).
      if (request.claimed) {
        metrics.started();
        metrics.finished("error");
      }
      throw error;
    }
    metrics.started();
    return prepared;
  }

  async function release(prepared: Awaited<ReturnType<RunLifecycle["prepare"]>>) {
    try {
      await prepared.release(prepared.outcome.status);
    } finally {
      metrics.finished(prepared.outcome.status);
    }
  }

  async function* streamChunks(
    request: RunRequest,
    streamMode: readonly GraphStreamMode[],
  ): AsyncGenerator<RawRunItem> {
    const prepared = await prepare(request);
    try {
      yield {
        kind: "started",
        runId: prepared.runId,
        threadId: prepared.threadId,
        agentId: prepared.record.id,
        agentSlug: prepared.record.slug,
      };
      // The root graph's state after its last step, when the stream carries it.
      let finalValues: unknown;
      for await (const chunk of lifecycle.chunks(prepared, streamMode)) {
        const [namespace, mode, payload] = chunk;
        if (mode === "values" && namespace.length === 0) finalValues = payload;
        yield { kind: "chunk", chunk };
      }
      yield { kind: "finished", result: await lifecycle.finish(prepared, finalValues) };
    } catch (error) {
      throw await lifecycle.failure(prepared, error);
    } finally {
      await release(prepared);
    }
  }

  return {
    async run(request) {
      const prepared = await prepare(request);
      try {
        const finalValues = await prepared.graph.invoke(prepared.input, prepared.config);
        return await lifecycle.finish(prepared, finalValues);
      } catch (error) {
        throw await lifecycle.failure(prepared, error);
      } finally {
        await release(prepared);
      }
    },

    async *stream(request) {
      // The same run as streamChunks, its chunks turned into events.
      let translator = new ChunkTranslator("");
      // `values` only for the result (no event): the final state, not a read of the thread.
      const modes: GraphStreamMode[] = ["updates", "messages", "custom", "values"];
      for await (const item of streamChunks(request, modes)) {
        if (item.kind === "started") {
          translator = new ChunkTranslator(item.threadId);
          yield {
            type: "run_started",
            runId: item.runId,
            threadId: item.threadId,
            agent: item.agentSlug,
          };
        } else if (item.kind === "chunk") {
          yield* translator.translate(item.chunk);
        } else {
          yield { type: "run_finished", result: item.result };
        }
      }
    },

    streamChunks,

    checkResume: (request) => lifecycle.checkResume(request),

    async cancel(uid, runId) {
      ensureOpen();
      // The request goes on the run's row first, whichever process runs it: it carries the
      // reason the run's record ends with. A run of this process then stops at once; one
      // elsewhere at its next heartbeat, when its process reads the row. A queued run no worker
      // has claimed yet ends there and then.
      const requested = await runRows.requestCancel(uid, runId);
      return (
        running.cancel(uid, runId) ||
        requested ||
        ((await queue?.cancelPending(uid, runId)) ?? false)
      );
    },

    async runInfo(uid, runId) {
      ensureOpen();
      const row = await runRows.get(uid, runId);
      // A row left running by a stopped process is recorded interrupted before it is shown.
      return row ? runInfoOf(await abandoned.settle(row)) : undefined;
    },

    async listRuns(uid, threadId, listOptions = {}) {
      await checkThread(uid, threadId);
      // Rows left running by a stopped process are recorded interrupted first, so the status
      // filter and the pages see them as they truly stand.
      for (const row of await runRows.running(threadId)) await abandoned.settle(row);
      return (await runRows.listForThread(uid, threadId, listOptions)).map(runInfoOf);
    },
  };
}
