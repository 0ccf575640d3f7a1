import { randomUUID } from "node:crypto";
import type { StateSnapshot } from "@langchain/langgraph";
import type { BaseCheckpointSaver, CheckpointTuple } from "@langchain/langgraph-checkpoint";
import type { AgentRepository } from "../agents/repository.js";
import type { AgentRecord } from "../agents/schema.js";
import type { AgentGraph } from "../backends/registry.js";
import { readChannelValues } from "../checkpoints/delta-read.js";
import { ErrorCode, SubagentGraphError } from "../errors.js";
import { type PendingApproval, pendingApprovalsOf } from "../middleware/approval-request.js";
import { type SubagentRun, upsertSubagentRuns, waitingRuns } from "../middleware/subagent-runs.js";
import type { ThreadRunState } from "../store/runs.js";
import { metadataOf, type ThreadRecord, type ThreadRepository } from "../store/threads.js";
import { messagesOf } from "../util/state-messages.js";
import { pendingApprovalsAt } from "./approvals.js";
import { checkForkEdit } from "./fork-values.js";
import { AGENT_STATE_REDUCERS, wellFormed } from "./thread-state.js";

/** A thread as the threads API shows it. */
export interface ThreadInfo {
  threadId: string;
  ownerUid: string;
  /** The agent its runs use; undefined before the first run. */
  agentId: string | undefined;
  metadata: Record<string, unknown>;
  createdAt: string;
  updatedAt: string;
  /** A run of it is pending or in progress, in this process or any other. */
  busy: boolean;
  /** Its latest run ended `error` (its status then reads `error`), whichever process ran it. */
  lastRunFailed: boolean;
}

/** Options of {@link ThreadsApi.create}. */
export interface CreateThreadOptions {
  /** The id to use (default a new UUID). */
  threadId?: string;
  metadata?: Record<string, unknown>;
  /** What to do when the id exists: `raise` (default: `ALREADY_EXISTS`) or `do_nothing`. */
  ifExists?: "raise" | "do_nothing";
}

/** Options of {@link ThreadsApi.search}. */
export interface SearchThreadsOptions {
  /** Threads whose metadata holds every one of these key/value pairs. */
  metadata?: Record<string, unknown>;
  ids?: readonly string[];
  limit?: number;
  offset?: number;
}

/** Threads of a user: created ahead of runs, searched, and their LangGraph state read. */
export interface ThreadsApi {
  create(uid: string, options?: CreateThreadOptions): Promise<ThreadInfo>;
  get(uid: string, threadId: string): Promise<ThreadInfo>;
  /**
   * Checks that `threadId` is `uid`'s, reading nothing else (no run records, unlike
   * {@link get}): for the requests that only need to know.
   * @throws SubagentGraphError `NOT_FOUND` (field `thread_id`) otherwise
   */
  check(uid: string, threadId: string): Promise<void>;
  search(uid: string, options?: SearchThreadsOptions): Promise<ThreadInfo[]>;
  /** Merges metadata into the thread's (a key set to null is removed). */
  updateMetadata(
    uid: string,
    threadId: string,
    metadata: Record<string, unknown>,
  ): Promise<ThreadInfo>;
  /**
   * The thread's LangGraph state (at `checkpointId`, default the latest), read through its
   * agent's graph so `next` and `tasks` are real; undefined before the first run.
   */
  state(
    uid: string,
    threadId: string,
    options?: { checkpointId?: string },
  ): Promise<StateSnapshot | undefined>;
  /**
   * The requests for approval the thread waits on (README "Approvals"), each with the interrupt
   * id that answers it (`command: { resume: { [id]: { decisions } } }` on the next run); empty
   * when nothing waits.
   * @throws SubagentGraphError `NOT_FOUND` (field `thread_id`) unless the thread is `uid`'s.
   */
  interrupts(uid: string, threadId: string): Promise<PendingApproval[]>;
  /**
   * Writes `values` as a new checkpoint branching from `checkpointId` (default the latest), as
   * if node `asNode` had returned them (default: the last node that ran), and returns the new
   * checkpoint's id. Messages with the id of an existing message replace it: that is how a
   * message is edited. Run the thread without input from the new checkpoint to continue.
   *
   * @throws SubagentGraphError `VALIDATION_FAILED` before anything is written for values a fork
   *   cannot hold (an unknown key or message type, a `subagent_runs` that is not a list of task
   *   records) or an `asNode` the graph does not have, naming the field (see `threads/fork-values.ts`).
   */
  fork(
    uid: string,
    threadId: string,
    edit: { values: Record<string, unknown>; checkpointId?: string; asNode?: string },
  ): Promise<{ checkpointId: string }>;
  /**
   * The thread's states, newest first (`before`: only checkpoints older than that id;
   * `metadata`: only checkpoints whose metadata has these top-level values; `checkpointId`:
   * only that checkpoint, as LangGraph's savers list a config naming one).
   *
   * @throws SubagentGraphError `NOT_FOUND` (field `before`, or `checkpoint_id`) when `before`
   *   (or `checkpointId`) is not a checkpoint of the thread.
   */
  stateHistory(
    uid: string,
    threadId: string,
    options?: {
      limit?: number;
      before?: string;
      metadata?: Record<string, unknown>;
      checkpointId?: string;
    },
  ): Promise<StateSnapshot[]>;
  /**
   * Deletes the thread and everything it holds: its checkpoints (every namespace), its
   * subagents' child threads' checkpoints, its files (uploads, outputs, its and its children's
   * skills folders), its run records and the thread itself. Its id is free again afterwards.
   * A deletion cut short (a crash) leaves the thread invisible, never half-usable, and is
   * finished by the next `delete` or the next runtime start (see `threads/thread-delete.ts`).
   *
   * @throws SubagentGraphError `NOT_FOUND` (field `thread_id`) when the thread is not `uid`'s;
   *   `THREAD_BUSY` while a run of any process is on it.
   */
  delete(uid: string, threadId: string): Promise<void>;
}

/** What {@link createThreadsApi} needs from the runtime. */
export interface ThreadsApiDeps {
  threads: ThreadRepository;
  agents: AgentRepository;
  saver: BaseCheckpointSaver;
  /** The main graph of `record` as `uid` may use it. */
  graphOf(uid: string, record: AgentRecord): Promise<AgentGraph>;
  isBusy(threadId: string): boolean;
  /**
   * What the runs table says of `threadIds`: a run pending or running (queued in a fleet, or run
   * by another process) and whether the latest failed. Threads without runs are absent.
   */
  runStates(threadIds: readonly string[]): Promise<ReadonlyMap<string, ThreadRunState>>;
  validateThreadId(threadId: string): void;
  ensureOpen(): void;
  /** Deletes a thread with all it holds (`threads/thread-delete.ts`). */
  deleteThread(uid: string, threadId: string): Promise<void>;
}

/** The threads API over the runtime's repositories and saver. */
export function createThreadsApi(deps: ThreadsApiDeps): ThreadsApi {
  /** `created`: the rows were just made, so no run of any process can be on them yet. */
  const infos = async (rows: readonly ThreadRecord[], created = false): Promise<ThreadInfo[]> => {
    const states =
      rows.length > 0 && !created
        ? await deps.runStates(rows.map((row) => row.thread_id))
        : undefined;
    return rows.map((row) => ({
      threadId: row.thread_id,
      ownerUid: row.owner_uid,
      agentId: row.agent_id === "" ? undefined : row.agent_id,
      metadata: metadataOf(row),
      createdAt: row.created_at,
      updatedAt: row.updated_at,
      busy: deps.isBusy(row.thread_id) || (states?.get(row.thread_id)?.active ?? false),
      lastRunFailed: states?.get(row.thread_id)?.lastFailed ?? false,
    }));
  };
  const info = async (row: ThreadRecord, created = false): Promise<ThreadInfo> =>
    (await infos([row], created))[0] as ThreadInfo;
  const owned = async (uid: string, threadId: string): Promise<ThreadRecord> => {
    deps.ensureOpen();
    const row = await deps.threads.get(uid, threadId);
    if (!row) {
      throw new SubagentGraphError(
        ErrorCode.NotFound,
        `thread "${threadId}" not found: pass the id of one of your threads`,
        { field: "thread_id", details: { thread_id: threadId } },
      );
    }
    return row;
  };
  /** The graph the thread's runs use, if its agent is still there for the user. */
  const graphFor = async (uid: string, row: ThreadRecord): Promise<AgentGraph | undefined> => {
    if (row.agent_id === "") return undefined;
    const record = await deps.agents.find(uid, row.agent_id);
    return record && !record.is_subagent ? deps.graphOf(uid, record) : undefined;
  };
  const config = (threadId: string, checkpointId?: string) => ({
    configurable: {
      thread_id: threadId,
      checkpoint_ns: "",
      ...(checkpointId ? { checkpoint_id: checkpointId } : {}),
    },
  });

  return {
    async create(uid, options = {}) {
      deps.ensureOpen();
      const threadId = options.threadId ?? randomUUID();
      deps.validateThreadId(threadId);
      const { created, row } = await deps.threads.create(uid, threadId, options.metadata ?? {});
      if (created && row) return info(row, true);
      if (row && options.ifExists === "do_nothing") return info(row);
      throw new SubagentGraphError(
        ErrorCode.AlreadyExists,
        `thread "${threadId}" already exists: use another id, or pass if_exists "do_nothing" to get your existing thread`,
        { field: "thread_id" },
      );
    },

    async get(uid, threadId) {
      return info(await owned(uid, threadId));
    },

    async check(uid, threadId) {
      await owned(uid, threadId);
    },

    async search(uid, options = {}) {
      deps.ensureOpen();
      const wanted = Object.entries(options.metadata ?? {});
      const ids = options.ids ? new Set(options.ids) : undefined;
      const rows = (await deps.threads.listForUser(uid)).filter((row) => {
        if (ids && !ids.has(row.thread_id)) return false;
        const metadata = metadataOf(row);
        return wanted.every(
          ([key, value]) => JSON.stringify(metadata[key]) === JSON.stringify(value),
        );
      });
      const offset = options.offset ?? 0;
      return infos(rows.slice(offset, offset + (options.limit ?? 10)));
    },

    async updateMetadata(uid, threadId, metadata) {
      await owned(uid, threadId);
      await deps.threads.mergeMetadata(uid, threadId, metadata);
      return info(await owned(uid, threadId));
    },

    async state(uid, threadId, options = {}) {
      const row = await owned(uid, threadId);
      const graph = await graphFor(uid, row);
      const tuple = await deps.saver.getTuple(config(threadId, options.checkpointId));
      if (!tuple) {
        if (options.checkpointId) {
          throw new SubagentGraphError(
            ErrorCode.NotFound,
            `checkpoint "${options.checkpointId}" not found in thread "${threadId}": pass a checkpoint_id from its history`,
            {
              field: "checkpoint_id",
              details: { thread_id: threadId, checkpoint_id: options.checkpointId },
            },
          );
        }
        return undefined;
      }
      return graph
        ? withWaitingRuns(await graph.getState(config(threadId, tuple.checkpoint.id)))
        : snapshotOf(deps.saver, tuple);
    },

    async interrupts(uid, threadId) {
      await owned(uid, threadId);
      return pendingApprovalsAt(deps.saver, threadId);
    },

    async fork(uid, threadId, edit) {
      const row = await owned(uid, threadId);
      if ((await info(row)).busy) {
        throw new SubagentGraphError(
          ErrorCode.ThreadBusy,
          `thread "${threadId}" has a run in progress: fork it once the run has finished`,
          { field: "thread_id", details: { thread_id: threadId } },
        );
      }
      const graph = await graphFor(uid, row);
      if (!graph) {
        throw new SubagentGraphError(
          ErrorCode.Validation,
          `thread "${threadId}" has no run yet (or its agent is gone): there is no state to fork`,
          { field: "thread_id" },
        );
      }
      if (edit.checkpointId && !(await deps.saver.getTuple(config(threadId, edit.checkpointId)))) {
        throw new SubagentGraphError(
          ErrorCode.NotFound,
          `checkpoint "${edit.checkpointId}" not found in thread "${threadId}": pass a checkpoint_id from its history`,
          { field: "checkpoint_id" },
        );
      }
      const base = await graph.getState(config(threadId, edit.checkpointId));
      checkForkEdit(graph, edit, messageIdsOf(base.values));
      const written = (await graph.updateState(
        config(threadId, edit.checkpointId),
        edit.values,
        ...(edit.asNode ? [edit.asNode] : []),
      )) as { configurable?: { checkpoint_id?: string } };
      const checkpointId = written.configurable?.checkpoint_id;
      if (!checkpointId) {
        throw new SubagentGraphError(ErrorCode.Internal, "the fork wrote no checkpoint id");
      }
      return { checkpointId };
    },

    async stateHistory(uid, threadId, options = {}) {
      const row = await owned(uid, threadId);
      const graph = await graphFor(uid, row);
      // An unknown cursor would otherwise list from the newest checkpoint, as if none was given.
      if (options.before && !(await deps.saver.getTuple(config(threadId, options.before)))) {
        throw new SubagentGraphError(
          ErrorCode.NotFound,
          `checkpoint "${options.before}" not found in thread "${threadId}": pass as before a checkpoint_id from its history, or leave it out to start from the newest`,
          { field: "before" },
        );
      }
      if (options.checkpointId) {
        // Read here rather than listed: the savers disagree on a listed config naming a
        // checkpoint (the memory saver lists that one, the SQLite saver ignores it).
        const tuple = await deps.saver.getTuple(config(threadId, options.checkpointId));
        if (!tuple) {
          throw new SubagentGraphError(
            ErrorCode.NotFound,
            `checkpoint "${options.checkpointId}" not found in thread "${threadId}": pass a checkpoint_id from its history`,
            {
              field: "checkpoint_id",
              details: { thread_id: threadId, checkpoint_id: options.checkpointId },
            },
          );
        }
        const metadata = (tuple.metadata ?? {}) as Record<string, unknown>;
        const kept =
          (!options.before || tuple.checkpoint.id < options.before) &&
          Object.entries(options.metadata ?? {}).every(
            ([key, value]) => JSON.stringify(metadata[key]) === JSON.stringify(value),
          );
        if (!kept) return [];
        return [
          graph
            ? await graph.getState(config(threadId, tuple.checkpoint.id))
            : await snapshotOf(deps.saver, tuple),
        ];
      }
      const listOptions = {
        limit: options.limit ?? 10,
        ...(options.before ? { before: config(threadId, options.before) } : {}),
        ...(options.metadata ? { filter: options.metadata } : {}),
      };
      const states: StateSnapshot[] = [];
      if (graph) {
        for await (const state of graph.getStateHistory(config(threadId), listOptions)) {
          states.push(state);
        }
        return states;
      }
      for await (const tuple of deps.saver.list(config(threadId), listOptions)) {
        states.push(await snapshotOf(deps.saver, tuple));
      }
      return states;
    },

    async delete(uid, threadId) {
      deps.ensureOpen();
      await deps.deleteThread(uid, threadId);
    },
  };
}

/**
 * A state read from a checkpoint alone, for a thread whose agent is gone (deleted or no longer
 * shared): the values are there, but without the graph nothing is known of what runs next.
 */
async function snapshotOf(
  saver: BaseCheckpointSaver,
  tuple: CheckpointTuple,
): Promise<StateSnapshot> {
  // Channels named like `__start__` or `branch:to:model` are LangGraph's own, not state; the
  // agent's growing channels are rebuilt when they are stored as deltas.
  const values = {
    ...Object.fromEntries(
      Object.entries(tuple.checkpoint.channel_values).filter(
        ([key]) => !key.startsWith("__") && !key.includes(":"),
      ),
    ),
    ...(await readChannelValues(saver, tuple, AGENT_STATE_REDUCERS)),
  };
  return {
    values,
    next: [],
    tasks: [],
    config: tuple.config,
    metadata: tuple.metadata,
    createdAt: tuple.checkpoint.ts,
    ...(tuple.parentConfig ? { parentConfig: tuple.parentConfig } : {}),
  };
}

/**
 * A state whose tasks wait on subagents' requests shows those `task` calls as `waiting` records
 * in `subagent_runs` (nothing is written for them: see `waitingRuns`), beside the records of the
 * calls of the same step that finished meanwhile (saved as the step's pending writes, which the
 * state's values take in only once the whole step ends, after the resume).
 */
function withWaitingRuns(snapshot: StateSnapshot): StateSnapshot {
  // A task with a result was resumed and finished (one of several requests answered): LangGraph
  // still lists the interrupt it was resumed from until the step ends, but nothing waits on it.
  const pending = pendingApprovalsOf(
    snapshot.tasks
      .filter((task) => task.result === undefined)
      .flatMap((task) => task.interrupts ?? []),
  );
  const waiting = waitingRuns(pending);
  if (waiting.length === 0) return snapshot;
  const finished = snapshot.tasks.flatMap((task) => {
    const records = (task.result as { subagent_runs?: unknown } | null | undefined)?.subagent_runs;
    return Array.isArray(records) ? wellFormed(records) : [];
  });
  const values = snapshot.values as Record<string, unknown>;
  const current = Array.isArray(values.subagent_runs)
    ? (values.subagent_runs as SubagentRun[])
    : [];
  return {
    ...snapshot,
    values: {
      ...values,
      subagent_runs: upsertSubagentRuns(upsertSubagentRuns(current, finished), waiting),
    },
  };
}

/** Ids of the messages in a state's values (what a `remove` message of a fork may name). */
function messageIdsOf(values: unknown): Set<string> {
  const ids = new Set<string>();
  for (const message of messagesOf(values) as unknown[]) {
    const id = (message as { id?: unknown } | null)?.id;
    if (typeof id === "string") ids.add(id);
  }
  return ids;
}
