import { ErrorCode, SubagentGraphError } from "../../errors.js";
import type { RunCreateBody } from "../protocol/run-create.js";

/** A run id that is not `uid`'s, or not on that thread. */
export function runNotFound(params: { thread_id: string; run_id: string }, why?: string) {
  return new SubagentGraphError(
    ErrorCode.NotFound,
    `run "${params.run_id}" not found on thread "${params.thread_id}"${why ? ` (${why}, and this one restarted or never ran it)` : ""}: list the thread's runs for their ids`,
    { field: "run_id", details: { thread_id: params.thread_id, run_id: params.run_id } },
  );
}

/** A run request without input where the thread (or its checkpoint) has no step left to run. */
export function nothingToRun(threadId: string, checkpointId: string | undefined) {
  return new SubagentGraphError(
    ErrorCode.Validation,
    `thread "${threadId}" has nothing to run${checkpointId ? ` from checkpoint "${checkpointId}"` : ""}: its turn is complete, so pass input (a new message), or a checkpoint_id from before the step to replay`,
    { field: "input" },
  );
}

/** A resume (`command`) for a thread the caller has not run yet: nothing waits on it. */
export function nothingToResume(threadId: string) {
  return new SubagentGraphError(
    ErrorCode.Validation,
    `thread "${threadId}" has never run, so it is not waiting for any approval and there is nothing to resume: send input (a new message) instead of command`,
    { field: "command" },
  );
}

/** An unknown `checkpoint_id` (or `checkpoint.checkpoint_id`) of a run request. */
export function checkpointNotFound(checkpointId: string, threadId: string, body: RunCreateBody) {
  const field = body.checkpoint_id ? "checkpoint_id" : "checkpoint";
  return new SubagentGraphError(
    ErrorCode.NotFound,
    `${field}: checkpoint "${checkpointId}" not found in thread "${threadId}": pass a checkpoint_id from the thread's history, or leave it out to run from the latest`,
    { field, details: { thread_id: threadId, checkpoint_id: checkpointId } },
  );
}

/** A resume while a run of the thread goes on. */
export function busyWhileResuming(threadId: string) {
  // Answered before the resume is checked: while a run goes on, what the thread waits on is
  // about to change.
  return new SubagentGraphError(
    ErrorCode.ThreadBusy,
    `thread "${threadId}" has a run in progress: wait for it to end, then resume what it waits on (GET /threads/${threadId} lists its interrupts)`,
    { field: "thread_id", details: { thread_id: threadId } },
  );
}

/** A queued run refused because the thread has one pending or running. */
export function threadBusy(threadId: string) {
  return new SubagentGraphError(
    ErrorCode.ThreadBusy,
    `thread "${threadId}" already has a run pending or in progress: wait for it to finish or cancel it`,
    { field: "thread_id", details: { thread_id: threadId } },
  );
}

export function isNotFound(error: unknown): boolean {
  return SubagentGraphError.isInstance(error) && error.code === ErrorCode.NotFound;
}
