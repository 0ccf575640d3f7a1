import type { Run, ThreadState } from "@langchain/langgraph-sdk";
import { Client } from "@langchain/langgraph-sdk/client";
import type { AgentRecord } from "./agent-form-model.js";
import { type ApiError, errorOfResponse, errorOfSdk, networkError } from "./api-error.js";
import type { ChatApi, FileEntry, RunRequest, ThreadInfo } from "./api-types.js";
import type { AsyncTask, AsyncTaskAnswer, AsyncTaskWithResult } from "./async-tasks.js";
import type { HistoryState } from "./fork-point.js";
import type { KbFileRecord, KbSearchHit, KbUploadResult, KnowledgeBaseRecord } from "./kb-model.js";
import type { SseEvent } from "./stream-event.js";

export { ApiError } from "./api-error.js";
export type { FileEntry, RunRequest, ThreadInfo } from "./api-types.js";
export { TOKEN_KEY } from "./token-key.js";

/** What agents can be configured with (`GET /api/catalog`). */
export interface Catalog {
  models: string[];
  default_model: string;
  tools: { name: string; description: string }[];
  skills: { name: string; description: string }[];
  mcp_servers: string[];
  /** Knowledge bases the caller may read (`context.knowledge_bases` names them). */
  knowledge_bases: { id: string; name: string; description: string }[];
}

/** The fields {@link Api.searchThreads} asks for: those of `ThreadInfo`. */
const THREAD_FIELDS = [
  "thread_id",
  "created_at",
  "updated_at",
  "metadata",
  "status",
] as const satisfies readonly (keyof ThreadInfo)[];

/**
 * One event as the SDK yields it: its `id` is the SSE id, for rejoining after it (the SDK types
 * it `unknown` on a subgraph's events).
 */
interface StreamPart {
  event: string;
  data: unknown;
  id?: unknown;
}

/** Virtual folder of a thread's uploads. */
export const UPLOADS_FOLDER = "/home/gem/user-data/uploads";

/**
 * The console's client of the HTTP API, for one token. `onUnauthorized` runs on any 401 (the
 * token was revoked or mistyped), so the page can ask for a new one.
 */
export class Api implements ChatApi {
  /**
   * The official LangGraph SDK client for the LangGraph Platform API (threads, runs, streams):
   * the console takes the path users of the SDK take. Its retries are off: a failed call is
   * reported at once, and the run follower (`run-follower.ts`) does its own reconnecting.
   */
  private readonly sdk: Client;

  constructor(
    private readonly token: string,
    private readonly onUnauthorized: (error: ApiError) => void = () => {},
  ) {
    this.sdk = new Client({
      apiUrl: location.origin,
      apiKey: null,
      defaultHeaders: { authorization: `Bearer ${token}` },
      callerOptions: { maxRetries: 0 },
    });
  }

  /** Runs an SDK call, turning its errors into {@link ApiError}s (and a 401 into a sign-out). */
  private async viaSdk<T>(call: (sdk: Client) => Promise<T>): Promise<T> {
    try {
      return await call(this.sdk);
    } catch (error) {
      throw this.apiErrorOf(error);
    }
  }

  /** An SDK stream whose errors are {@link ApiError}s. */
  private async *sdkStream(parts: AsyncIterable<StreamPart>): AsyncGenerator<SseEvent> {
    try {
      for await (const part of parts) {
        yield {
          event: part.event,
          data: part.data,
          id: typeof part.id === "string" ? part.id : undefined,
        };
      }
    } catch (error) {
      throw this.apiErrorOf(error);
    }
  }

  private apiErrorOf(error: unknown): unknown {
    if ((error as Error | undefined)?.name === "AbortError") return error;
    const failed = errorOfSdk(error);
    if (failed.status === 401) this.onUnauthorized(failed);
    return failed;
  }

  async listAgents(includeSubagents: boolean): Promise<AgentRecord[]> {
    const answer = await this.json<{ agents: AgentRecord[] }>(
      "GET",
      `/api/agent${includeSubagents ? "?include_subagents=true" : ""}`,
    );
    return answer.agents;
  }

  createAgent(payload: unknown): Promise<AgentRecord> {
    return this.json("POST", "/api/agent", payload);
  }

  updateAgent(id: string, payload: unknown): Promise<AgentRecord> {
    return this.json("PUT", `/api/agent/${encodeURIComponent(id)}`, payload);
  }

  deleteAgent(id: string, detach: boolean): Promise<unknown> {
    return this.json(
      "DELETE",
      `/api/agent/${encodeURIComponent(id)}${detach ? "?detach=true" : ""}`,
    );
  }

  catalog(): Promise<Catalog> {
    return this.json("GET", "/api/catalog");
  }

  /** The knowledge bases the user may see (own, shared with them, public). */
  async listKnowledgeBases(): Promise<KnowledgeBaseRecord[]> {
    const answer = await this.json<{ knowledge_bases: KnowledgeBaseRecord[] }>("GET", "/api/kb");
    return answer.knowledge_bases;
  }

  /** One knowledge base, by id or name (404 when the user may not see it). */
  knowledgeBase(kb: string): Promise<KnowledgeBaseRecord> {
    return this.json("GET", `/api/kb/${encodeURIComponent(kb)}`);
  }

  createKnowledgeBase(payload: unknown): Promise<KnowledgeBaseRecord> {
    return this.json("POST", "/api/kb", payload);
  }

  /** Changes a knowledge base (owner and editors); its `expected_version` guards the change. */
  updateKnowledgeBase(kb: string, payload: unknown): Promise<KnowledgeBaseRecord> {
    return this.json("PUT", `/api/kb/${encodeURIComponent(kb)}`, payload);
  }

  /** Deletes a knowledge base with its files and chunks. */
  deleteKnowledgeBase(kb: string): Promise<unknown> {
    return this.json("DELETE", `/api/kb/${encodeURIComponent(kb)}`);
  }

  /** A knowledge base's files with their ingest status. */
  async knowledgeFiles(kb: string): Promise<KbFileRecord[]> {
    const answer = await this.json<{ files: KbFileRecord[] }>(
      "GET",
      `/api/kb/${encodeURIComponent(kb)}/files`,
    );
    return answer.files;
  }

  /**
   * Uploads files in one multipart request. The server answers 202 with each file's result
   * (queued, duplicate or refused); when it refuses every file, that refusal is the error.
   */
  async uploadKnowledgeFiles(kb: string, files: readonly File[]): Promise<KbUploadResult[]> {
    const form = new FormData();
    for (const file of files) form.append("file", file, file.name);
    const answer = await this.json<{ files: KbUploadResult[] }>(
      "POST",
      `/api/kb/${encodeURIComponent(kb)}/files`,
      form,
    );
    return answer.files;
  }

  /** Deletes a file and its chunks. */
  deleteKnowledgeFile(kb: string, fileId: string): Promise<unknown> {
    return this.json(
      "DELETE",
      `/api/kb/${encodeURIComponent(kb)}/files/${encodeURIComponent(fileId)}`,
    );
  }

  /** The best chunks for `query` in one knowledge base. */
  async searchKnowledgeBase(kb: string, query: string, topK = 10): Promise<KbSearchHit[]> {
    const answer = await this.json<{ results: KbSearchHit[] }>("POST", "/api/kb/search", {
      query,
      kb,
      top_k: topK,
    });
    return answer.results;
  }

  createThread(metadata: Record<string, unknown>): Promise<ThreadInfo> {
    return this.viaSdk((sdk) => sdk.threads.create({ metadata }));
  }

  /**
   * The user's threads, most recently used first (the server's order), with their status (busy
   * while a run is on one) but without their values: a list needs no messages.
   */
  searchThreads(limit = 50): Promise<ThreadInfo[]> {
    return this.viaSdk((sdk) => sdk.threads.search({ limit, select: [...THREAD_FIELDS] }));
  }

  /** Merges `metadata` into the thread's (a rename sets `title`). */
  updateThread(threadId: string, metadata: Record<string, unknown>): Promise<ThreadInfo> {
    return this.viaSdk((sdk) => sdk.threads.update(threadId, { metadata }));
  }

  /** Deletes the thread with its checkpoints, child threads, files and runs. */
  deleteThread(threadId: string): Promise<unknown> {
    return this.viaSdk((sdk) => sdk.threads.delete(threadId));
  }

  /** The thread's running run, if one is recorded (whichever process runs it). */
  async runningRun(threadId: string): Promise<Run | undefined> {
    const runs = await this.viaSdk((sdk) =>
      sdk.runs.list(threadId, { status: "running", limit: 1 }),
    );
    return runs[0];
  }

  /** One run of the thread (its status tells whether it still runs). */
  run(threadId: string, runId: string): Promise<Run> {
    return this.viaSdk((sdk) => sdk.runs.get(threadId, runId));
  }

  /**
   * Joins a run's event stream: the events after `lastEventId` ("-1": all of them, a replay from
   * the start), then each new one until the run ends.
   */
  joinRun(
    threadId: string,
    runId: string,
    lastEventId: string,
    signal?: AbortSignal,
  ): AsyncGenerator<SseEvent> {
    return this.sdkStream(
      this.sdk.runs.joinStream(threadId, runId, {
        lastEventId,
        ...(signal ? { signal } : {}),
      }),
    );
  }

  /** The thread's state: its values, next steps, and tasks (whose interrupts wait on people). */
  threadState(threadId: string): Promise<ThreadState> {
    return this.viaSdk((sdk) => sdk.threads.getState(threadId));
  }

  /** The thread's states, newest first (messages, next step and checkpoint of each). */
  threadHistory(threadId: string, limit = 200): Promise<HistoryState[]> {
    return this.viaSdk(
      (sdk) =>
        sdk.threads.getHistory(threadId, {
          limit,
          select: ["values.messages", "next", "checkpoint", "parent_checkpoint"],
        }) as Promise<HistoryState[]>,
    );
  }

  /** A subagent's thread; `run` is null while the child still runs. */
  childThread(
    threadId: string,
    childThreadId: string,
  ): Promise<{ values: unknown; run: unknown | null }> {
    return this.json(
      "GET",
      `/threads/${encodeURIComponent(threadId)}/subagents/${encodeURIComponent(childThreadId)}`,
    );
  }

  /** The thread's background tasks, oldest first (README "Background subagents"). */
  asyncTasks(threadId: string): Promise<AsyncTask[]> {
    return this.json("GET", `/threads/${encodeURIComponent(threadId)}/async_tasks`);
  }

  /** One background task with its full final answer (`result`, null until it has one). */
  asyncTask(threadId: string, taskId: string): Promise<AsyncTaskWithResult> {
    return this.json("GET", asyncTaskPath(threadId, taskId));
  }

  /** Cancels an active background task; answers its record as it now stands. */
  cancelAsyncTask(threadId: string, taskId: string): Promise<AsyncTask> {
    return this.json("POST", `${asyncTaskPath(threadId, taskId)}/cancel`);
  }

  /** Answers a `waiting` task's request for approval (one decision per gated call). */
  answerAsyncTask(threadId: string, taskId: string, body: AsyncTaskAnswer): Promise<AsyncTask> {
    return this.json("POST", `${asyncTaskPath(threadId, taskId)}/answer`, body);
  }

  cancelRun(threadId: string, runId: string): Promise<unknown> {
    return this.viaSdk((sdk) => sdk.runs.cancel(threadId, runId));
  }

  async listFiles(threadId: string, folder?: string): Promise<FileEntry[]> {
    const query = folder ? `?folder=${encodeURIComponent(folder)}` : "";
    const answer = await this.json<{ files: FileEntry[] }>(
      "GET",
      `/threads/${encodeURIComponent(threadId)}/files${query}`,
    );
    return answer.files;
  }

  uploadFile(threadId: string, file: File): Promise<FileEntry> {
    const form = new FormData();
    form.append("file", file, file.name);
    return this.json("POST", `/threads/${encodeURIComponent(threadId)}/files`, form);
  }

  async downloadFile(threadId: string, path: string): Promise<Blob> {
    const response = await this.request(
      "GET",
      `/threads/${encodeURIComponent(threadId)}/files/content?path=${encodeURIComponent(path)}`,
    );
    return response.blob();
  }

  /** Starts a run and yields its events (SSE) until the server ends the stream. */
  streamRun(threadId: string, body: RunRequest, signal?: AbortSignal): AsyncGenerator<SseEvent> {
    const { assistantId, ...payload } = body;
    return this.sdkStream(
      this.sdk.runs.stream(threadId, assistantId, {
        ...payload,
        onDisconnect: "continue",
        ...(signal ? { signal } : {}),
      }),
    );
  }

  private async json<T>(method: string, path: string, body?: unknown): Promise<T> {
    const response = await this.request(method, path, body);
    const text = await response.text();
    return (text ? JSON.parse(text) : undefined) as T;
  }

  private async request(
    method: string,
    path: string,
    body?: unknown,
    signal?: AbortSignal,
    extraHeaders: Record<string, string> = {},
  ): Promise<Response> {
    const headers: Record<string, string> = {
      ...extraHeaders,
      authorization: `Bearer ${this.token}`,
    };
    let payload: RequestInit["body"];
    if (body instanceof FormData) payload = body;
    else if (body !== undefined) {
      headers["content-type"] = "application/json";
      payload = JSON.stringify(body);
    }
    let response: Response;
    try {
      response = await fetch(path, {
        method,
        headers,
        ...(payload === undefined ? {} : { body: payload }),
        ...(signal ? { signal } : {}),
      });
    } catch (error) {
      if ((error as Error).name === "AbortError") throw error;
      throw networkError((error as Error).message);
    }
    if (response.ok) return response;
    const error = await errorOfResponse(response);
    if (response.status === 401) this.onUnauthorized(error);
    throw error;
  }
}

function asyncTaskPath(threadId: string, taskId: string): string {
  return `/threads/${encodeURIComponent(threadId)}/async_tasks/${encodeURIComponent(taskId)}`;
}
