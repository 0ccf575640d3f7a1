import type { FastifyInstance } from "fastify";
import { isFinishedStatus } from "../../contract.js";
import type { LoggedRunEvent } from "../../runs/run-event-log.js";
import type { Runtime } from "../../runtime.js";
import type { RunRegistry } from "../live-runs/run-registry.js";
import type { RunService } from "../live-runs/run-service.js";
import { serializeSnapshot } from "../protocol/serialize.js";
import type { RunEnding } from "./convert.js";
import { CommandRefusal } from "./wire.js";

/**
 * Everything the thread protocol asks of runs and threads, in one place: start or resume a run,
 * follow a run's events, find a thread's runs, read its state. The protocol's commands go
 * through here only, so that moving them onto the run service (`server/` run service, issue 40
 * part 3) changes this file alone.
 *
 * A run starts through our own `POST /threads/:id/runs` (`app.inject`, with the caller's token),
 * which resolves the caller's thread ids and hands the run to the run service
 * (`server/live-runs/run-service.ts`): a v2 run gets exactly the checks, run records, leases, fleet
 * queueing and approval rules of a legacy one. Its events are followed through the same service
 * (`LiveRun.follow`: `ManagedRun` on SQLite, the shared event log on PostgreSQL).
 */
export interface RunDoor {
  /**
   * Starts a run on the caller's thread (created if it does not exist, as the protocol's
   * `run.start` does), streaming every mode the protocol needs, subgraphs included.
   * @throws CommandRefusal naming what the run route refused, with its code and message
   */
  start(request: StartRequest): Promise<{ runId: string; agentId: string }>;
  /** Follows a run's events from its first; `done` settles with how it ended. */
  follow(
    uid: string,
    threadId: string,
    runId: string,
    sink: (event: LoggedRunEvent) => void,
  ): Promise<RunFollow>;
  /** The runs of the thread going on now or created at or after `since` (ISO time), oldest first. */
  runsSince(uid: string, threadId: string, since: string): Promise<RunSummary[]>;
  /** The thread's values and head checkpoint; undefined when the caller has no such thread. */
  state(
    uid: string,
    threadId: string,
  ): Promise<
    { values: Record<string, unknown>; checkpoint: { id: string; ns: string } | null } | undefined
  >;
  /** The agent the thread's runs use; undefined before its first run or when it is not the caller's. */
  threadAgent(uid: string, threadId: string): Promise<string | undefined>;
}

/** What {@link RunDoor.start} sends. */
export interface StartRequest {
  /** The caller's credentials as they came (`authorization`, `x-api-key`). */
  auth: Record<string, string>;
  /** The thread id as the caller names it. */
  thread: string;
  assistantId: string;
  input?: unknown;
  command?: { resume: unknown };
  metadata?: Record<string, unknown>;
  config?: Record<string, unknown>;
  /** The checkpoint to run from (`configurable.checkpoint_id` of the protocol's run config). */
  checkpointId?: string;
  multitaskStrategy?: string;
}

export interface RunFollow {
  stop(): void;
  done: Promise<RunEnding>;
}

export interface RunSummary {
  runId: string;
  agentId: string;
  createdAt: string;
}

/** The stream modes a protocol run records (every one the protocol's channels are made from). */
const PROTOCOL_MODES = ["values", "updates", "messages-tuple", "custom"];

export function runDoor(
  app: FastifyInstance,
  runtime: Runtime,
  registry: RunRegistry,
  service: RunService,
): RunDoor {
  return {
    async start(request) {
      const answer = await app.inject({
        method: "POST",
        url: `/threads/${encodeURIComponent(request.thread)}/runs`,
        headers: { ...request.auth, "content-type": "application/json" },
        payload: JSON.stringify({
          assistant_id: request.assistantId,
          ...(request.input === undefined ? {} : { input: request.input }),
          ...(request.command ? { command: request.command } : {}),
          ...(request.metadata ? { metadata: request.metadata } : {}),
          ...(request.config ? { config: request.config } : {}),
          ...(request.checkpointId ? { checkpoint_id: request.checkpointId } : {}),
          ...(request.multitaskStrategy ? { multitask_strategy: request.multitaskStrategy } : {}),
          stream_mode: PROTOCOL_MODES,
          stream_subgraphs: true,
          if_not_exists: "create",
        }),
      });
      const body = answer.json() as {
        run_id?: string;
        assistant_id?: string;
        error?: { code?: string; message?: string };
      };
      if (answer.statusCode === 200 && typeof body.run_id === "string") {
        return { runId: body.run_id, agentId: request.assistantId };
      }
      const code = body.error?.code ?? "INTERNAL";
      throw new CommandRefusal(
        answer.statusCode >= 500 ? "unknown_error" : "invalid_argument",
        `${code}: ${body.error?.message ?? `the run was refused (HTTP ${answer.statusCode})`}`,
      );
    },

    async follow(uid, threadId, runId, sink) {
      // The run service reads a run the same way whichever process runs it.
      const run = await service.find(uid, threadId, runId).catch(() => undefined);
      const ending = async () => {
        const last = await runtime.runInfo(uid, runId);
        return endingOf(last?.status ?? "error", last?.status_reason ?? undefined);
      };
      if (!run) return { stop: () => undefined, done: ending() };
      const follow = await run.follow(-1, sink);
      return { stop: () => follow.stop(), done: follow.done.then(ending) };
    },

    async runsSince(uid, threadId, since) {
      if (!runtime.fleet) {
        return registry
          .forThread(uid, threadId)
          .filter((run) => !run.finished || run.createdAt >= since)
          .reverse()
          .map((run) => ({
            runId: run.runId,
            agentId: run.options.agentId,
            createdAt: run.createdAt,
          }));
      }
      const infos = await runtime.listRuns(uid, threadId, { limit: 10 }).catch(() => []);
      return infos
        .filter((info) => !isFinishedStatus(info.status) || info.created_at >= since)
        .reverse()
        .map((info) => ({
          runId: info.run_id,
          agentId: info.agent_id,
          createdAt: info.created_at,
        }));
    },

    async state(uid, threadId) {
      if (!(await owns(runtime, uid, threadId))) return undefined;
      const snapshot = await runtime.threads.state(uid, threadId);
      if (!snapshot) return { values: {}, checkpoint: null };
      const id = snapshot.config.configurable?.checkpoint_id;
      return {
        values: serializeSnapshot(snapshot, threadId).values,
        checkpoint: typeof id === "string" ? { id, ns: "" } : null,
      };
    },

    async threadAgent(uid, threadId) {
      if (!(await owns(runtime, uid, threadId))) return undefined;
      return (await runtime.threads.get(uid, threadId)).agentId;
    },
  };
}

async function owns(runtime: Runtime, uid: string, threadId: string): Promise<boolean> {
  return runtime.threads.check(uid, threadId).then(
    () => true,
    () => false,
  );
}

/** A run's recorded status as the protocol's last root lifecycle event names it. */
function endingOf(status: string, error: string | undefined): RunEnding {
  if (status === "success") return { status: "completed" };
  if (status === "interrupted") return { status: "interrupted" };
  return { status: "failed", ...(error ? { error } : {}) };
}
