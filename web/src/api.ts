import type { AgentRecord } from "./agent-form-model.js";
import { readSse, type SseEvent } from "./sse.js";

/** Where the token is kept between visits. */
export const TOKEN_KEY = "subagent-graph.token";

/** An error answer of the API (`{ error: { code, message, field? } }`), or a network failure. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly field?: string,
  ) {
    super(message);
    this.name = "ApiError";
  }
}

/** A file in a thread's uploads or outputs. */
export interface FileEntry {
  path: string;
  size: number;
  modifiedAt: string;
}

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

/** A thread as `/threads` returns it. */
export interface ThreadInfo {
  thread_id: string;
  created_at: string;
  updated_at: string;
  metadata: Record<string, unknown>;
  status?: string;
}

/** Virtual folder of a thread's uploads. */
export const UPLOADS_FOLDER = "/home/gem/user-data/uploads";

/**
 * The console's client of the HTTP API, for one token. `onUnauthorized` runs on any 401 (the
 * token was revoked or mistyped), so the page can ask for a new one.
 */
export class Api {
  constructor(
    private readonly token: string,
    private readonly onUnauthorized: (error: ApiError) => void = () => {},
  ) {}

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

  createThread(metadata: Record<string, unknown>): Promise<ThreadInfo> {
    return this.json("POST", "/threads", { metadata });
  }

  /**
   * The user's threads, most recently used first (the server's order), without their state:
   * a list needs no messages, and the server then reads no checkpoint.
   */
  searchThreads(limit = 50): Promise<ThreadInfo[]> {
    const select = ["thread_id", "created_at", "updated_at", "metadata"];
    return this.json("POST", "/threads/search", { limit, select });
  }

  threadState(threadId: string): Promise<{ values: unknown; next: string[] }> {
    return this.json("GET", `/threads/${encodeURIComponent(threadId)}/state`);
  }

  childThread(threadId: string, childThreadId: string): Promise<{ values: unknown }> {
    return this.json(
      "GET",
      `/threads/${encodeURIComponent(threadId)}/subagents/${encodeURIComponent(childThreadId)}`,
    );
  }

  cancelRun(threadId: string, runId: string): Promise<unknown> {
    return this.json(
      "POST",
      `/threads/${encodeURIComponent(threadId)}/runs/${encodeURIComponent(runId)}/cancel`,
    );
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
  async *streamRun(
    threadId: string,
    body: unknown,
    signal?: AbortSignal,
  ): AsyncGenerator<SseEvent> {
    const response = await this.request(
      "POST",
      `/threads/${encodeURIComponent(threadId)}/runs/stream`,
      body,
      signal,
    );
    if (!response.body) throw new ApiError(0, "NO_STREAM", "the server sent no event stream");
    yield* readSse(response.body);
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
  ): Promise<Response> {
    const headers: Record<string, string> = { authorization: `Bearer ${this.token}` };
    let payload: BodyInit | undefined;
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
      throw new ApiError(0, "NETWORK", `the server cannot be reached: ${(error as Error).message}`);
    }
    if (response.ok) return response;
    const error = await errorOf(response);
    if (response.status === 401) this.onUnauthorized(error);
    throw error;
  }
}

async function errorOf(response: Response): Promise<ApiError> {
  const text = await response.text().catch(() => "");
  try {
    const parsed = JSON.parse(text) as {
      error?: { code?: string; message?: string; field?: string };
    };
    if (parsed.error?.message) {
      return new ApiError(
        response.status,
        parsed.error.code ?? "ERROR",
        parsed.error.message,
        parsed.error.field,
      );
    }
  } catch {
    // Not our error shape: fall through to the status line.
  }
  return new ApiError(
    response.status,
    "HTTP_ERROR",
    `${response.status} ${response.statusText} ${text}`.trim(),
  );
}
