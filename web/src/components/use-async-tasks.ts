import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import { type Api, ApiError } from "../api.js";
import { type AsyncTask, shouldPoll, withTask } from "../async-tasks.js";

/** How often the list is read again while a task is queued, running or waiting. */
const POLL_MS = 1_000;

/** A thread's background tasks as the panel shows them, kept fresh while any is active. */
export interface AsyncTasksState {
  /** Oldest first, as the server lists them; undefined until the first listing answers. */
  tasks: AsyncTask[] | undefined;
  /** Why the last listing failed; cleared by the next one that answers. */
  error: string | undefined;
  /** True while the list is read again on a beat. */
  polling: boolean;
  /** Puts a record the server answered (a cancel's, an answer's) in place at once. */
  replace: (task: AsyncTask) => void;
}

/**
 * Lists thread `threadId`'s background tasks, again whenever `changeKey` changes (a call that
 * starts, updates or cancels one was answered), and every second while any is active, stopping
 * as soon as none is and when the page leaves the thread (unmount). Only the latest listing's
 * answer is kept: one started before a cancel must not put the task back to `running`. A 404
 * (the thread is gone, or a server without background tasks) stops polling until the next
 * change; another failure is reported and retried on the same beat.
 */
export function useAsyncTasks(
  api: Api,
  threadId: string | undefined,
  changeKey: string,
): AsyncTasksState {
  const [tasks, setTasks] = useState<AsyncTask[] | undefined>();
  const [error, setError] = useState<string | undefined>();
  const [gone, setGone] = useState(false);
  // Bumped after every listing (answered, failed or overtaken), so the next poll is scheduled.
  const [attempts, setAttempts] = useState(0);
  const latest = useRef(0);

  const reload = useCallback(async () => {
    if (!threadId) return;
    latest.current += 1;
    const ticket = latest.current;
    try {
      const listed = await api.asyncTasks(threadId);
      if (ticket !== latest.current) return;
      setTasks(listed);
      setGone(false);
      setError(undefined);
    } catch (caught) {
      if (ticket !== latest.current) return;
      if (caught instanceof ApiError && caught.status === 404) {
        setGone(true);
        setTasks([]);
        setError(undefined);
      } else {
        setError(`Cannot list the background tasks: ${(caught as Error).message}`);
      }
    } finally {
      if (ticket === latest.current) setAttempts((count) => count + 1);
    }
  }, [api, threadId]);

  useEffect(() => {
    setTasks(undefined);
    setError(undefined);
    setGone(false);
  }, [threadId]);

  // `changeKey` is a dependency only to list again when the conversation says tasks changed.
  useEffect(() => {
    void reload();
  }, [reload, changeKey]);

  const replace = useCallback((task: AsyncTask) => {
    // A listing in flight was read before this record: its answer is dropped.
    latest.current += 1;
    setTasks((current) => withTask(current ?? [], task));
    setAttempts((count) => count + 1);
  }, []);

  const polling = shouldPoll(tasks, gone);
  // `attempts` is a dependency only to schedule the next poll after each listing.
  useEffect(() => {
    if (!polling) return;
    const timer = setTimeout(() => void reload(), POLL_MS);
    return () => clearTimeout(timer);
  }, [polling, attempts, reload]);

  return { tasks, error, polling, replace };
}
