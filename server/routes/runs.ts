import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import { z } from "zod";
import { RUN_STATUSES } from "../../contract.js";
import { ErrorCode, messageOf, SubagentGraphError } from "../../errors.js";
import type { LiveRun } from "../live-runs/live-run.js";
import type { RunService } from "../live-runs/run-service.js";
import { parseLastEventId } from "../protocol/last-event-id.js";
import { runCreateSchema } from "../protocol/run-create.js";
import { RUN_FIELDS } from "../protocol/run-json.js";
import { replyHeaders, sseFrame, startSse } from "../protocol/sse.js";
import { idParam } from "../protocol/store-text.js";
import { parseStreamModes } from "../protocol/stream-modes.js";
import { errorResponses, runSchema } from "../schemas.js";
import { type ThreadRef, unscopeText } from "../thread-scope.js";

const threadParams = z.object({ thread_id: idParam() });
const runParams = threadParams.extend({ run_id: idParam() });
const flag = z.enum(["0", "1", "true", "false"]).optional();
const isSet = (value: string | undefined) => value === "1" || value === "true";

/** `/threads/:id/runs…`: background, waited and streamed runs, joins and cancels. */
export function runRoutes(app: FastifyInstance, service: RunService): void {
  const routes = app.withTypeProvider<ZodTypeProvider>();

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
      const { run } = await service.start(request.uid, threadOf(request), request.body, ["values"]);
      reply.header("content-location", runLocation(run));
      return run.json();
    },
  );

  routes.post(
    "/threads/:thread_id/runs/stream",
    {
      schema: {
        tags: ["runs"],
        summary:
          "Start a run and stream its events (SSE); with stream_subgraphs, a subagent's events come as <mode>|tools:<task id>",
        params: threadParams,
        body: runCreateSchema,
      },
    },
    async (request, reply) => {
      const started = await service.start(request.uid, threadOf(request), request.body, ["values"]);
      await streamRun(request, reply, started.run, -1, started.cancelOnDisconnect);
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
      const started = await service.start(request.uid, threadOf(request), request.body, []);
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
      const all = await service.list(request.uid, request.params.thread_id, {
        limit: limit ?? 10,
        offset: offset ?? 0,
        ...(status ? { status } : {}),
      });
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
    async (request) => service.get(request.uid, request.params.thread_id, request.params.run_id),
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
      const wait = isSet(request.query.wait);
      const { thread_id, run_id } = request.params;
      await service.cancel(request.uid, thread_id, run_id, wait);
      return reply.status(wait ? 204 : 202).send();
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
      const run = await service.find(request.uid, request.params.thread_id, request.params.run_id);
      return waitFor(reply, run, cancelOnDisconnect);
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
      const run = await service.find(request.uid, request.params.thread_id, request.params.run_id);
      await streamRun(request, reply, run, after, cancelOnDisconnect);
    },
  );
}

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

/** The caller's thread the route names (resolved by the hook of `server/thread-scope.ts`). */
function threadOf(request: FastifyRequest): ThreadRef {
  const params = request.params as { thread_id: string };
  return request.threadRef ?? { external: params.thread_id, id: params.thread_id, exists: false };
}

function runLocation(run: LiveRun): string {
  return `/threads/${run.threadId}/runs/${run.runId}`;
}

/**
 * Streams a run's events after `afterId` as SSE, then closes. The run does not depend on this
 * client: a disconnect only unsubscribes, unless the client asked to cancel on disconnect.
 */
async function streamRun(
  request: FastifyRequest,
  reply: FastifyReply,
  run: LiveRun,
  afterId: number,
  cancelOnDisconnect: boolean,
): Promise<void> {
  const headers = replyHeaders(reply);
  // A hijacked reply skips the onSend hooks: the caller's ids are put back here.
  const shown = (text: string) => unscopeText(request.uid, text);
  headers["content-location"] = shown(runLocation(run));
  reply.hijack();
  const response = reply.raw;
  startSse(response, headers);
  let follow: Awaited<ReturnType<LiveRun["follow"]>>;
  try {
    follow = await run.follow(afterId, (event) => response.write(shown(sseFrame(event))));
  } catch (error) {
    // The shared log could not be read (a fleet's database gone): the stream says so and ends.
    const message = messageOf(error);
    response.end(
      sseFrame({
        id: afterId + 1,
        event: "error",
        data: { error: "INTERNAL", message: `the run's events cannot be read: ${message}` },
      }),
    );
    return;
  }
  const leave = () => {
    follow.stop();
    if (!response.writableFinished && cancelOnDisconnect && !run.finished) {
      request.log.info({ runId: run.runId }, "client disconnected: cancelling the run");
      void run.cancel({ clientLeft: true }).catch(() => undefined);
    }
  };
  if (response.destroyed) return leave();
  void follow.done.then(() => response.end());
  response.on("close", leave);
}

/** The run's final values once it ends, or the API's `{ __error__ }` (status 200) if it failed. */
async function waitFor(reply: FastifyReply, run: LiveRun, cancelOnDisconnect: boolean) {
  const left = new AbortController();
  const onClose = () => {
    if (reply.raw.writableFinished) return;
    left.abort();
    if (cancelOnDisconnect && !run.finished) {
      void run.cancel({ clientLeft: true }).catch(() => undefined);
    }
  };
  reply.raw.on("close", onClose);
  const result = await run.result(left.signal);
  reply.raw.off("close", onClose);
  return result ?? {};
}
