/**
 * The shapes the console's client (`api.ts`) answers with, and the calls the chat page makes, as
 * types only: `chat-store.ts` and `live-runs.ts` depend on these interfaces, not on the client,
 * so they are unit-tested in Node against a scripted API. Threads and runs are the SDK's types
 * (`@langchain/langgraph-sdk`, imported as types: nothing of the SDK's runtime comes with them).
 */

import type { Client, Run, Thread, ThreadState } from "@langchain/langgraph-sdk";
import type { AgentRecord } from "./agent-form-model.js";
import type { HistoryState } from "./fork-point.js";
import type { SseEvent } from "./stream-event.js";

/** A file in a thread's uploads or outputs. */
export interface FileEntry {
  path: string;
  size: number;
  modifiedAt: string;
}

/** A thread as the console lists it: the SDK's `Thread` with the fields it selects. */
export type ThreadInfo = Pick<
  Thread,
  "thread_id" | "created_at" | "updated_at" | "metadata" | "status"
>;

/** The options the SDK's `runs.stream` takes. */
type RunsStreamPayload = NonNullable<Parameters<Client["runs"]["stream"]>[2]>;

/**
 * What the chat page starts a run with: a new message (`input`), or answers (`command`, whose
 * `resume` maps interrupt ids to `{ decisions }`, see `approvals.ts`); `checkpointId` runs from
 * that checkpoint (an edited or regenerated turn forks the thread there). The SDK's own options;
 * the client adds the rest.
 */
export type RunRequest = { assistantId: string } & Pick<
  RunsStreamPayload,
  "input" | "command" | "streamMode" | "streamSubgraphs" | "checkpointId"
>;

/** The calls that start, join, read and cancel a run (`live-runs.ts`). */
export interface RunsApi {
  /** Starts a run and yields its events until the server ends the stream. */
  streamRun(threadId: string, body: RunRequest, signal?: AbortSignal): AsyncGenerator<SseEvent>;
  /** A run's events after `lastEventId` ("-1": from the start), until it ends. */
  joinRun(
    threadId: string,
    runId: string,
    lastEventId: string,
    signal?: AbortSignal,
  ): AsyncGenerator<SseEvent>;
  run(threadId: string, runId: string): Promise<Run>;
  cancelRun(threadId: string, runId: string): Promise<unknown>;
}

/** The calls the chat page makes (`chat-store.ts`). */
export interface ChatApi extends RunsApi {
  listAgents(includeSubagents: boolean): Promise<AgentRecord[]>;
  searchThreads(limit?: number): Promise<ThreadInfo[]>;
  createThread(metadata: Record<string, unknown>): Promise<ThreadInfo>;
  updateThread(threadId: string, metadata: Record<string, unknown>): Promise<ThreadInfo>;
  deleteThread(threadId: string): Promise<unknown>;
  threadState(threadId: string): Promise<ThreadState>;
  threadHistory(threadId: string, limit?: number): Promise<HistoryState[]>;
  /** The thread's running run, if one is recorded (a reload rejoins it). */
  runningRun(threadId: string): Promise<Run | undefined>;
  uploadFile(threadId: string, file: File): Promise<FileEntry>;
}
