import type { Run, ThreadState } from "@langchain/langgraph-sdk";
import type { AgentRecord } from "../../web/src/agent-form-model.js";
import type { ChatApi, FileEntry, RunRequest, ThreadInfo } from "../../web/src/api-types.js";
import type { HistoryState } from "../../web/src/fork-point.js";
import type { SseEvent } from "../../web/src/stream-event.js";

/** A wire message as a thread's state holds it. */
export interface WireMessage {
  id: string;
  type: "human" | "ai" | "tool";
  content: string;
}

/** An agent record with only what the chat page reads set apart. */
export function agent(id: string, options: Partial<AgentRecord> = {}): AgentRecord {
  return {
    id,
    slug: id,
    name: `Agent ${id}`,
    description: "",
    backend_id: "ChatAgentBackend",
    is_subagent: false,
    is_default: false,
    owner_uid: "alice",
    share_config: { mode: "private", uids: [], editors: [] },
    config_json: { context: {} },
    version: 1,
    created_at: "2026-01-01T00:00:00.000Z",
    updated_at: "2026-01-01T00:00:00.000Z",
    ...options,
  };
}

/** A listed thread, started with agent `assistantId`. */
export function thread(id: string, assistantId: string, title?: string): ThreadInfo {
  return {
    thread_id: id,
    created_at: "2026-01-01T00:00:00.000Z",
    updated_at: "2026-01-01T00:00:00.000Z",
    metadata: { assistant_id: assistantId, ...(title ? { title } : {}) },
    status: "idle",
  };
}

/**
 * One run's stream, driven by the test: events are pushed while the page follows it, and the run
 * ends (its stream closes) or fails when the test says so.
 */
export class ScriptedRun {
  readonly #events: SseEvent[] = [];
  #ended = false;
  #failure: unknown;
  #wake: (() => void) | undefined;
  #next = 0;

  constructor(readonly runId: string) {}

  /** The run announces itself (the `metadata` event), as the server's first event does. */
  announce(): this {
    return this.push("metadata", { run_id: this.runId });
  }

  push(event: string, data: unknown): this {
    this.#events.push({ event, data, id: String(this.#next++) });
    this.#wake?.();
    return this;
  }

  end(): this {
    this.#ended = true;
    this.#wake?.();
    return this;
  }

  /** The stream fails with `error` once its events are read (a refusal before any event). */
  fail(error: unknown): this {
    this.#failure = error;
    return this.end();
  }

  async *stream(): AsyncGenerator<SseEvent> {
    for (let read = 0; ; ) {
      const event = this.#events[read];
      if (event) {
        read += 1;
        yield event;
        continue;
      }
      if (this.#ended) break;
      await new Promise<void>((resolve) => {
        this.#wake = resolve;
      });
    }
    if (this.#failure !== undefined) throw this.#failure;
  }
}

/**
 * The HTTP API as the chat page sees it, scripted: threads, their stored messages and history,
 * and one {@link ScriptedRun} per run, taken in order. A call it has no answer for throws.
 */
export class ScriptedChatApi implements ChatApi {
  agents: AgentRecord[] = [];
  threads: ThreadInfo[] = [];
  /** Each thread's stored messages (what `threadState` answers). */
  readonly stored = new Map<string, WireMessage[]>();
  readonly history = new Map<string, HistoryState[]>();
  /** The run running on a thread, as `runs.list` finds it after a reload. */
  readonly runningRuns = new Map<string, string>();
  /** The runs to start or join, in order. */
  readonly runs: ScriptedRun[] = [];
  /** What each run was started with. */
  readonly started: { threadId: string; body: RunRequest }[] = [];
  readonly joined: { threadId: string; runId: string; lastEventId: string }[] = [];
  readonly cancelled: string[] = [];
  readonly calls: string[] = [];
  /** A thread's state is answered only once its promise settles (a slow answer). */
  readonly held = new Map<string, Promise<void>>();
  /** The next call of that name fails with the error. */
  readonly failures = new Map<string, unknown>();
  #created = 0;

  async listAgents(): Promise<AgentRecord[]> {
    this.#called("listAgents");
    return this.agents;
  }

  async searchThreads(): Promise<ThreadInfo[]> {
    this.#called("searchThreads");
    return this.threads.map((listed) => ({ ...listed }));
  }

  async createThread(metadata: Record<string, unknown>): Promise<ThreadInfo> {
    this.#called(`createThread ${JSON.stringify(metadata)}`);
    this.#created += 1;
    const created = { ...thread(`t${this.#created}`, ""), metadata };
    this.threads.unshift(created);
    return created;
  }

  async updateThread(threadId: string, metadata: Record<string, unknown>): Promise<ThreadInfo> {
    this.#called(`updateThread ${threadId} ${JSON.stringify(metadata)}`);
    const listed = this.threads.find((candidate) => candidate.thread_id === threadId);
    if (!listed) throw new Error(`no thread ${threadId}`);
    listed.metadata = { ...listed.metadata, ...metadata };
    return listed;
  }

  async deleteThread(threadId: string): Promise<unknown> {
    this.#called(`deleteThread ${threadId}`);
    this.threads = this.threads.filter((candidate) => candidate.thread_id !== threadId);
    return {};
  }

  async threadState(threadId: string): Promise<ThreadState> {
    this.#called(`threadState ${threadId}`);
    await this.held.get(threadId);
    return {
      values: { messages: this.stored.get(threadId) ?? [] },
      next: [],
      checkpoint: {
        thread_id: threadId,
        checkpoint_ns: "",
        checkpoint_id: null,
        checkpoint_map: null,
      },
      metadata: {},
      created_at: null,
      parent_checkpoint: null,
      tasks: [],
    };
  }

  async threadHistory(threadId: string): Promise<HistoryState[]> {
    this.#called(`threadHistory ${threadId}`);
    return this.history.get(threadId) ?? [];
  }

  async runningRun(threadId: string): Promise<Run | undefined> {
    this.#called(`runningRun ${threadId}`);
    const runId = this.runningRuns.get(threadId);
    return runId ? this.#run(threadId, runId, "running") : undefined;
  }

  async uploadFile(threadId: string, file: File): Promise<FileEntry> {
    this.#called(`uploadFile ${threadId} ${file.name}`);
    return { path: `/home/gem/user-data/uploads/${file.name}`, size: file.size, modifiedAt: "" };
  }

  streamRun(threadId: string, body: RunRequest): AsyncGenerator<SseEvent> {
    this.#called(`streamRun ${threadId}`);
    this.started.push({ threadId, body });
    return this.#nextRun().stream();
  }

  joinRun(threadId: string, runId: string, lastEventId: string): AsyncGenerator<SseEvent> {
    this.#called(`joinRun ${threadId} ${runId}`);
    this.joined.push({ threadId, runId, lastEventId });
    return this.#nextRun().stream();
  }

  async run(threadId: string, runId: string): Promise<Run> {
    return this.#run(threadId, runId, "success");
  }

  async cancelRun(threadId: string, runId: string): Promise<unknown> {
    this.#called(`cancelRun ${threadId} ${runId}`);
    this.cancelled.push(runId);
    return {};
  }

  #nextRun(): ScriptedRun {
    const next = this.runs.shift();
    if (!next) throw new Error("no run scripted");
    return next;
  }

  #run(threadId: string, runId: string, status: Run["status"]): Run {
    return {
      run_id: runId,
      thread_id: threadId,
      assistant_id: "",
      created_at: "",
      updated_at: "",
      status,
      metadata: {},
      multitask_strategy: null,
    };
  }

  #called(call: string): void {
    this.calls.push(call);
    const name = call.split(" ")[0] ?? call;
    const failure = this.failures.get(name);
    if (failure === undefined) return;
    this.failures.delete(name);
    throw failure;
  }
}
