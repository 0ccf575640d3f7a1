import { randomUUID } from "node:crypto";
import { isFinishedStatus } from "../../contract.js";
import { ErrorCode, SubagentGraphError } from "../../errors.js";
import type { Fleet } from "../../runs/fleet.js";
import { type RunInfo, runInfoOf } from "../../runs/run-info.js";
import type { Runtime } from "../../runtime.js";
import type { MultitaskStrategy, NewQueuedRun } from "../../store/run-queue.js";
import type { StoredRunStatus } from "../../store/runs.js";
import type { ThreadInfo } from "../../threads/thread-api.js";
import { chatAgent } from "../chat-agent.js";
import { parseRunCreate, type RunCreateBody } from "../protocol/run-create.js";
import { type RunJson, runJson } from "../protocol/run-json.js";
import type { WireStreamMode } from "../protocol/translate.js";
import { newThreadId, type ThreadRef } from "../thread-scope.js";
import { type LiveRun, LocalRun, StoredRun } from "./live-run.js";
import type { QueueWorker } from "./queue-worker.js";
import { RemoteRuns } from "./remote-runs.js";
import {
  busyWhileResuming,
  checkpointNotFound,
  isNotFound,
  nothingToResume,
  nothingToRun,
  runNotFound,
  threadBusy,
} from "./run-refusals.js";
import type { RunRegistry } from "./run-registry.js";

/** A run just asked for, and whether its client's leaving cancels it. */
export interface StartedRun {
  run: LiveRun;
  cancelOnDisconnect: boolean;
}

/** A thread's status as the API names it. */
export type ThreadStatus = "idle" | "busy" | "interrupted" | "error";

/**
 * The one way the server's doors (the legacy run routes, the thread protocol) start, find, read,
 * cancel and wait for runs: it decides whether a run is this process's own or queued for a
 * fleet's workers (and takes a worker slot for it here when one is free), and reads a run the
 * same way whichever process runs it. The routes only parse requests and shape answers.
 */
export class RunService {
  /** Runs of other processes stream from the shared event log (PostgreSQL only). */
  private readonly remote: RemoteRuns | undefined;

  constructor(
    private readonly runtime: Runtime,
    private readonly registry: RunRegistry,
    private readonly worker: QueueWorker | undefined,
  ) {
    this.remote = runtime.runEvents ? new RemoteRuns(runtime, runtime.runEvents) : undefined;
  }

  /**
   * Starts a run on a thread of the caller (created first with `if_not_exists: "create"`, under
   * the caller's own id: see `server/thread-scope.ts`). Every refusal comes before the thread is
   * created or anything is queued.
   */
  async start(
    uid: string,
    thread: ThreadRef,
    body: RunCreateBody,
    defaultModes: WireStreamMode[],
  ): Promise<StartedRun> {
    const parsed = parseRunCreate(body, defaultModes);
    if (parsed.multitaskStrategy !== "reject" && !this.runtime.fleet) {
      throw new SubagentGraphError(
        ErrorCode.Unsupported,
        `multitask_strategy: "${parsed.multitaskStrategy}" needs a fleet's queue, which runs on PostgreSQL (DATABASE_URL): one process on SQLite runs one run per thread at a time ("reject", the default, answers 409 while busy)`,
        { field: "multitask_strategy" },
      );
    }
    const agent = await chatAgent(this.runtime, uid, parsed.assistantId);
    let threadId = thread.id;
    if (!thread.exists) {
      // The runtime's answer for a thread the caller does not have.
      if (!parsed.createThread) await this.runtime.threads.check(uid, thread.id);
      if (parsed.checkpointId) throw checkpointNotFound(parsed.checkpointId, thread.external, body);
      if (parsed.command) throw nothingToResume(thread.external);
      if (parsed.input === undefined) throw nothingToRun(thread.external, undefined);
      threadId = newThreadId(uid, thread.external);
      await this.runtime.threads.create(uid, { threadId, ifExists: "do_nothing" });
    } else if (parsed.command) {
      if (this.registry.forThread(uid, threadId).some((run) => !run.finished)) {
        throw busyWhileResuming(thread.external);
      }
      const bound = (await this.runtime.threads.get(uid, threadId)).agentId;
      if (bound && bound !== agent.id) {
        // The requests wait in that agent's graph (its gates, its tools): another agent's
        // graph would not find the step that asked, nor check an edit against its tools.
        throw new SubagentGraphError(
          ErrorCode.Validation,
          `assistant_id: thread "${thread.external}" waits for approval under assistant "${bound}", not "${body.assistant_id}": resume it with assistant_id "${bound}"`,
          { field: "assistant_id" },
        );
      }
      if (parsed.checkpointId) {
        await this.checkHeadCheckpoint(uid, thread, body);
        parsed.checkpointId = undefined;
      }
      // Checked before anything is queued or written (the runtime checks it again as the run
      // starts): a bad resume is refused naming its field, and the requests stay pending.
      // A fleet's worker gets the checked map by interrupt id, which answers exactly the
      // requests seen here whenever it runs.
      if (this.runtime.fleet) {
        const resume = await this.runtime.checkResume({
          uid,
          threadId,
          agent: agent.id,
          command: parsed.command,
        });
        parsed.command = { resume };
      }
    } else if (parsed.input === undefined || parsed.checkpointId) {
      // Checked here as well as by the runtime, which refuses only after it has recorded the
      // run: a refused request writes nothing. A queued run (fleet) would find an unknown
      // checkpoint only once a worker ran it, as a failed run on a thread left in error.
      const state = await this.runtime.threads
        .state(uid, threadId, parsed.checkpointId ? { checkpointId: parsed.checkpointId } : {})
        .catch((error: unknown) => {
          if (isNotFound(error) && (error as SubagentGraphError).field === "checkpoint_id") {
            throw checkpointNotFound(parsed.checkpointId ?? "", thread.external, body);
          }
          throw error;
        });
      if (parsed.input === undefined && (!state || state.next.length === 0))
        throw nothingToRun(thread.external, parsed.checkpointId);
    }
    const cancelOnDisconnect = parsed.cancelOnDisconnect;
    if (this.runtime.fleet) {
      const queued = await this.enqueue(this.runtime.fleet, parsed.multitaskStrategy, {
        uid,
        threadId,
        agentId: agent.id,
        metadata: parsed.metadata,
        request: {
          ...(parsed.input === undefined ? {} : { input: parsed.input }),
          ...(parsed.inputMessageId ? { inputMessageId: parsed.inputMessageId } : {}),
          ...(parsed.checkpointId ? { checkpointId: parsed.checkpointId } : {}),
          ...(parsed.command ? { command: parsed.command } : {}),
          streamModes: [...parsed.streamModes],
          subgraphs: parsed.subgraphs,
          multitaskStrategy: parsed.multitaskStrategy,
        },
      });
      return { run: new StoredRun(queued, uid, this.runtime, this.remote), cancelOnDisconnect };
    }
    const run = await this.registry
      .start({
        uid,
        threadId,
        agentId: agent.id,
        input: parsed.input,
        inputMessageId: parsed.inputMessageId,
        checkpointId: parsed.checkpointId,
        command: parsed.command,
        streamModes: parsed.streamModes,
        subgraphs: parsed.subgraphs,
        metadata: parsed.metadata,
      })
      .catch((error: unknown) => {
        // The runtime names its option `checkpointId`; over HTTP the field is the body's.
        if (isNotFound(error) && (error as SubagentGraphError).field === "checkpointId") {
          throw checkpointNotFound(parsed.checkpointId ?? "", thread.external, body);
        }
        throw error;
      });
    return { run: new LocalRun(run, this.runtime), cancelOnDisconnect };
  }

  /**
   * A run of the caller on that thread, to follow or wait for: this process's own, else (on a
   * fleet's shared log) whichever process runs or ran it.
   * @throws SubagentGraphError `NOT_FOUND` (field `run_id`)
   */
  async find(uid: string, threadId: string, runId: string): Promise<LiveRun> {
    const local = this.registry.get(uid, threadId, runId);
    if (local) return new LocalRun(local, this.runtime);
    const params = { thread_id: threadId, run_id: runId };
    // On SQLite (one process) there is no shared log: a run not here is not found.
    if (!this.remote) throw runNotFound(params, "its events are kept by the process that ran it");
    return new StoredRun(await this.stored(uid, params), uid, this.runtime, this.remote);
  }

  /** A run's record as the API shows it, whichever process runs or ran it. */
  async get(uid: string, threadId: string, runId: string): Promise<RunJson> {
    return runJson(this.admitted(await this.stored(uid, { thread_id: threadId, run_id: runId })));
  }

  /** The runs of a thread, newest first, from the shared store. */
  async list(
    uid: string,
    threadId: string,
    query: { limit: number; offset: number; status?: StoredRunStatus | "timeout" },
  ): Promise<RunJson[]> {
    // Runs are recorded pending (queued, on PostgreSQL), running, then with how they ended:
    // none is ever timeout.
    if (query.status === "timeout") return [];
    const infos = await this.runtime.listRuns(uid, threadId, {
      limit: query.limit,
      offset: query.offset,
      ...(query.status ? { status: query.status } : {}),
    });
    return infos.map((info) => runJson(this.admitted(info)));
  }

  /**
   * `info` as a client should read it: a run this process started that still waits for its turn
   * on the event loop (`run-admission.ts`) is recorded running (it holds its thread), but has not
   * started: `pending`.
   */
  private admitted(info: RunInfo): RunInfo {
    if (info.status !== "running") return info;
    const local = this.registry.get(info.owner_uid, info.thread_id, info.run_id);
    return local?.status === "pending" ? { ...info, status: "pending" } : info;
  }

  /**
   * Cancels a run and its subagents. A run of this process stops at once; one of another
   * process is flagged in the database and stops at its next heartbeat. With `wait`, resolves
   * once it has stopped.
   */
  async cancel(uid: string, threadId: string, runId: string, wait: boolean): Promise<void> {
    const run = await this.find(uid, threadId, runId).catch(async (error: unknown) => {
      // Without a shared log a run of another process is still cancelled through its record.
      if (!isNotFound(error) || this.remote) throw error;
      await this.stored(uid, { thread_id: threadId, run_id: runId });
      return undefined;
    });
    if (run) await run.cancel();
    else await this.runtime.cancel(uid, runId);
    if (!wait) return;
    if (run instanceof LocalRun) {
      await run.result();
      return;
    }
    await this.settled(uid, { thread_id: threadId, run_id: runId });
  }

  /**
   * A thread's status: `busy` while a run of it is pending or running in any process, `error`
   * when its latest run failed, `interrupted` when its state has a next step left (a pause for
   * approval, a cancel mid-turn), else `idle`.
   */
  threadStatus(uid: string, info: ThreadInfo, next: readonly string[] | undefined): ThreadStatus {
    const running = this.registry.forThread(uid, info.threadId).some((run) => !run.finished);
    if (info.busy || running) return "busy";
    if (info.lastRunFailed || this.registry.lastFailed(uid, info.threadId)) return "error";
    return next && next.length > 0 ? "interrupted" : "idle";
  }

  /** Forgets the runs of a deleted thread (see `RunRegistry.forgetThread`). */
  forgetThread(uid: string, threadId: string): void {
    this.registry.forgetThread(uid, threadId);
  }

  /**
   * Writes a run in the fleet's queue (PostgreSQL), which wakes the workers as it commits; its
   * record as it stands then (pending, or claimed already).
   * @throws SubagentGraphError `THREAD_BUSY` when the thread has a run pending or running
   */
  private async enqueue(
    fleet: Fleet,
    strategy: MultitaskStrategy,
    run: Omit<NewQueuedRun, "runId">,
  ): Promise<RunInfo> {
    const runId = randomUUID();
    // A worker here with a free slot starts a run that can go at once itself, without the
    // round trip of a wake-up call and a claim (`RunQueue.enqueueOrClaim` says when).
    const slot = this.worker?.reserve();
    let outcome: Awaited<ReturnType<typeof fleet.queue.enqueueOrClaim>>;
    try {
      const claimer = slot ? { runner: fleet.runner, leaseMs: fleet.leaseMs } : undefined;
      outcome = await fleet.queue.enqueueOrClaim({ ...run, runId }, strategy, claimer);
    } catch (error) {
      slot?.release();
      throw error;
    }
    if (typeof outcome === "object") {
      slot?.run(outcome);
      return runInfoOf(outcome.row);
    }
    slot?.release();
    if (outcome === "refused") throw threadBusy(run.threadId);
    const info = await this.runtime.runInfo(run.uid, runId);
    if (!info) throw runNotFound({ thread_id: run.threadId, run_id: runId });
    return info;
  }

  /**
   * A resume may name the checkpoint it answers only as `useStream` does: the thread's newest,
   * where the requests wait (the same as leaving it out). Any other is refused, since a resume
   * goes on from the newest checkpoint.
   * @throws SubagentGraphError `VALIDATION_FAILED` naming `checkpoint_id` or `checkpoint`
   */
  private async checkHeadCheckpoint(
    uid: string,
    thread: ThreadRef,
    body: RunCreateBody,
  ): Promise<void> {
    const field = body.checkpoint_id ? "checkpoint_id" : "checkpoint";
    const asked = body.checkpoint_id || body.checkpoint?.checkpoint_id;
    const head = (await this.runtime.threads.state(uid, thread.id))?.config.configurable
      ?.checkpoint_id as string | undefined;
    if (head !== undefined && head === asked) return;
    throw new SubagentGraphError(
      ErrorCode.Validation,
      `${field}: command.resume answers the requests the thread's newest checkpoint${head ? ` ("${head}")` : ""} waits on, not checkpoint "${asked}": leave ${field} out`,
      { field },
    );
  }

  /** A run's record in the shared database (any process's), if it is `uid`'s and on that thread. */
  private async stored(uid: string, params: { thread_id: string; run_id: string }) {
    const row = await this.runtime.runInfo(uid, params.run_id);
    if (!row || row.thread_id !== params.thread_id) throw runNotFound(params);
    return row;
  }

  /** Polls a run of another process until it is no longer pending or running (at most a minute). */
  private async settled(uid: string, params: { thread_id: string; run_id: string }) {
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline) {
      if (isFinishedStatus((await this.stored(uid, params)).status)) return;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}
