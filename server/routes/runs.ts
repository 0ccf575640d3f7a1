import { randomUUID } from "node:crypto";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import { z } from "zod";
import { ErrorCode, SubagentGraphError } from "../../errors.js";
import type { Fleet } from "../../runs/fleet.js";
import { type RunInfo, runInfoOf } from "../../runs/run-info.js";
import type { Runtime } from "../../runtime.js";
import {
  MULTITASK_STRATEGIES,
  type MultitaskStrategy,
  type NewQueuedRun,
} from "../../store/run-queue.js";
import { parseLastEventId } from "../protocol/last-event-id.js";
import { parseRunCreate, type RunCreateBody, runCreateSchema } from "../protocol/run-create.js";
import { replyHeaders, sseFrame, startSse } from "../protocol/sse.js";
import { idParam } from "../protocol/store-text.js";
import { parseStreamModes } from "../protocol/stream-modes.js";
import type { WireStreamMode } from "../protocol/translate.js";
import type { QueueWorker } from "../runs/queue-worker.js";
import { RemoteRuns } from "../runs/remote-runs.js";
import type { ManagedRun, RunRegistry } from "../runs/run-registry.js";
import { errorResponses, runSchema } from "../schemas.js";
import { newThreadId, type ThreadRef, unscopeText } from "../thread-scope.js";
import { chatAgent } from "./assistants.js";

const threadParams = z.object({ thread_id: idParam() });
const runParams = threadParams.extend({ run_id: idParam() });
const flag = z.enum(["0", "1", "true", "false"]).optional();
const isSet = (value: string | undefined) => value === "1" || value === "true";

/** A run just asked for: one this process runs, or one queued for the fleet's workers. */
type StartedRun = { cancelOnDisconnect: boolean } & ({ run: ManagedRun } | { queued: RunInfo });

/** `/threads/:id/runs…`: background, waited and streamed runs, joins and cancels. */
export function runRoutes(
  app: FastifyInstance,
  runtime: Runtime,
  runs: RunRegistry,
  worker: QueueWorker | undefined,
): void {
  const routes = app.withTypeProvider<ZodTypeProvider>();
  // Runs of other processes stream from the shared event log (PostgreSQL only).
  const remote = runtime.runEvents ? new RemoteRuns(runtime, runtime.runEvents) : undefined;

  /**
   * Starts a run on a thread of the caller (created first with `if_not_exists: "create"`, under
   * the caller's own id: see `server/thread-scope.ts`). Every refusal comes before the thread is
   * created.
   */
  async function startRun(
    uid: string,
    thread: ThreadRef,
    body: RunCreateBody,
    defaultModes: WireStreamMode[],
  ): Promise<StartedRun> {
    const parsed = parseRunCreate(body, defaultModes);
    if (parsed.multitaskStrategy !== "reject" && !runtime.fleet) {
      throw new SubagentGraphError(
        ErrorCode.Unsupported,
        `multitask_strategy: "${parsed.multitaskStrategy}" needs a fleet's queue, which runs on PostgreSQL (DATABASE_URL): one process on SQLite runs one run per thread at a time ("reject", the default, answers 409 while busy)`,
        { field: "multitask_strategy" },
      );
    }
    const agent = await chatAgent(runtime, uid, parsed.assistantId);
    let threadId = thread.id;
    if (!thread.exists) {
      // The runtime's answer for a thread the caller does not have.
      if (!parsed.createThread) await runtime.threads.check(uid, thread.id);
      if (parsed.checkpointId) throw checkpointNotFound(parsed.checkpointId, thread.external, body);
      if (parsed.command) throw nothingToResume(thread.external);
      if (parsed.input === undefined) throw nothingToRun(thread.external, undefined);
      threadId = newThreadId(uid, thread.external);
      await runtime.threads.create(uid, { threadId, ifExists: "do_nothing" });
    } else if (parsed.command) {
      if (runs.forThread(uid, threadId).some((run) => !run.finished)) {
        // Answered before the resume is checked: while a run goes on, what the thread waits on
        // is about to change.
        throw new SubagentGraphError(
          ErrorCode.ThreadBusy,
          `thread "${thread.external}" has a run in progress: wait for it to end, then resume what it waits on (GET /threads/${thread.external} lists its interrupts)`,
          { field: "thread_id" },
        );
      }
      const bound = (await runtime.threads.get(uid, threadId)).agentId;
      if (bound && bound !== agent.id) {
        // The requests wait in that agent's graph (its gates, its tools): another agent's
        // graph would not find the step that asked, nor check an edit against its tools.
        throw new SubagentGraphError(
          ErrorCode.Validation,
          `assistant_id: thread "${thread.external}" waits for approval under assistant "${bound}", not "${body.assistant_id}": resume it with assistant_id "${bound}"`,
          { field: "assistant_id" },
        );
      }
      if (parsed.checkpointId) {
        await checkHeadCheckpoint(uid, thread, body);
        parsed.checkpointId = undefined;
      }
      // Checked before anything is queued or written (the runtime checks it again as the run
      // starts): a bad resume is refused naming its field, and the requests stay pending.
      // A fleet's worker gets the checked map by interrupt id, which answers exactly the
      // requests seen here whenever it runs.
      if (runtime.fleet) {
        const resume = await runtime.checkResume({
          uid,
          threadId,
          agent: agent.id,
          command: parsed.command,
        });
        parsed.command = { resume };
      }
    } else if (parsed.input === undefined || parsed.checkpointId) {
      // Checked here as well as by the runtime, which refuses only after it has recorded the run:
      // a refused request writes nothing. A queued run (fleet) would find an unknown checkpoint
      // only once a worker ran it, as a failed run on a thread left in error.
      const state = await runtime.threads
        .state(uid, threadId, parsed.checkpointId ? { checkpointId: parsed.checkpointId } : {})
        .catch((error: unknown) => {
          if (isNotFound(error) && (error as SubagentGraphError).field === "checkpoint_id") {
            throw checkpointNotFound(parsed.checkpointId ?? "", thread.external, body);
          }
          throw error;
        });
      if (parsed.input === undefined && (!state || state.next.length === 0))
        throw nothingToRun(thread.external, parsed.checkpointId);
    }
    if (runtime.fleet) {
      const queued = await enqueue(runtime.fleet, parsed.multitaskStrategy, {
        uid,
        threadId,
        agentId: agent.id,
        metadata: parsed.metadata,
        request: {
          ...(parsed.input === undefined ? {} : { input: parsed.input }),
          ...(parsed.checkpointId ? { checkpointId: parsed.checkpointId } : {}),
          ...(parsed.command ? { command: parsed.command } : {}),
          streamModes: [...parsed.streamModes],
          subgraphs: parsed.subgraphs,
          multitaskStrategy: parsed.multitaskStrategy,
        },
      });
      return { queued, cancelOnDisconnect: parsed.cancelOnDisconnect };
    }
    const run = await runs
      .start({
        uid,
        threadId,
        agentId: agent.id,
        input: parsed.input,
        checkpointId: parsed.checkpointId,
        command: parsed.command,
        streamModes: parsed.streamModes,
        subgraphs: parsed.subgraphs,
        metadata: parsed.metadata,
      })
      .catch((error: unknown) => {
        // The runtime names its option `checkpointId`; over HTTP the field is the body's.
        if (isNotFound(error) && (error as SubagentGraphError).field === "checkpointId") {
          throw checkpointNotFound(parsed.checkpointId ?? "", thread.external, body);
        }
        throw error;
      });
    return { run, cancelOnDisconnect: parsed.cancelOnDisconnect };
  }

  /**
   * A resume may name the checkpoint it answers only as `useStream` does: the thread's newest,
   * where the requests wait (the same as leaving it out). Any other is refused, since a resume
   * goes on from the newest checkpoint.
   * @throws SubagentGraphError `VALIDATION_FAILED` naming `checkpoint_id` or `checkpoint`
   */
  async function checkHeadCheckpoint(
    uid: string,
    thread: ThreadRef,
    body: RunCreateBody,
  ): Promise<void> {
    const field = body.checkpoint_id ? "checkpoint_id" : "checkpoint";
    const asked = body.checkpoint_id || body.checkpoint?.checkpoint_id;
    const head = (await runtime.threads.state(uid, thread.id))?.config.configurable
      ?.checkpoint_id as string | undefined;
    if (head !== undefined && head === asked) return;
    throw new SubagentGraphError(
      ErrorCode.Validation,
      `${field}: command.resume answers the requests the thread's newest checkpoint${head ? ` ("${head}")` : ""} waits on, not checkpoint "${asked}": leave ${field} out`,
      { field },
    );
  }

  /**
   * Writes a run in the fleet's queue (PostgreSQL), which wakes the workers as it commits; its
   * record as it stands then (pending, or claimed already).
   * @throws SubagentGraphError `THREAD_BUSY` when the thread has a run pending or running
   */
  async function enqueue(
    fleet: Fleet,
    strategy: MultitaskStrategy,
    run: Omit<NewQueuedRun, "runId">,
  ): Promise<RunInfo> {
    const runId = randomUUID();
    // A worker here with a free slot starts a run that can go at once itself, without the
    // round trip of a wake-up call and a claim (`RunQueue.enqueueOrClaim` says when).
    const slot = worker?.reserve();
    let outcome: Awaited<ReturnType<typeof fleet.queue.enqueueOrClaim>>;
    try {
      const claimer = slot ? { runner: fleet.runner, leaseMs: fleet.leaseMs } : undefined;
      outcome = await fleet.queue.enqueueOrClaim({ ...run, runId }, strategy, claimer);
    } catch (error) {
      slot?.release();
      throw error;
    }
    if (typeof outcome === "object") {
      slot?.run(outcome);
      return runInfoOf(outcome.row);
    }
    slot?.release();
    if (outcome === "refused") {
      throw new SubagentGraphError(
        ErrorCode.ThreadBusy,
        `thread "${run.threadId}" already has a run pending or in progress: wait for it to finish or cancel it`,
        { field: "thread_id" },
      );
    }
    const info = await runtime.runInfo(run.uid, runId);
    if (!info) throw runNotFound({ thread_id: run.threadId, run_id: runId });
    return info;
  }

  routes.post(
    "/threads/:thread_id/runs",
    {
      schema: {
        tags: ["runs"],
        summary: "Start a run in the background",
        params: threadParams,
        body: runCreateSchema,
        response: { 200: runSchema, ...errorResponses },
      },
    },
    async (request, reply) => {
      const started = await startRun(request.uid, threadOf(request), request.body, ["values"]);
      if ("queued" in started) {
        reply.header("content-location", storedLocation(started.queued));
        return runJson(started.queued);
      }
      reply.header("content-location", runLocation(started.run));
      return started.run.toJSON();
    },
  );

  routes.post(
    "/threads/:thread_id/runs/stream",
    {
      schema: {
        tags: ["runs"],
        summary:
          "Start a run and stream its events (SSE); with stream_subgraphs, a subagent's events come as <mode>|subagent:<child thread id>",
        params: threadParams,
        body: runCreateSchema,
      },
    },
    async (request, reply) => {
      const started = await startRun(request.uid, threadOf(request), request.body, ["values"]);
      if ("queued" in started) {
        return remote?.stream(request, reply, started.queued, -1, started.cancelOnDisconnect);
      }
      streamRun(request, reply, started.run, -1, started.cancelOnDisconnect);
    },
  );

  routes.post(
    "/threads/:thread_id/runs/wait",
    {
      schema: {
        tags: ["runs"],
        summary: "Start a run and answer with its final state values",
        params: threadParams,
        body: runCreateSchema,
      },
    },
    async (request, reply) => {
      const started = await startRun(request.uid, threadOf(request), request.body, []);
      if ("queued" in started) {
        reply.header("content-location", storedLocation(started.queued));
        return remote?.join(request, reply, started.queued, started.cancelOnDisconnect);
      }
      reply.header("content-location", runLocation(started.run));
      return waitFor(reply, started.run, started.cancelOnDisconnect);
    },
  );

  routes.get(
    "/threads/:thread_id/runs",
    {
      schema: {
        tags: ["runs"],
        summary:
          "The runs of a thread, newest first, whichever process ran them (from the shared store)",
        params: threadParams,
        querystring: z.looseObject({
          limit: z.coerce.number().int().min(1).max(1000).optional().describe("default 10"),
          offset: z.coerce.number().int().min(0).optional(),
          status: z.enum(RUN_STATUSES).optional(),
          select: z
            .union([z.string(), z.array(z.string())])
            .optional()
            .describe(`the fields to answer with (default all): some of ${RUN_FIELDS.join(", ")}`),
        }),
        response: {
          200: z.array(runSchema.partial()).describe("runs; all fields unless select names some"),
          ...errorResponses,
        },
      },
    },
    async (request) => {
      const { limit, offset, status } = request.query;
      const select = runSelect(request.query.select);
      // Runs are recorded pending (queued, on PostgreSQL), running, then with how they ended:
      // none is ever timeout.
      const stored = status === "timeout" ? undefined : status;
      const infos = await runtime.listRuns(request.uid, request.params.thread_id, {
        limit: limit ?? 10,
        offset: offset ?? 0,
        ...(stored ? { status: stored } : {}),
      });
      const all = stored === status ? infos.map(runJson) : [];
      if (!select) return all;
      return all.map((run) =>
        Object.fromEntries(Object.entries(run).filter(([field]) => select.has(field))),
      );
    },
  );

  routes.get(
    "/threads/:thread_id/runs/:run_id",
    {
      schema: {
        tags: ["runs"],
        summary: "One run, whichever process runs or ran it (from the shared store)",
        params: runParams,
        response: { 200: runSchema, ...errorResponses },
      },
    },
    async (request) => runJson(await storedRun(request.uid, request.params)),
  );

  routes.post(
    "/threads/:thread_id/runs/:run_id/cancel",
    {
      schema: {
        tags: ["runs"],
        summary: "Cancel a run and its subagents (wait=1 answers 204 once it has stopped)",
        params: runParams,
        querystring: z.looseObject({
          wait: flag,
          action: z.enum(["interrupt", "rollback"]).optional(),
        }),
      },
    },
    async (request, reply) => {
      if (request.query.action === "rollback") {
        throw new SubagentGraphError(
          ErrorCode.Unsupported,
          'action: "rollback" is not supported: a cancelled run keeps its checkpoints (use "interrupt")',
          { field: "action" },
        );
      }
      const run = runs.get(request.uid, request.params.thread_id, request.params.run_id);
      if (run) {
        if (!run.finished) {
          // The request on its row first: the run's record ends with the reason it gives.
          await runtime.cancel(request.uid, request.params.run_id);
          run.controller.abort(new Error(`run ${run.runId} cancelled`));
        }
        if (!isSet(request.query.wait)) return reply.status(202).send();
        await run.done;
        return reply.status(204).send();
      }
      // A run of another process: flag it in the database; its process stops it at its next
      // heartbeat, and with wait=1 we watch its row until it has.
      await storedRun(request.uid, request.params);
      await runtime.cancel(request.uid, request.params.run_id);
      if (!isSet(request.query.wait)) return reply.status(202).send();
      await settled(request.uid, request.params);
      return reply.status(204).send();
    },
  );

  routes.get(
    "/threads/:thread_id/runs/:run_id/join",
    {
      schema: {
        tags: ["runs"],
        summary: "Wait for a run and answer with its final state values",
        params: runParams,
        querystring: z.looseObject({ cancel_on_disconnect: flag }),
      },
    },
    async (request, reply) => {
      const cancelOnDisconnect = isSet(request.query.cancel_on_disconnect);
      const local = runs.get(request.uid, request.params.thread_id, request.params.run_id);
      if (local) return waitFor(reply, local, cancelOnDisconnect);
      const row = await remoteRun(request.uid, request.params);
      return remote?.join(request, reply, row, cancelOnDisconnect);
    },
  );

  routes.get(
    "/threads/:thread_id/runs/:run_id/stream",
    {
      schema: {
        tags: ["runs"],
        summary:
          "Join a run's event stream; Last-Event-ID: -1 (or none) replays from the start, N resumes after event N, anything else is a 422",
        params: runParams,
        querystring: z.looseObject({
          cancel_on_disconnect: flag,
          stream_mode: z
            .union([z.string(), z.array(z.string())])
            .optional()
            .describe(
              "checked as a run's stream_mode is; the stream carries the modes the run was started with",
            ),
        }),
      },
    },
    async (request, reply) => {
      const after = parseLastEventId(request.headers["last-event-id"]);
      parseStreamModes(request.query.stream_mode, []);
      const cancelOnDisconnect = isSet(request.query.cancel_on_disconnect);
      const local = runs.get(request.uid, request.params.thread_id, request.params.run_id);
      if (local) return streamRun(request, reply, local, after, cancelOnDisconnect);
      const row = await remoteRun(request.uid, request.params);
      await remote?.stream(request, reply, row, after, cancelOnDisconnect);
    },
  );

  /** A run's row in the shared database (any process's), if it is `uid`'s and on that thread. */
  async function storedRun(uid: string, params: { thread_id: string; run_id: string }) {
    const row = await runtime.runInfo(uid, params.run_id);
    if (!row || row.thread_id !== params.thread_id) throw runNotFound(params);
    return row;
  }

  /** Polls a run of another process until it is no longer pending or running (at most a minute). */
  async function settled(uid: string, params: { thread_id: string; run_id: string }) {
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline) {
      if (!["pending", "running"].includes((await storedRun(uid, params)).status)) return;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  /**
   * The record of a run this process does not have, to stream from the shared event log: on
   * SQLite (one process) there is none, so such a run is not found.
   */
  async function remoteRun(uid: string, params: { thread_id: string; run_id: string }) {
    if (!remote) throw runNotFound(params, "its events are kept by the process that ran it");
    return storedRun(uid, params);
  }
}

function runNotFound(params: { thread_id: string; run_id: string }, why?: string) {
  return new SubagentGraphError(
    ErrorCode.NotFound,
    `run "${params.run_id}" not found on thread "${params.thread_id}"${why ? ` (${why}, and this one restarted or never ran it)` : ""}: list the thread's runs for their ids`,
    { field: "run_id" },
  );
}

/** The statuses of the API's `Run` (`RunStatus` of `@langchain/langgraph-sdk`). */
const RUN_STATUSES = ["pending", "running", "error", "success", "timeout", "interrupted"] as const;

/** The fields of our `Run` that a run list's `select` may name. */
const RUN_FIELDS = [
  "run_id",
  "thread_id",
  "assistant_id",
  "created_at",
  "updated_at",
  "status",
  "metadata",
  "multitask_strategy",
  "status_reason",
  "subagent_runs",
] as const;

/**
 * A run list's `select` (one field or several, as the query string repeats it) as a set.
 * @throws SubagentGraphError `VALIDATION_FAILED` (field `select`) naming a field we do not keep
 */
function runSelect(select: string | string[] | undefined): Set<string> | undefined {
  if (select === undefined) return undefined;
  const fields = Array.isArray(select) ? select : [select];
  const unknown = fields.filter((field) => !(RUN_FIELDS as readonly string[]).includes(field));
  if (unknown.length > 0) {
    throw new SubagentGraphError(
      ErrorCode.Validation,
      `select: ${unknown.map((field) => JSON.stringify(field)).join(", ")} is not a field of our runs (kwargs and cancel_reason are not kept): use some of ${RUN_FIELDS.join(", ")}`,
      { field: "select" },
    );
  }
  return new Set(fields);
}

/** The API's `Run` from its record in the shared store (whichever process runs or ran it). */
function runJson(row: RunInfo) {
  return {
    run_id: row.run_id,
    thread_id: row.thread_id,
    assistant_id: row.agent_id,
    status: (["pending", "running", "success", "error", "interrupted"].includes(row.status)
      ? row.status
      : "error") as "pending" | "running" | "success" | "error" | "interrupted",
    attempt: Number(row.attempt),
    metadata: row.metadata,
    multitask_strategy: strategyOf(row),
    created_at: row.created_at,
    updated_at: row.updated_at,
    status_reason: row.status_reason,
    subagent_runs: row.subagent_runs,
  };
}

/** The caller's thread the route names (resolved by the hook of `server/thread-scope.ts`). */
function threadOf(request: FastifyRequest): ThreadRef {
  const params = request.params as { thread_id: string };
  return request.threadRef ?? { external: params.thread_id, id: params.thread_id, exists: false };
}

/** A run request without input where the thread (or its checkpoint) has no step left to run. */
function nothingToRun(threadId: string, checkpointId: string | undefined) {
  return new SubagentGraphError(
    ErrorCode.Validation,
    `thread "${threadId}" has nothing to run${checkpointId ? ` from checkpoint "${checkpointId}"` : ""}: its turn is complete, so pass input (a new message), or a checkpoint_id from before the step to replay`,
    { field: "input" },
  );
}

/** A resume (`command`) for a thread the caller has not run yet: nothing waits on it. */
function nothingToResume(threadId: string) {
  return new SubagentGraphError(
    ErrorCode.Validation,
    `thread "${threadId}" has never run, so it is not waiting for any approval and there is nothing to resume: send input (a new message) instead of command`,
    { field: "command" },
  );
}

/** An unknown `checkpoint_id` (or `checkpoint.checkpoint_id`) of a run request. */
function checkpointNotFound(checkpointId: string, threadId: string, body: RunCreateBody) {
  const field = body.checkpoint_id ? "checkpoint_id" : "checkpoint";
  return new SubagentGraphError(
    ErrorCode.NotFound,
    `${field}: checkpoint "${checkpointId}" not found in thread "${threadId}": pass a checkpoint_id from the thread's history, or leave it out to run from the latest`,
    { field },
  );
}

function isNotFound(error: unknown): boolean {
  return SubagentGraphError.isInstance(error) && error.code === ErrorCode.NotFound;
}

function runLocation(run: ManagedRun): string {
  return `/threads/${run.options.threadId}/runs/${run.runId}`;
}

function storedLocation(run: RunInfo): string {
  return `/threads/${run.thread_id}/runs/${run.run_id}`;
}

/**
 * Streams a run's events after `afterId` as SSE, then closes. The run does not depend on this
 * client: a disconnect only unsubscribes, unless the client asked to cancel on disconnect.
 */
function streamRun(
  request: FastifyRequest,
  reply: FastifyReply,
  run: ManagedRun,
  afterId: number,
  cancelOnDisconnect: boolean,
): void {
  const headers = replyHeaders(reply);
  // A hijacked reply skips the onSend hooks: the caller's ids are put back here.
  const shown = (text: string) => unscopeText(request.uid, text);
  headers["content-location"] = shown(runLocation(run));
  reply.hijack();
  const response = reply.raw;
  startSse(response, headers);
  const unsubscribe = run.subscribe(afterId, (event) => {
    if (event === "end") response.end();
    else response.write(shown(sseFrame(event)));
  });
  response.on("close", () => {
    unsubscribe();
    if (!response.writableFinished && cancelOnDisconnect && !run.finished) {
      request.log.info({ runId: run.runId }, "client disconnected: cancelling the run");
      run.controller.abort(new Error("client disconnected"));
    }
  });
}

/** The run's final values once it ends, or the API's `{ __error__ }` (status 200) if it failed. */
async function waitFor(reply: FastifyReply, run: ManagedRun, cancelOnDisconnect: boolean) {
  const onClose = () => {
    if (cancelOnDisconnect && !run.finished && !reply.raw.writableFinished) {
      run.controller.abort(new Error("client disconnected"));
    }
  };
  reply.raw.on("close", onClose);
  await run.done;
  reply.raw.off("close", onClose);
  if (run.status === "error" && run.error) return { __error__: run.error };
  return run.finalValues ?? {};
}

/** The multitask strategy a run was queued with ("reject" for one that never queued). */
function strategyOf(row: RunInfo): MultitaskStrategy {
  try {
    const asked = (JSON.parse(row.request ?? "{}") as { multitaskStrategy?: string })
      .multitaskStrategy;
    return (MULTITASK_STRATEGIES as readonly (string | undefined)[]).includes(asked)
      ? (asked as MultitaskStrategy)
      : "reject";
  } catch {
    return "reject";
  }
}
