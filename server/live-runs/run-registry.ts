import { randomUUID } from "node:crypto";
import { INTERRUPT } from "@langchain/langgraph";
import { isFinishedStatus, type RecordedRunStatus } from "../../contract.js";
import { ErrorCode, messageOf, SubagentGraphError } from "../../errors.js";
import type { PendingApproval } from "../../middleware/approval-request.js";
import type { AsyncTask } from "../../middleware/async-task-records.js";
import { runRecordsSince, type SubagentRun } from "../../middleware/subagent-runs.js";
import type { GraphStreamChunk } from "../../runs/events.js";
import type { Fleet } from "../../runs/fleet.js";
import type { RunEventWriter } from "../../runs/run-event-log.js";
import { runInfoOf } from "../../runs/run-info.js";
import type { RunRequest } from "../../runs/run-lifecycle.js";
import type { GraphStreamMode, RawRunItem, Runtime } from "../../runtime.js";
import type { ClaimedRun } from "../../store/run-queue.js";
import type { RunJson } from "../protocol/run-json.js";
import { serializeSnapshot, serializeValue } from "../protocol/serialize.js";
import type { RunStreamEvent } from "../protocol/sse.js";
import { translateForWire, WIRE_STREAM_MODES, type WireStreamMode } from "../protocol/translate.js";
import { RunAdmission } from "./run-admission.js";

/** A run's status, as the LangGraph API names them (never `timeout` here). */
export type RunStatus = RecordedRunStatus;

/** What a client asked for when it created the run. */
export interface RunOptions {
  uid: string;
  threadId: string;
  /** The agent id (the API's `assistant_id`). */
  agentId: string;
  /** The new message; undefined = run what the thread (or `checkpointId`) has next. */
  input: string | undefined;
  /** The id the client gave its message (`RunRequest.inputMessageId`). */
  inputMessageId?: string | undefined;
  checkpointId: string | undefined;
  /** Answers to the requests for approval the thread waits on (`RunRequest.command`). */
  command?: { resume: unknown } | undefined;
  streamModes: readonly WireStreamMode[];
  subgraphs: boolean;
  metadata: Record<string, unknown>;
}

/** Events kept per run for late joiners and replays; beyond it the oldest are dropped. */
const MAX_EVENTS_PER_RUN = 20_000;
/** Finished runs remembered (per process) for `GET …/runs/:id`, `join` and replays. */
const MAX_FINISHED_RUNS = 500;

type Listener = (event: RunStreamEvent | "end") => void;

/**
 * One run of the HTTP API. It runs in the background, independent of any client: every event is
 * appended to its log and broadcast to the current listeners, so a client that disconnects
 * changes nothing (unless it asked to cancel on disconnect), a second client can join, and a
 * reconnecting one can replay from any event id.
 */
export class ManagedRun {
  readonly runId: string;
  readonly createdAt: string;
  status: RunStatus = "pending";
  /** 1, or more for a queued run a worker took over after its first process died. */
  attempt = 1;
  updatedAt: string;
  /** The final state values (wire form), once the run is over. */
  finalValues: unknown;
  /** The error of a failed run, as the API's `error` event has it. */
  error: { error: ErrorCode; message: string } | undefined;
  /** Records of the task calls this run made (filled when it ends, whatever its end). */
  subagentRuns: SubagentRun[] = [];
  /** The background tasks it started or saw move on, read from its record as it ends. */
  asyncTasks: AsyncTask[] = [];
  /** Why it ended as it did, from its record (a run paused for approval names what it waits for). */
  statusReason: string | null = null;
  /**
   * It ended `interrupted` because it paused for approval (not by a cancel): it ended well, and
   * its final values carry LangGraph's `__interrupt__`.
   */
  paused = false;
  readonly done: Promise<void>;
  readonly controller = new AbortController();

  private readonly events: RunStreamEvent[] = [];
  private nextId = 0;
  private readonly listeners = new Set<Listener>();
  private finish!: () => void;
  /** Where its events also go so other processes can stream it (on PostgreSQL). */
  log: RunEventWriter | undefined;

  constructor(
    readonly options: RunOptions,
    known?: { runId: string; createdAt: string },
  ) {
    this.runId = known?.runId ?? randomUUID();
    this.createdAt = known?.createdAt ?? new Date().toISOString();
    this.updatedAt = this.createdAt;
    this.done = new Promise((resolve) => {
      this.finish = resolve;
    });
  }

  get finished(): boolean {
    return isFinishedStatus(this.status);
  }

  /** The run as the API's `Run` object (the shape of `runJson`, which reads its record). */
  toJSON(): RunJson {
    return {
      run_id: this.runId,
      thread_id: this.options.threadId,
      assistant_id: this.options.agentId,
      status: this.status,
      attempt: this.attempt,
      metadata: this.options.metadata,
      multitask_strategy: "reject" as const,
      created_at: this.createdAt,
      updated_at: this.updatedAt,
      // A run of this process ends by itself (or by a cancel, which its status says), or pauses
      // for approval, which its record says.
      status_reason: this.statusReason,
      subagent_runs: this.subagentRuns,
      async_tasks: this.asyncTasks,
    };
  }

  /**
   * Sends the logged events after `afterId` (-1: all) to `listener`, then every new one, then
   * "end". Returns the unsubscribe function.
   */
  subscribe(afterId: number, listener: Listener): () => void {
    for (const event of this.events) if (event.id > afterId) listener(event);
    if (this.finished) {
      listener("end");
      return () => undefined;
    }
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Numbers the next events from `id` on (a later attempt goes on from the log's last event). */
  continueFrom(id: number): void {
    this.nextId = id;
  }

  emit(event: string, data: unknown): void {
    const entry = { id: this.nextId++, event, data };
    this.log?.push(entry.id, event, data);
    this.events.push(entry);
    if (this.events.length > MAX_EVENTS_PER_RUN) this.events.shift();
    for (const listener of this.listeners) listener(entry);
  }

  /**
   * Stops this process's part of the run without ending it: another worker has it now and
   * writes its next events (its log gets no end marker from here).
   */
  abandon(): void {
    this.status = "pending";
    this.updatedAt = new Date().toISOString();
    for (const listener of this.listeners) listener("end");
    this.listeners.clear();
    if (this.log) void this.log.stop().then(this.finish, this.finish);
    else this.finish();
  }

  end(status: RunStatus): void {
    this.status = status;
    this.updatedAt = new Date().toISOString();
    for (const listener of this.listeners) listener("end");
    this.listeners.clear();
    // Done once the log is closed too, so a process shutting down waits for its end marker,
    // which carries a successful run's final values to its joins.
    const ending =
      (status === "success" || this.paused) && this.finalValues !== undefined
        ? { values: this.finalValues }
        : undefined;
    if (this.log) void this.log.end(ending).then(this.finish, this.finish);
    else this.finish();
  }
}

/** The runs of this process, by id and by thread. */
export class RunRegistry {
  private readonly runs = new Map<string, ManagedRun>();
  /** Queued runs this process's worker runs (streamed from the shared log, not from here). */
  private readonly executing = new Set<ManagedRun>();

  constructor(
    private readonly runtime: Runtime,
    /** Admits this process's own runs to the event loop in arrival order (`run-admission.ts`). */
    private readonly admission: RunAdmission = new RunAdmission(),
  ) {}

  /**
   * Starts a run and resolves once it has really started (so a busy thread, an unknown agent or
   * a refused thread id is an HTTP error, not an event), then runs it in the background.
   */
  async start(options: RunOptions): Promise<ManagedRun> {
    // On PostgreSQL HTTP runs are queued (`execute`); this is a process's own run, its events in
    // memory only.
    const run = new ManagedRun(options);
    const items = this.runtime.streamChunks(runRequest(run), graphModesOf(options));
    await started(items);
    this.remember(run);
    run.status = "running";
    run.emit("metadata", { run_id: run.runId, thread_id: options.threadId, attempt: 1 });
    void this.drive(run, items);
    return run;
  }

  /**
   * Runs a queued run this process's worker claimed, its events to the shared log only (any
   * process streams it from there). Resolves once it is over, whatever its end.
   */
  async execute(claimed: ClaimedRun, fleet: Fleet): Promise<RunStatus> {
    const { row, request } = claimed;
    const attempt = Number(row.attempt);
    // The run's start, which bounds the subagent records that are its own. The row's claim time
    // is the database's clock; a first attempt's children are this process's, so its own clock,
    // read after the claim, bounds them exactly whatever the clocks' skew.
    const firstClaimedAt =
      attempt === 1 ? new Date().toISOString() : (row.claimed_at ?? row.created_at);
    const log = this.runtime.runEvents;
    const run = new ManagedRun(
      {
        uid: row.owner_uid,
        threadId: row.thread_id,
        agentId: row.agent_id,
        input: request.input,
        inputMessageId: request.inputMessageId,
        checkpointId: request.checkpointId,
        command: request.command,
        streamModes: request.streamModes as WireStreamMode[],
        subgraphs: request.subgraphs,
        metadata: runInfoOf(row).metadata,
      },
      { runId: row.run_id, createdAt: row.created_at },
    );
    run.attempt = attempt;
    if (log) {
      // A later attempt goes on after the events its earlier ones wrote; a first attempt has
      // none (only a claimed run's worker writes a run's events).
      if (attempt > 1) run.continueFrom(await log.nextId(row.run_id));
      run.log = log.writer(row.run_id, row.thread_id);
    }
    this.executing.add(run);
    try {
      // A rolled-back run has stopped (this one was claimed once its thread ran nothing): its
      // record goes, as the API's rollback deletes it.
      if (request.rollbackOf && attempt === 1) {
        await fleet.queue.deleteEnded(request.rollbackOf);
        // It was the thread's first run: all the thread's checkpoints are its own. (Only on a
        // first attempt: a later one finds this run's own checkpoints there.)
        if (request.fromEmptyThread) await this.runtime.checkpointer.deleteThread(row.thread_id);
      }
      const items = this.runtime.streamChunks(
        {
          ...runRequest(run),
          claimed: {
            queue: fleet.queue,
            attempt,
            startCheckpointId: row.start_checkpoint_id,
            firstClaimedAt,
          },
        },
        graphModesOf(run.options),
      );
      try {
        await started(items);
      } catch (error) {
        // Refused before it ran (its agent deleted since, a thread with nothing to run): the
        // run ends `error`, as it would have had it started at once.
        run.error = errorOf(error);
        // Its record first: a join that sees the stream's end then reads the run over.
        await fleet.queue.fail(row.run_id, attempt, fleet.runner, run.error.message);
        run.emit("metadata", { run_id: run.runId, thread_id: row.thread_id, attempt: row.attempt });
        run.emit("error", run.error);
        run.end("error");
        await run.done;
        return run.status;
      }
      run.status = "running";
      run.emit("metadata", { run_id: run.runId, thread_id: row.thread_id, attempt: row.attempt });
      await this.drive(run, items, "log only");
      await run.done;
      return run.status;
    } finally {
      this.executing.delete(run);
    }
  }

  /** The run `runId` of `threadId`, if `uid` made it. */
  get(uid: string, threadId: string, runId: string): ManagedRun | undefined {
    const run = this.runs.get(runId);
    return run && run.options.uid === uid && run.options.threadId === threadId ? run : undefined;
  }

  /** The runs of a thread, newest first. */
  forThread(uid: string, threadId: string): ManagedRun[] {
    return [...this.runs.values()]
      .filter((run) => run.options.uid === uid && run.options.threadId === threadId)
      .reverse();
  }

  /**
   * Forgets the runs of a deleted thread, so that a thread made later with the same id never
   * shows them (joins and streams of this process read them from here).
   */
  forgetThread(uid: string, threadId: string): void {
    for (const run of this.forThread(uid, threadId)) this.runs.delete(run.runId);
  }

  /** Whether the thread's latest run failed (its status then reads `error`). */
  lastFailed(uid: string, threadId: string): boolean {
    return this.forThread(uid, threadId)[0]?.status === "error";
  }

  /** Cancels every unfinished run and waits for them to settle. */
  async cancelAll(): Promise<void> {
    const running = [...this.runs.values(), ...this.executing].filter((run) => !run.finished);
    for (const run of running) run.controller.abort(new Error("server shutting down"));
    await Promise.all(running.map((run) => run.done));
  }

  private remember(run: ManagedRun): void {
    this.runs.set(run.runId, run);
    const finished = [...this.runs.values()].filter((candidate) => candidate.finished);
    for (const old of finished.slice(0, Math.max(0, finished.length - MAX_FINISHED_RUNS))) {
      this.runs.delete(old.runId);
    }
  }

  /**
   * Runs `run` to its end, its events to its listeners and log. Its final values are the last
   * state its root graph streamed (the thread is not read back for them). A run of this
   * process's own also keeps its task records for its `Run` object; a queued run ("log only") is
   * shown from the database, by any process, so reading them here would be wasted.
   */
  private async drive(
    run: ManagedRun,
    items: AsyncGenerator<RawRunItem>,
    result: "kept" | "log only" = "kept",
  ): Promise<void> {
    const modes = new Set(run.options.streamModes);
    const { threadId, uid } = run.options;
    let lastValues: object | undefined;
    let interrupts: readonly PendingApproval[] = [];
    // A queued run (`log only`) was admitted by taking one of its worker's slots.
    let leave: (() => void) | undefined;
    try {
      if (result === "kept") {
        leave = await this.admission.enter(run.controller.signal, () => {
          run.status = "pending";
        });
        run.status = "running";
      }
      for await (const item of items) {
        if (item.kind === "chunk") {
          lastValues = rootState(item.chunk) ?? lastValues;
          for (const event of translateForWire(item.chunk, modes, run.options.subgraphs)) {
            run.emit(event.event, event.data);
          }
        } else if (item.kind === "finished") {
          run.subagentRuns = runRecordsSince(item.result.subagentRuns, run.createdAt);
          interrupts = item.result.interrupts;
        }
      }
      if (interrupts.length > 0) {
        // A run that paused for approval answers as LangGraph's `invoke` does: the state plus
        // `__interrupt__`, the requests it waits on (`runs.wait` and `join` read it). The state
        // is read back: the last one streamed is from before the paused step, while the
        // thread's shows the step's waiting children and those that finished meanwhile.
        await this.captureFinalValues(run, uid, threadId);
        run.finalValues = {
          ...(run.finalValues as object),
          [INTERRUPT]: serializeValue(interrupts),
        };
        run.paused = true;
      } else if (lastValues) run.finalValues = serializeValue(lastValues);
      else if (result === "kept") await this.captureFinalValues(run, uid, threadId);
      if (result === "kept") await this.captureSubagentRuns(run);
      run.end(interrupts.length > 0 ? "interrupted" : "success");
    } catch (error) {
      if (SubagentGraphError.isInstance(error) && error.code === ErrorCode.RunSuperseded) {
        run.abandon();
        return;
      }
      const cancelled = SubagentGraphError.isInstance(error) && error.code === ErrorCode.Cancelled;
      run.error = errorOf(error);
      if (result === "kept") {
        await this.captureFinalValues(run, uid, threadId).catch(() => undefined);
        await this.captureSubagentRuns(run);
      }
      if (!cancelled) run.emit("error", run.error);
      run.end(cancelled ? "interrupted" : "error");
    } finally {
      leave?.();
    }
  }

  /**
   * The records of the children the run made, as its row keeps them (written when the run is
   * released, before its stream ends): a failed or cancelled run shows its finished children too.
   */
  private async captureSubagentRuns(run: ManagedRun): Promise<void> {
    const info = await this.runtime.runInfo(run.options.uid, run.runId).catch(() => undefined);
    if (info) {
      run.subagentRuns = info.subagent_runs;
      run.asyncTasks = info.async_tasks;
      run.statusReason = info.status_reason;
    }
  }

  private async captureFinalValues(run: ManagedRun, uid: string, threadId: string) {
    const snapshot = await this.runtime.threads.state(uid, threadId);
    run.finalValues = snapshot ? serializeSnapshot(snapshot, threadId).values : {};
  }
}

/**
 * The root graph's state in a `values` chunk: not a subgraph's, and not the marker LangGraph
 * streams when a node interrupts (`{ __interrupt__: [...] }`), which is no state.
 */
function rootState(chunk: GraphStreamChunk): object | undefined {
  const [namespace, mode, data] = chunk;
  if (mode !== "values" || namespace.length > 0) return undefined;
  if (typeof data !== "object" || data === null || Array.isArray(data)) return undefined;
  return INTERRUPT in data ? undefined : data;
}

/** The runtime request of `run`. */
function runRequest(run: ManagedRun): RunRequest {
  const { options } = run;
  return {
    uid: options.uid,
    agent: options.agentId,
    threadId: options.threadId,
    ...(options.input === undefined ? {} : { input: options.input }),
    ...(options.inputMessageId ? { inputMessageId: options.inputMessageId } : {}),
    ...(options.checkpointId ? { checkpointId: options.checkpointId } : {}),
    ...(options.command ? { command: options.command } : {}),
    signal: run.controller.signal,
    runId: run.runId,
    metadata: options.metadata,
  };
}

/** The graph's stream modes for `options`' wire modes; values always (every run's result). */
function graphModesOf(options: RunOptions): GraphStreamMode[] {
  const modes = [...new Set(options.streamModes.map((mode) => WIRE_STREAM_MODES[mode]))];
  if (!modes.includes("values")) modes.push("values");
  return modes as GraphStreamMode[];
}

/** Waits for the run's start; what refused it is thrown. */
async function started(items: AsyncGenerator<RawRunItem>): Promise<void> {
  const first = await items.next();
  if (first.done || first.value.kind !== "started") {
    throw new SubagentGraphError(ErrorCode.Internal, "the run ended before it started");
  }
}

/** A failed run's error as the API's `error` event has it. */
function errorOf(error: unknown): { error: ErrorCode; message: string } {
  return {
    // The API's error name; ours is the code, INTERNAL for anything untyped (a bug).
    error: SubagentGraphError.isInstance(error) ? error.code : ErrorCode.Internal,
    message: messageOf(error),
  };
}
