/**
 * Deleting a thread: its checkpoints, its children's checkpoints, its files, its run records and
 * its row, refused while a run holds it.
 *
 * Order, so that a deletion cut short (a crash, a database error) never leaves a usable
 * half-thread behind:
 * 1. the thread's lease is taken (as a run takes it, `store/runs.ts`), so no run of any process
 *    is on the thread, and none can start while the data goes;
 * 2. its row is marked as being deleted (`ThreadRepository.beginDeletion`): from then on no API
 *    finds the thread and nobody can claim its id, so no new run could write to it again or
 *    see what is left of it;
 * 3. its background tasks are cancelled and forgotten, the children's checkpoints and folders
 *    (background ones too), the thread's checkpoints (every namespace: the
 *    savers' `deleteThread`) and folder, and its run rows go;
 * 4. the row goes last, which frees the id.
 * Every step can run again: a deletion cut short is finished by the next `delete` of that thread
 * or by the next runtime start ({@link ThreadDeleter.sweep}).
 */

import { randomUUID } from "node:crypto";
import { readdir, rm } from "node:fs/promises";
import { join } from "node:path";
import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";
import { parseChildThreadId } from "../checkpoints/child-thread-id.js";
import { threadIdsStartingWith } from "../checkpoints/thread-listing.js";
import { ErrorCode, messageOf, SubagentGraphError } from "../errors.js";
import type { SandboxLayout } from "../sandbox/layout.js";
import type { RunRepository } from "../store/runs.js";
import type { ThreadRepository } from "../store/threads.js";
import { hasErrno } from "../util/errno.js";
import { readHistory } from "./thread-state.js";

/** Takes a thread's lease for a holder; `false` when another live run holds it. */
export interface ThreadLeaseTaker {
  acquireThread(threadId: string, holder: string): Promise<boolean>;
}

/** What {@link ThreadDeleter} works with. */
export interface ThreadDeleterDeps {
  threads: ThreadRepository;
  runs: RunRepository;
  /**
   * Takes the thread's lease, reclaiming it from a run whose process died (the runs floor's
   * `AbandonedRuns`, passed in: threads sit below runs).
   */
  abandoned: ThreadLeaseTaker;
  saver: BaseCheckpointSaver;
  layout: SandboxLayout;
  /** Whether a run of this process is on the thread. */
  isBusy(threadId: string): boolean;
  warn(message: string): void;
}

/** What a thread's background tasks do when it goes (`runs/async-tasks/`). */
export interface BackgroundTasksOfThread {
  /** Cancels and forgets the thread's tasks; their child threads, to be deleted with it. */
  deleteForParent(threadId: string): Promise<string[]>;
}

/** Deletes threads with everything that belongs to them (see the top of this file). */
export class ThreadDeleter {
  /** Set once the runtime's background tasks are open (they need the runs this opens first). */
  backgroundTasks: BackgroundTasksOfThread | undefined;

  constructor(private readonly deps: ThreadDeleterDeps) {}

  /**
   * Deletes `uid`'s thread `threadId` and all it holds. Finishes a deletion of that thread cut
   * short earlier.
   *
   * @throws SubagentGraphError `NOT_FOUND` (field `thread_id`) when `uid` has no such thread;
   *   `THREAD_BUSY` while a run (of any process) is on it: cancel the run or let it finish.
   */
  async delete(uid: string, threadId: string): Promise<void> {
    const { threads } = this.deps;
    const row = await threads.get(uid, threadId, { deleting: true });
    if (!row) {
      throw new SubagentGraphError(
        ErrorCode.NotFound,
        `thread "${threadId}" not found: pass the id of one of your threads`,
        { field: "thread_id" },
      );
    }
    const busy = () =>
      new SubagentGraphError(
        ErrorCode.ThreadBusy,
        `thread "${threadId}" has a run in progress: cancel the run (or wait for it to finish), then delete the thread`,
        { field: "thread_id", details: { thread_id: threadId } },
      );
    if (this.deps.isBusy(threadId)) throw busy();
    await this.holding(threadId, busy, async () => {
      // A run of this process may have taken the thread between the check above and the lease.
      if (this.deps.isBusy(threadId)) throw busy();
      await threads.beginDeletion(uid, threadId);
      await this.erase(threadId);
    });
  }

  /**
   * Finishes every deletion a stopped process left half-done (for a runtime's start). Failures
   * are warned about, never thrown; a thread another process is deleting is left to it.
   *
   * @returns how many deletions were finished
   */
  async sweep(): Promise<number> {
    let rows: Awaited<ReturnType<ThreadRepository["deleting"]>>;
    try {
      rows = await this.deps.threads.deleting();
    } catch (error) {
      this.deps.warn(`could not look for thread deletions left unfinished: ${messageOf(error)}`);
      return 0;
    }
    let finished = 0;
    for (const row of rows) {
      try {
        const done = await this.holding(
          row.thread_id,
          () => undefined,
          () => this.erase(row.thread_id),
        );
        if (done) finished += 1;
      } catch (error) {
        this.deps.warn(
          `could not finish deleting thread "${row.thread_id}": ${messageOf(error)}; the next start tries again`,
        );
      }
    }
    return finished;
  }

  /**
   * Runs `work` while holding the thread's lease. When the lease is held by a live run (or
   * another deletion), throws what `refused` returns, or returns false when it returns nothing.
   */
  private async holding(
    threadId: string,
    refused: () => Error | undefined,
    work: () => Promise<void>,
  ): Promise<boolean> {
    const holder = `delete:${randomUUID()}`;
    if (!(await this.deps.abandoned.acquireThread(threadId, holder))) {
      const error = refused();
      if (error) throw error;
      return false;
    }
    try {
      await work();
      return true;
    } finally {
      await this.deps.runs.releaseThread(threadId, holder);
    }
  }

  /** Steps 3 and 4 of the top of this file, for a thread whose row is marked. */
  private async erase(threadId: string): Promise<void> {
    const { saver, runs, threads } = this.deps;
    // Background tasks first: stopped before their threads go, so none writes to one again.
    const background = (await this.backgroundTasks?.deleteForParent(threadId)) ?? [];
    for (const child of [...background, ...(await this.childrenOf(threadId))]) {
      await saver.deleteThread(child);
      await this.removeFolder(child);
    }
    await saver.deleteThread(threadId);
    await this.removeFolder(threadId);
    await runs.deleteForThread(threadId);
    await threads.finishDeletion(threadId);
  }

  /**
   * Every child thread of `threadId` that left something behind: checkpointed ones (looked up in
   * the saver where it can be, which finds children a crash cut short), those the thread's
   * checkpoints record (any saver), and those with a folder (their skills).
   */
  private async childrenOf(threadId: string): Promise<string[]> {
    const prefix = `${threadId}_sub_`;
    // The prefix alone is not enough: thread "a"'s prefix also starts the ids of thread
    // "a_sub_x" and its children. The id's parse names the one parent it belongs to.
    const isChild = (candidate: string) =>
      parseChildThreadId(candidate)?.parentThreadId === threadId;
    const found = new Set<string>();
    for (const id of (await threadIdsStartingWith(this.deps.saver, prefix)) ?? []) found.add(id);
    for (const checkpoint of await readHistory(this.deps.saver, threadId)) {
      for (const record of checkpoint.subagentRuns) found.add(record.child_thread_id);
    }
    const folders = await readdir(join(this.deps.layout.dataDir, "threads")).catch(
      (error: unknown) => {
        if (hasErrno(error, "ENOENT")) return [] as string[];
        throw error;
      },
    );
    for (const name of folders) if (name.startsWith(prefix)) found.add(name);
    return [...found].filter(isChild);
  }

  /** Removes `threads/<threadId>` under the data dir, if there is one. */
  private async removeFolder(threadId: string): Promise<void> {
    let folder: string;
    try {
      folder = this.deps.layout.threadDir(threadId);
    } catch {
      // An id that cannot name a folder never had one.
      return;
    }
    // `rm` removes symbolic links themselves, never what they point to.
    await rm(folder, { recursive: true, force: true });
  }
}
