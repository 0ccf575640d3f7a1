import type { BaseMessage } from "@langchain/core/messages";
import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";
import { makeChildThreadId, parseChildThreadId } from "../checkpoints/child-thread-id.js";
import { BACKGROUND_CHILD_MARKER } from "../contract.js";
import { ErrorCode, SubagentGraphError } from "../errors.js";
import type { AsyncTask } from "../middleware/async-task-records.js";
import type { SubagentRun } from "../middleware/subagent-runs.js";
import { TASK_TOOL_NAME } from "../middleware/task-types.js";
import type { ThreadRepository } from "../store/threads.js";
import { readHistory, readThreadState, type ThreadCheckpoint } from "./thread-state.js";

/** A subagent's thread as seen through its parent. */
export interface ChildThreadView {
  threadId: string;
  parentThreadId: string;
  subagentType: string;
  /**
   * The parent's record of the call that made this child; `null` while the child still runs (a
   * call is recorded when it ends, so a running child is known by the call in its parent's
   * messages instead).
   */
  run: SubagentRun | null;
  /** For a background task's child thread: the task as it stands. */
  asyncTask?: AsyncTask;
  messages: BaseMessage[];
}

/** Checkpoint reads of a user's threads and of the child threads their runs made. */
export interface ThreadHistoryApi {
  /** The thread's checkpoints, newest first, each with its messages and subagent runs. */
  history(uid: string, threadId: string): Promise<ThreadCheckpoint[]>;
  /**
   * A child thread's messages, only if its parent thread is the caller's and records it (or, for
   * a child that still runs, holds the `task` call that made it).
   */
  childThread(uid: string, childThreadId: string): Promise<ChildThreadView>;
  /** A child thread's checkpoints, newest first (same permission as `childThread`). */
  childHistory(uid: string, childThreadId: string): Promise<ThreadCheckpoint[]>;
}

/** What the reads need from the runtime. */
export interface ThreadHistoryDeps {
  /** Throws once the runtime is closed. */
  ensureOpen(): void;
  threads: ThreadRepository;
  saver: BaseCheckpointSaver;
  /** Throws `NOT_FOUND` unless `uid` owns the thread. */
  checkThread(uid: string, threadId: string): Promise<unknown>;
  /** The background task of `uid` whose child thread this is, if any; absent = none are. */
  backgroundTask?(uid: string, childThreadId: string): Promise<AsyncTask | undefined>;
}

/**
 * Reads of main and child threads. A child thread has no owner of its own: `uid` may read it
 * when its parent thread (named in its id) is theirs and records it.
 */
export function createThreadHistoryApi(deps: ThreadHistoryDeps): ThreadHistoryApi {
  const { ensureOpen, threads, saver, checkThread } = deps;

  /**
   * The child thread's id parts and its parent's record of it (in the latest checkpoint, or an
   * older one for a child left behind by a later fork or replay).
   */
  async function recordedChild(uid: string, childThreadId: string) {
    ensureOpen();
    const notFound = new SubagentGraphError(
      ErrorCode.NotFound,
      `child thread "${childThreadId}" not found: pass a child_thread_id from one of your threads' subagent_runs or async_tasks`,
      { field: "childThreadId" },
    );
    const task = await deps.backgroundTask?.(uid, childThreadId);
    if (task) {
      const parentThreadId = childThreadId.slice(
        0,
        childThreadId.lastIndexOf(`${BACKGROUND_CHILD_MARKER}${task.subagent_type}_`),
      );
      if (!(await threads.get(uid, parentThreadId))) throw notFound;
      return { parts: { parentThreadId, slug: task.subagent_type }, run: null, task };
    }
    const parts = parseChildThreadId(childThreadId);
    if (!parts || !(await threads.get(uid, parts.parentThreadId))) throw notFound;
    const recordsChild = (runs: SubagentRun[]) =>
      runs.find((record) => record.child_thread_id === childThreadId);
    const latest = await readThreadState(saver, parts.parentThreadId);
    const run =
      recordsChild(latest.subagentRuns) ??
      recordsChild((await readHistory(saver, parts.parentThreadId)).flatMap((c) => c.subagentRuns));
    if (run) return { parts, run, task: undefined };
    // Not recorded yet: the call is, in the parent's latest messages (runs checkpoint every step
    // before the next, so the AI message that made a running child's call is stored).
    if (madeBy(latest.messages, parts.parentThreadId, parts.slug, childThreadId)) {
      return { parts, run: null, task: undefined };
    }
    throw notFound;
  }

  return {
    async history(uid, threadId) {
      ensureOpen();
      await checkThread(uid, threadId);
      return readHistory(saver, threadId);
    },

    async childThread(uid, childThreadId) {
      const { parts, run, task } = await recordedChild(uid, childThreadId);
      const state = await readThreadState(saver, childThreadId);
      return {
        threadId: childThreadId,
        parentThreadId: parts.parentThreadId,
        subagentType: parts.slug,
        run,
        ...(task ? { asyncTask: task } : {}),
        messages: state.messages,
      };
    },

    async childHistory(uid, childThreadId) {
      await recordedChild(uid, childThreadId);
      return readHistory(saver, childThreadId);
    },
  };
}

/**
 * Whether one of `messages` is an AI message with a `task` call that makes `childThreadId`: its
 * id is a hash of the parent thread, the slug, the call's id and the message's id, so only the
 * call that made the child matches, and only in the parent thread it names.
 */
function madeBy(
  messages: readonly BaseMessage[],
  parentThreadId: string,
  slug: string,
  childThreadId: string,
): boolean {
  return messages.some((message) => {
    const calls = (message as { tool_calls?: { id?: string; name?: string; args?: unknown }[] })
      .tool_calls;
    if (!Array.isArray(calls)) return false;
    return calls.some(
      (call) =>
        call.name === TASK_TOOL_NAME &&
        typeof call.id === "string" &&
        // The slug is the call's own `subagent_type` (hashed with it, but any slug would hash).
        (call.args as { subagent_type?: unknown } | undefined)?.subagent_type === slug &&
        makeChildThreadId({
          parentThreadId,
          slug,
          toolCallId: call.id,
          // The task tool falls back to the call's id for a message without one.
          aiMessageId: message.id ?? call.id,
        }) === childThreadId,
    );
  });
}
