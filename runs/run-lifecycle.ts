import { randomUUID } from "node:crypto";
import { type AIMessage, HumanMessage } from "@langchain/core/messages";
import { Command } from "@langchain/langgraph";
import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";
import type { AgentRecord } from "../agents/schema.js";
import { type AgentGraph, agentTools } from "../backends/registry.js";
import { ErrorCode, SubagentGraphError, validationError } from "../errors.js";
import type { CompiledGraphs } from "../graphs/compiled-graphs.js";
import {
  type ApprovalResponse,
  describeApproval,
  type PendingApproval,
} from "../middleware/approval-request.js";
import type { AsyncTask } from "../middleware/async-task-records.js";
import { NEW_INPUT_KEY, RUN_ID_KEY } from "../middleware/child-run.js";
import { addUsage } from "../middleware/run-records.js";
import {
  runRecordsSince,
  type SubagentRun,
  upsertSubagentRuns,
  waitingRuns,
} from "../middleware/subagent-runs.js";
import type { MainRunContext } from "../run-context.js";
import type { RunRepository } from "../store/runs.js";
import type { ThreadRepository } from "../store/threads.js";
import { awaitingApprovalError, checkResume, pendingApprovalsAt } from "../threads/approvals.js";
import { validateThreadId } from "../threads/thread-id.js";
import { readRunSubagentRuns, readThreadState, stateOfValues } from "../threads/thread-state.js";
import { messageText } from "../util/message-text.js";
import type { ProcessIdentity } from "../util/process-identity.js";
import type { AbandonedRuns } from "./abandoned-runs.js";
import type { GraphStreamChunk, RunResult } from "./events.js";
import { legacySkillsStepResume } from "./legacy-skills-step.js";
import { repairCancelledTurn } from "./repair.js";
import { typedCause } from "./run-failure.js";
import { type ClaimedAttempt, RunLease, type RunLeaseOptions } from "./run-lease.js";
import type { RunningRuns } from "./running-runs.js";

/** Arguments of `Runtime.run` and `Runtime.stream`. */
export interface RunRequest {
  /** The acting user: only their agents and threads (and what is shared with them) are reachable. */
  uid: string;
  /** Agent id or slug; default: the user's default agent. */
  agent?: string;
  /** Thread to continue; default: a new thread. */
  threadId?: string;
  /**
   * The user's message. Leave it out to run what the thread (or `checkpointId`) has next: a
   * run that stopped mid-way (a crash) resumes, a replay re-executes from that checkpoint.
   */
  input?: string;
  /**
   * The id the user's message gets (a frontend that shows it before the run's state does, such
   * as `@langchain/react`, matches its copy by id); default: LangChain's own.
   */
  inputMessageId?: string;
  /**
   * Replay/branch from this checkpoint of the thread instead of its latest one (see
   * `Runtime.history`); the run writes a new branch, the old checkpoints stay readable.
   */
  checkpointId?: string;
  /**
   * Answers the requests for approval the thread waits on (README "Approvals"): `resume` is
   * langchain's `{ decisions: [...] }` for the one pending request, or a map from interrupt id
   * to it (`RunResult.interrupts`, `Runtime.threads.interrupts`). Checked before anything runs;
   * not with `input` or `checkpointId`.
   */
  command?: { resume: unknown };
  /** Cancels the run (and every running subagent) when aborted. */
  signal?: AbortSignal;
  /** The run's id (default a new UUID); the HTTP layer picks it to announce it first. */
  runId?: string;
  /** Kept on the run's record (see `Runtime.runInfo`) for whoever lists the runs. */
  metadata?: Record<string, unknown>;
  /**
   * A queued run this process claimed (`store/run-queue.ts`): its row and its thread's lease are
   * held already. A later attempt (its first worker died) resumes from the thread's newest
   * checkpoint when the run had written any, else starts as asked.
   */
  claimed?: ClaimedAttempt & {
    /** The thread's newest checkpoint id when the first attempt began ("" none), if recorded. */
    startCheckpointId: string | null;
    /**
     * When the first attempt was claimed: the run's start for every attempt, so the subagent
     * records of an earlier attempt are the run's too.
     */
    firstClaimedAt: string;
  };
}

/** What a run's lifecycle needs from the runtime. */
export interface RunLifecycleDeps {
  /** Throws once the runtime is closed. */
  ensureOpen(): void;
  /** A runtime hosting graphs for another server never runs them itself. */
  hosted: boolean;
  threads: ThreadRepository;
  runRows: RunRepository;
  graphs: CompiledGraphs;
  saver: BaseCheckpointSaver;
  threadLeaseMs: number;
  /** Takes threads for runs, reclaiming those of dead processes. */
  abandoned: AbandonedRuns;
  /** This process, as run rows record it. */
  runner: ProcessIdentity;
  /** The runs of this process and the threads they hold. */
  running: RunningRuns;
  /** The main agent `uid` named (default: their default agent), refusing subagents. */
  mainAgent(uid: string, agent: string | undefined): Promise<AgentRecord>;
  /** The thread's background tasks started or moved on since `since` (ISO), for its run's row. */
  asyncTasksSince?(threadId: string, since: string): Promise<AsyncTask[]>;
}

/**
 * How a run goes, whatever its caller (`run`, `stream`, `streamChunks`): `prepare` checks the
 * request, takes the thread (in this process and by lease across processes) and builds the
 * config; `chunks` streams the graph; `finish` reads the result; `failure` turns an error into
 * what the caller throws, repairing a cancelled thread first. The caller releases the run.
 */
export function createRunLifecycle(deps: RunLifecycleDeps): RunLifecycle {
  const {
    ensureOpen,
    hosted,
    threads,
    runRows,
    graphs,
    saver,
    threadLeaseMs,
    abandoned,
    runner,
    running,
    mainAgent,
  } = deps;

  async function prepareRun(request: RunRequest): Promise<PreparedRun> {
    ensureOpen();
    if (hosted) {
      throw new SubagentGraphError(
        ErrorCode.Unsupported,
        'this runtime hosts graphs for a server that brings its own checkpointer (checkpointer: "host"): run them there, or create a runtime with "sqlite" or "memory"',
      );
    }
    const threadId = request.threadId ?? randomUUID();
    validateThreadId(threadId);
    // A claimed attempt that resumes runs whatever is next (nothing if the run had finished).
    let resuming = false;
    if (request.claimed) {
      ({ request, resuming } = await attemptRequest(request, request.claimed, threadId));
    }
    // An existing thread keeps running the agent it was started with unless told otherwise.
    const existing = request.threadId ? await threads.get(request.uid, threadId) : undefined;
    const record = await mainAgent(request.uid, request.agent ?? (existing?.agent_id || undefined));
    const graph = await graphs.mainGraph(request.uid, record);
    // The knowledge bases this run may search, fixed now: one the agent names that the user
    // cannot see fails the run here, before anything is written.
    const knowledgeBaseIds = await graphs.knowledgeSnapshot(request.uid, record);
    const runId = request.runId ?? randomUUID();
    const configurable = {
      thread_id: threadId,
      [RUN_ID_KEY]: runId,
      ...(request.checkpointId ? { checkpoint_id: request.checkpointId } : {}),
      ...(request.input === undefined ? {} : { [NEW_INPUT_KEY]: true as const }),
    };
    // `subagent_runs: []` is a no-op update, given so that langchain's agent (which starts a run
    // from its previous state merged with the input) does not write the thread's whole record
    // list into every turn's input again: with delta storage that copy would grow each turn.
    const message =
      request.input === undefined
        ? null
        : {
            messages: [
              new HumanMessage({
                content: request.input,
                ...(request.inputMessageId ? { id: request.inputMessageId } : {}),
              }),
            ],
            subagent_runs: [],
          };
    // Before anything is written: a refused request leaves no thread and no run record.
    await checkCheckpoint(configurable);
    const resume =
      request.command === undefined || resuming
        ? undefined
        : await checkedResume(request, threadId, record, graph, existing !== undefined);
    if (message && existing?.agent_id && !request.checkpointId && !resuming) {
      // A new message would leave the paused calls unanswered, and the thread unusable.
      const pending = await pendingApprovalsAt(saver, threadId);
      if (pending.length > 0) throw awaitingApprovalError(threadId, pending);
    }
    const input =
      message ??
      (resume ? new Command({ resume }) : null) ??
      (resuming ? null : await checkStartingPoint(graph, configurable));
    // A thread of this user with its agent bound needs no claim (it would write nothing); one
    // deleted since it was read is caught once the lease is held (`confirm` below).
    if (!existing?.agent_id) await threads.claim(request.uid, threadId, record.id);
    const controller = new AbortController();
    running.claim({ runId, uid: request.uid, threadId, controller });
    // The caller's signal is forwarded into the run's own controller until the run is released,
    // not combined with AbortSignal.any: LangGraph never removes the abort listener it adds to a
    // run's signal, and Node keeps a composite signal with listeners alive until it aborts, so
    // every run given a signal (every HTTP run) would stay in memory for good.
    const forwardAbort = () => controller.abort(request.signal?.reason);
    if (request.signal?.aborted) forwardAbort();
    else request.signal?.addEventListener("abort", forwardAbort, { once: true });
    const stopForwarding = () => request.signal?.removeEventListener("abort", forwardAbort);
    const signal = controller.signal;
    let lease: RunLease;
    try {
      const leaseOptions: RunLeaseOptions = {
        runs: runRows,
        abandoned,
        runner,
        runId,
        threadId,
        uid: request.uid,
        agentId: record.id,
        leaseMs: threadLeaseMs,
        abort: (reason) => controller.abort(reason),
        ...(request.metadata ? { metadata: request.metadata } : {}),
        // A deletion takes the thread's lease too (threads/thread-delete.ts): one that ran between
        // the claim above and this lease has removed the thread, and a run now would write
        // checkpoints that nobody owns under a free id.
        confirm: async () => {
          if (!(await threads.get(request.uid, threadId))) {
            throw new SubagentGraphError(
              ErrorCode.NotFound,
              `thread "${threadId}" was deleted while the run was being prepared: start a new thread`,
              { field: "threadId" },
            );
          }
        },
      };
      if (request.claimed) {
        const adopted = RunLease.adopt(leaseOptions, request.claimed);
        lease = adopted;
        running.setHandBack(runId, (reason) => adopted.handBack(reason));
      } else {
        lease = await RunLease.acquire(leaseOptions);
      }
    } catch (error) {
      stopForwarding();
      running.release(runId);
      throw error;
    }
    const startedAt = request.claimed?.firstClaimedAt ?? new Date().toISOString();
    const release = async (status: RunOutcome) => {
      // The records of the children this run made, whatever its end (a failed or cancelled run
      // too), read while the thread is still held: the next run may write to it. A finished run
      // has them from the state `finish` read.
      const subagentRuns =
        outcome.subagentRuns ??
        (await readRunSubagentRuns(saver, threadId, startedAt).catch(() => undefined));
      const asyncTasks = await deps.asyncTasksSince?.(threadId, startedAt).catch(() => undefined);
      stopForwarding();
      running.release(runId);
      await lease.release(status, {
        ...(subagentRuns ? { subagentRuns } : {}),
        ...(asyncTasks && asyncTasks.length > 0 ? { asyncTasks } : {}),
        ...(outcome.reason ? { reason: outcome.reason } : {}),
      });
      await threads.touch(threadId);
    };
    const config: RunConfig = {
      configurable,
      context: {
        uid: request.uid,
        thread_id: threadId,
        is_subagent_runtime: false,
        knowledge_base_ids: knowledgeBaseIds,
      },
      signal,
      runId,
      // Each task call is a model turn plus a child's own loop; LangGraph counts only ours.
      recursionLimit: 100,
      // Each step's checkpoint is saved before the next step starts. LangGraph's default
      // ("async") saves it while the next step runs, so a crash while children run could lose
      // the step that called them: the thread would look finished, the user's message gone and
      // the children's threads orphaned (seen on a loaded machine in the scale-out test).
      durability: "sync",
    };
    // How the run ended, for its row: set by `finish` and `failure`; a stream its consumer
    // abandoned stays "interrupted".
    const outcome: PreparedRun["outcome"] = { status: "interrupted" };
    const superseded = () => lease.superseded;
    return {
      record,
      graph,
      threadId,
      runId,
      config,
      input,
      release,
      startedAt,
      outcome,
      superseded,
    };
  }

  /** See {@link RunLifecycle.checkResume}. */
  async function checkResumeOf(request: RunRequest): Promise<Record<string, ApprovalResponse>> {
    ensureOpen();
    const threadId = request.threadId ?? "";
    validateThreadId(threadId);
    const existing = await threads.get(request.uid, threadId);
    const record = await mainAgent(request.uid, request.agent ?? (existing?.agent_id || undefined));
    const graph = await graphs.mainGraph(request.uid, record);
    return checkedResume(request, threadId, record, graph, existing !== undefined);
  }

  /** `request.command.resume`, checked against what the thread waits on (see checkResume). */
  async function checkedResume(
    request: RunRequest,
    threadId: string,
    record: AgentRecord,
    graph: AgentGraph,
    threadExists: boolean,
  ) {
    if (request.input !== undefined) {
      throw validationError(
        "command",
        "send either input (a new message) or command.resume (decisions on pending requests), not both",
      );
    }
    if (request.checkpointId) {
      throw validationError(
        "checkpointId",
        "command.resume answers the requests the thread's newest checkpoint waits on: leave checkpoint_id out",
      );
    }
    if (!threadExists) {
      // Absent, or another user's: the same answer, as for any thread.
      throw new SubagentGraphError(
        ErrorCode.NotFound,
        `thread "${threadId}" not found: command.resume answers a paused thread of yours; pass its id`,
        { field: "thread_id" },
      );
    }
    const pending = await pendingApprovalsAt(saver, threadId);
    return checkResume(threadId, pending, request.command?.resume, async (entry) => {
      const subagent = entry.value.subagent?.subagent_type;
      if (subagent === undefined) return agentTools(graph);
      const child = await graphs.childGraph(request.uid, record, subagent);
      return child ? agentTools(child) : undefined;
    });
  }

  /**
   * The request a claimed attempt runs: as asked on its first attempt (whose starting checkpoint
   * is recorded); on a later one, as asked if the run had written no checkpoint yet, else a
   * resume from the thread's newest checkpoint (no input, no checkpoint id: the branch the run
   * was writing goes on).
   */
  async function attemptRequest(
    request: RunRequest,
    claimed: NonNullable<RunRequest["claimed"]>,
    threadId: string,
  ): Promise<{ request: RunRequest; resuming: boolean }> {
    const newest = await saver.getTuple({
      configurable: { thread_id: threadId, checkpoint_ns: "" },
    });
    const newestId = newest?.checkpoint.id ?? "";
    const wrote = claimed.startCheckpointId !== null && claimed.startCheckpointId !== newestId;
    const { input: _input, checkpointId: _checkpointId, command: _command, ...rest } = request;
    if (claimed.attempt > 1 && wrote) return { request: rest, resuming: true };
    if (claimed.startCheckpointId === null) {
      await claimed.queue.setStartCheckpoint(request.runId ?? "", newestId);
    }
    if (claimed.attempt > 1 && request.command) {
      // A resume whose earlier attempt died before the thread's next checkpoint: the answers
      // are given again (LangGraph saves the answer a task consumed only with the task's
      // result, so a task still running when its process died has lost it), except to the
      // calls that attempt finished, which no longer wait: their results are saved and they do
      // not run again (a checked map naming them would be refused). None left: the step's
      // saved writes are all it needs.
      const resume = stillPending(
        request.command.resume,
        await pendingApprovalsAt(saver, threadId),
      );
      if (resume === undefined) return { request: rest, resuming: true };
      return { request: { ...request, command: { resume } }, resuming: false };
    }
    return { request, resuming: false };
  }

  /**
   * A run without input needs something to do where it starts (a turn that stopped mid-way, or
   * the checkpoint it replays from), else it would silently do nothing: what it runs with, `null`
   * (LangGraph's next steps) or a `Command` for a checkpoint saved before the main agent's skills
   * step became part of the model call (`legacy-skills-step.ts`).
   */
  async function checkStartingPoint(
    graph: AgentGraph,
    configurable: { thread_id: string; checkpoint_id?: string },
  ): Promise<Command | null> {
    const { thread_id: threadId, checkpoint_id: checkpointId } = configurable;
    const state = await graph.getState({ configurable });
    if (state.next.length > 0) return null;
    const tuple = await saver.getTuple({ configurable: { ...configurable, checkpoint_ns: "" } });
    const legacy = tuple ? legacySkillsStepResume(tuple.checkpoint) : undefined;
    if (legacy) return legacy;
    throw new SubagentGraphError(
      ErrorCode.Validation,
      `thread "${threadId}" has nothing to run${checkpointId ? ` from checkpoint "${checkpointId}"` : ""}: its turn is complete, so pass input (a new message), or a checkpoint_id from before the step to replay`,
      { field: "input" },
    );
  }

  /** A run from a checkpoint needs that checkpoint, with or without input. */
  async function checkCheckpoint(configurable: {
    thread_id: string;
    checkpoint_id?: string;
  }): Promise<void> {
    const { thread_id: threadId, checkpoint_id: checkpointId } = configurable;
    if (
      checkpointId &&
      !(await saver.getTuple({ configurable: { ...configurable, checkpoint_ns: "" } }))
    ) {
      throw new SubagentGraphError(
        ErrorCode.NotFound,
        `checkpoint "${checkpointId}" not found in thread "${threadId}": pass a checkpoint id from the thread's history`,
        { field: "checkpointId", details: { thread_id: threadId, checkpoint_id: checkpointId } },
      );
    }
  }

  /** The graph's stream with subgraphs, so subagents' chunks come too. */
  async function* graphChunks(
    prepared: PreparedRun,
    streamMode: readonly string[],
  ): AsyncGenerator<GraphStreamChunk> {
    const chunks = await prepared.graph.stream(prepared.input, {
      ...prepared.config,
      streamMode: [...streamMode],
      subgraphs: true,
    });
    for await (const chunk of chunks) yield chunk as GraphStreamChunk;
  }

  async function finish(
    { threadId, runId, startedAt, outcome }: PreparedRun,
    finalValues?: unknown,
  ): Promise<RunResult> {
    outcome.status = "success";
    // The run's own final values when it has them: the same channels the thread now holds, and
    // a read of the whole conversation saved (a full read on every saver, and on delta storage
    // a replay back to the last snapshot).
    const state = stateOfValues(finalValues) ?? (await readThreadState(saver, threadId));
    const last = state.messages.at(-1);
    // A turn that ends on a plain answer waits on nothing; else the run may have paused.
    const answered = last?.getType() === "ai" && !(last as AIMessage).tool_calls?.length;
    const interrupts = answered ? [] : await pendingApprovalsAt(saver, threadId);
    if (interrupts.length > 0) {
      outcome.status = "interrupted";
      outcome.reason = waitingReason(interrupts);
    }
    const subagentRuns = upsertSubagentRuns(state.subagentRuns, waitingRuns(interrupts));
    outcome.subagentRuns = runRecordsSince(subagentRuns, startedAt);
    return {
      threadId,
      runId,
      output: last?.getType() === "ai" ? messageText(last) : "",
      messages: state.messages,
      subagentRuns,
      subagentUsage: addUsage(outcome.subagentRuns.map((run) => run.usage)),
      interrupts,
    };
  }

  /**
   * What a failed run throws. A cancelled one (its signal fired) first gets its thread repaired
   * (unanswered calls answered, cancelled children recorded), then becomes `RUN_CANCELLED`.
   */
  async function failure(prepared: PreparedRun, error: unknown): Promise<unknown> {
    if (!prepared.config.signal.aborted) {
      prepared.outcome.status = "error";
      return typedCause(error);
    }
    prepared.outcome.status = "interrupted";
    // A queued run handed back or taken over goes on elsewhere from its checkpoints: repairing
    // its turn here would answer its pending calls as cancelled under the next worker.
    if (prepared.superseded()) {
      return new SubagentGraphError(
        ErrorCode.RunSuperseded,
        `run ${prepared.runId} stopped here: another worker resumes it`,
        { cause: error, details: { thread_id: prepared.threadId, run_id: prepared.runId } },
      );
    }
    await repairCancelledTurn(prepared.graph, saver, prepared.threadId, prepared.startedAt);
    return new SubagentGraphError(
      ErrorCode.Cancelled,
      `run ${prepared.runId} was cancelled; thread "${prepared.threadId}" is consistent and takes the next message`,
      { cause: error, details: { thread_id: prepared.threadId, run_id: prepared.runId } },
    );
  }

  return { prepare: prepareRun, checkResume: checkResumeOf, chunks: graphChunks, finish, failure };
}

/**
 * The part of a resume (one response, or a map by interrupt id) that answers requests still
 * pending; undefined when it answers none of them.
 */
function stillPending(resume: unknown, pending: readonly PendingApproval[]): unknown {
  if (pending.length === 0) return undefined;
  if (typeof resume !== "object" || resume === null || "decisions" in resume) return resume;
  const ids = new Set(pending.map((entry) => entry.id));
  const left = Object.entries(resume).filter(([id]) => ids.has(id));
  return left.length > 0 ? Object.fromEntries(left) : undefined;
}

/** A paused run's `status_reason`: what it waits for. */
function waitingReason(interrupts: readonly PendingApproval[]): string {
  return `waiting for approval of ${interrupts.map((entry) => describeApproval(entry.value)).join("; ")} (answer with command.resume)`;
}

/** How a run ended, as its row records it. */
export type RunOutcome = "success" | "error" | "interrupted";

/** The config a run's graph is invoked with (built by {@link RunLifecycle.prepare}). */
export interface RunConfig {
  configurable: {
    thread_id: string;
    checkpoint_id?: string;
    [NEW_INPUT_KEY]?: true;
    [RUN_ID_KEY]: string;
  };
  context: MainRunContext & { thread_id: string };
  signal: AbortSignal;
  runId: string;
  recursionLimit: number;
  durability: "sync";
}

/** A run ready to execute (see {@link createRunLifecycle}). */
export interface PreparedRun {
  record: AgentRecord;
  graph: AgentGraph;
  threadId: string;
  runId: string;
  config: RunConfig;
  /**
   * `null` continues the thread from its checkpoint (no new message); a `Command` does so from one
   * saved before the skills step became part of the model call.
   */
  input: { messages: HumanMessage[]; subagent_runs: unknown[] } | Command | null;
  /** Frees the thread (in this process and its lease) and records how the run ended. */
  release(status: RunOutcome): Promise<void>;
  /** A queued run given back to the queue or taken over by another worker: it is not ours. */
  superseded(): boolean;
  startedAt: string;
  /**
   * Set by `finish` and `failure`; a stream its consumer abandoned stays "interrupted". A
   * finished run also keeps the records of the children it made (its row stores them).
   */
  outcome: { status: RunOutcome; subagentRuns?: SubagentRun[]; reason?: string };
}

/**
 * A run's steps (see {@link createRunLifecycle}). Written out rather than inferred: the inferred
 * type names Node's `AbortSignal` in a way a declaration file cannot, so `npm run build` (which
 * emits `.d.ts` files) needs it spelled.
 */
export interface RunLifecycle {
  prepare(request: RunRequest): Promise<PreparedRun>;
  /**
   * Checks `request.command.resume` as {@link RunLifecycle.prepare} does, running nothing and
   * writing nothing: the pending requests it answers, as LangGraph's map from interrupt id to
   * response. For a caller that runs the resume later (a fleet's queue).
   */
  checkResume(request: RunRequest): Promise<Record<string, ApprovalResponse>>;
  chunks(prepared: PreparedRun, streamMode: readonly string[]): AsyncGenerator<GraphStreamChunk>;
  /**
   * The result of a run that ended well. `finalValues` is the root graph's final state if the
   * caller has it (`invoke`'s result, the last root `values` chunk); else the thread is read.
   */
  finish(prepared: PreparedRun, finalValues?: unknown): Promise<RunResult>;
  failure(prepared: PreparedRun, error: unknown): Promise<unknown>;
}
