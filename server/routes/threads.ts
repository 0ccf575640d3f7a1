import type { FastifyInstance } from "fastify";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import { z } from "zod";
import { ErrorCode, SubagentGraphError } from "../../errors.js";
import type { ThreadInfo } from "../../runs/thread-api.js";
import type { Runtime } from "../../runtime.js";
import { clampDepth } from "../../util/json-depth.js";
import {
  checkpointRef,
  emptyThreadState,
  MAX_READ_DEPTH,
  serializeSnapshot,
  serializeValue,
  TOO_DEEP,
} from "../protocol/serialize.js";
import type { RunRegistry } from "../runs/run-registry.js";
import { childThreadSchema, errorResponses, threadSchema, threadStateSchema } from "../schemas.js";
import { newThreadId, resolveThread, scopedThreadId } from "../thread-scope.js";

const threadParams = z.object({ thread_id: z.string().min(1) });
const metadataSchema = z.record(z.string(), z.unknown());

/** The fields of the API's `Thread` that `select` may name. */
const THREAD_FIELDS = [
  "thread_id",
  "created_at",
  "updated_at",
  "metadata",
  "status",
  "config",
  "values",
  "interrupts",
] as const;

/** The API's `Thread` for one of the caller's threads. */
async function threadOf(
  runtime: Runtime,
  runs: RunRegistry,
  uid: string,
  info: ThreadInfo,
  withState = true,
): Promise<z.infer<typeof threadSchema>> {
  // The state (a checkpoint read and the graph's next step) is the costly part; a search that
  // selects neither values nor status skips it.
  const state = withState ? await runtime.threads.state(uid, info.threadId) : undefined;
  const running = runs.forThread(uid, info.threadId).some((run) => !run.finished);
  const status =
    info.busy || running
      ? "busy"
      : runs.lastFailed(uid, info.threadId)
        ? "error"
        : state && state.next.length > 0
          ? "interrupted"
          : "idle";
  return {
    thread_id: info.threadId,
    created_at: info.createdAt,
    updated_at: info.updatedAt,
    // Clamped: metadata stored before bodies were depth-limited could be too deep to serialise.
    metadata: clampDepth(
      { ...info.metadata, ...(info.agentId ? { assistant_id: info.agentId } : {}) },
      MAX_READ_DEPTH,
      TOO_DEEP,
    ),
    status,
    config: {},
    values: state ? serializeSnapshot(state, info.threadId).values : {},
    interrupts: {},
  };
}

/** `/threads`: the caller's threads and their LangGraph state and history. */
export function threadRoutes(app: FastifyInstance, runtime: Runtime, runs: RunRegistry): void {
  const routes = app.withTypeProvider<ZodTypeProvider>();

  /**
   * A child thread of `threadId` the caller may read. One answer for every child they may not
   * (absent, another user's, recorded by another thread), naming the HTTP parameter.
   */
  const readChild = async (uid: string, threadId: string, childThreadId: string) => {
    const notFound = () =>
      new SubagentGraphError(
        ErrorCode.NotFound,
        `child thread "${childThreadId}" not found: pass a child_thread_id from one of your threads' subagent_runs`,
        { field: "child_thread_id" },
      );
    const child = await runtime.childThread(uid, childThreadId).catch((error) => {
      throw SubagentGraphError.isInstance(error) && error.code === ErrorCode.NotFound
        ? notFound()
        : error;
    });
    if (child.parentThreadId !== threadId) throw notFound();
    return child;
  };

  routes.post(
    "/threads",
    {
      schema: {
        tags: ["threads"],
        summary:
          "Create a thread (yours alone). A thread_id you choose names your thread only: other users may have threads with the same id, and nothing here tells",
        body: z
          .looseObject({
            thread_id: z.string().optional(),
            metadata: metadataSchema.optional(),
            if_exists: z.enum(["raise", "do_nothing"]).optional(),
          })
          .optional(),
        response: { 200: threadSchema, ...errorResponses },
      },
    },
    async (request) => {
      const body = request.body ?? {};
      // An id the caller chose names their own thread, whoever else uses it (`thread-scope.ts`).
      let threadId: string | undefined;
      if (body.thread_id) {
        const ref = await resolveThread(runtime, request.uid, body.thread_id);
        threadId = ref.exists ? ref.id : newThreadId(request.uid, body.thread_id);
      }
      const info = await runtime.threads.create(request.uid, {
        ...(threadId ? { threadId } : {}),
        ...(body.metadata ? { metadata: body.metadata } : {}),
        ...(body.if_exists ? { ifExists: body.if_exists } : {}),
      });
      return threadOf(runtime, runs, request.uid, info);
    },
  );

  routes.post(
    "/threads/search",
    {
      schema: {
        tags: ["threads"],
        summary: "Search your threads (most recently used first)",
        body: z
          .looseObject({
            metadata: metadataSchema.optional(),
            ids: z.array(z.string()).optional(),
            status: z.enum(["idle", "busy", "interrupted", "error"]).optional(),
            limit: z.number().int().min(1).max(1000).optional(),
            offset: z.number().int().min(0).optional(),
            select: z
              .array(
                z.enum(THREAD_FIELDS, {
                  error: `select: use some of ${THREAD_FIELDS.join(", ")} (state_updated_at and context are not kept)`,
                }),
              )
              .min(1)
              .optional()
              .describe(
                "the fields to answer with (default all); without values and status no state is read",
              ),
          })
          .optional(),
        response: {
          200: z
            .array(threadSchema.partial())
            .describe("threads; all fields unless select names some"),
          ...errorResponses,
        },
      },
    },
    async (request) => {
      const body = request.body ?? {};
      const select = body.select ? new Set<string>(body.select) : undefined;
      const withState =
        !select || select.has("values") || select.has("status") || body.status !== undefined;
      // A status filter needs every thread's status, so it is applied before paging.
      const infos = await runtime.threads.search(request.uid, {
        ...(body.metadata ? { metadata: body.metadata } : {}),
        // Each id may name a thread the caller chose it for (stored scoped) or one stored as is.
        ...(body.ids
          ? { ids: body.ids.flatMap((id) => [id, scopedThreadId(request.uid, id)]) }
          : {}),
        limit: body.status ? Number.MAX_SAFE_INTEGER : (body.limit ?? 10),
        offset: body.status ? 0 : (body.offset ?? 0),
      });
      let threads = await Promise.all(
        infos.map((info) => threadOf(runtime, runs, request.uid, info, withState)),
      );
      if (body.status) {
        const offset = body.offset ?? 0;
        threads = threads
          .filter((thread) => thread.status === body.status)
          .slice(offset, offset + (body.limit ?? 10));
      }
      if (!select) return threads;
      return threads.map((thread) =>
        Object.fromEntries(Object.entries(thread).filter(([field]) => select.has(field))),
      );
    },
  );

  routes.get(
    "/threads/:thread_id",
    {
      schema: {
        tags: ["threads"],
        summary: "Get one of your threads",
        params: threadParams,
        response: { 200: threadSchema, ...errorResponses },
      },
    },
    async (request) =>
      threadOf(
        runtime,
        runs,
        request.uid,
        await runtime.threads.get(request.uid, request.params.thread_id),
      ),
  );

  routes.patch(
    "/threads/:thread_id",
    {
      schema: {
        tags: ["threads"],
        summary: "Merge metadata into a thread's",
        params: threadParams,
        body: z.looseObject({ metadata: metadataSchema }),
        response: { 200: threadSchema, ...errorResponses },
      },
    },
    async (request) =>
      threadOf(
        runtime,
        runs,
        request.uid,
        await runtime.threads.updateMetadata(
          request.uid,
          request.params.thread_id,
          request.body.metadata,
        ),
      ),
  );

  const readState = async (uid: string, threadId: string, checkpointId?: string) => {
    const state = await runtime.threads.state(uid, threadId, checkpointId ? { checkpointId } : {});
    return state ? serializeSnapshot(state, threadId) : emptyThreadState();
  };

  routes.get(
    "/threads/:thread_id/state",
    {
      schema: {
        tags: ["threads"],
        summary: "A thread's latest state (values, next, tasks, checkpoint)",
        params: threadParams,
        response: { 200: threadStateSchema, ...errorResponses },
      },
    },
    async (request) => readState(request.uid, request.params.thread_id),
  );

  routes.get(
    "/threads/:thread_id/state/:checkpoint_id",
    {
      schema: {
        tags: ["threads"],
        summary: "A thread's state at one checkpoint",
        params: threadParams.extend({ checkpoint_id: z.string().min(1) }),
        response: { 200: threadStateSchema, ...errorResponses },
      },
    },
    async (request) =>
      readState(request.uid, request.params.thread_id, request.params.checkpoint_id),
  );

  routes.post(
    "/threads/:thread_id/history",
    {
      schema: {
        tags: ["threads"],
        summary: "A thread's states, newest first",
        params: threadParams,
        body: z
          .looseObject({
            limit: z.number().int().min(1).max(1000).optional(),
            before: z
              .union([
                z.string(),
                z.looseObject({
                  configurable: z.looseObject({ checkpoint_id: z.string() }),
                }),
              ])
              .optional(),
          })
          .optional(),
        response: { 200: z.array(threadStateSchema), ...errorResponses },
      },
    },
    async (request) => {
      const body = request.body ?? {};
      const before =
        typeof body.before === "string" ? body.before : body.before?.configurable.checkpoint_id;
      const states = await runtime.threads.stateHistory(request.uid, request.params.thread_id, {
        limit: body.limit ?? 10,
        ...(before ? { before } : {}),
      });
      return states.map((state) => serializeSnapshot(state, request.params.thread_id));
    },
  );

  routes.post(
    "/threads/:thread_id/state",
    {
      schema: {
        tags: ["threads"],
        summary:
          "Fork: write values as a new checkpoint after checkpoint_id (default the latest); a message with an existing id replaces it. Run without input from the returned checkpoint to continue",
        params: threadParams,
        body: z.looseObject({
          values: z.record(z.string(), z.unknown()),
          checkpoint_id: z.string().optional(),
          checkpoint: z.looseObject({ checkpoint_id: z.string() }).optional(),
          as_node: z.string().optional(),
        }),
        response: {
          200: z.object({
            checkpoint: z.object({
              thread_id: z.string(),
              checkpoint_ns: z.string(),
              checkpoint_id: z.string(),
            }),
          }),
          ...errorResponses,
        },
      },
    },
    async (request) => {
      const { thread_id } = request.params;
      const body = request.body;
      const checkpointId = body.checkpoint_id ?? body.checkpoint?.checkpoint_id;
      const fork = await runtime.threads.fork(request.uid, thread_id, {
        values: body.values,
        ...(checkpointId ? { checkpointId } : {}),
        ...(body.as_node ? { asNode: body.as_node } : {}),
      });
      return {
        checkpoint: { thread_id, checkpoint_ns: "", checkpoint_id: fork.checkpointId },
      };
    },
  );

  routes.get(
    "/threads/:thread_id/subagents/:child_thread_id/history",
    {
      schema: {
        tags: ["threads"],
        summary: "A subagent's child thread's checkpoints, newest first (same rights as its state)",
        params: threadParams.extend({ child_thread_id: z.string().min(1) }),
        response: { 200: z.array(threadStateSchema), ...errorResponses },
      },
    },
    async (request) => {
      const { thread_id, child_thread_id } = request.params;
      const child = await readChild(request.uid, thread_id, child_thread_id);
      const history = await runtime.childHistory(request.uid, child.threadId);
      return history.map((checkpoint) => ({
        values: { messages: serializeValue(checkpoint.messages) } as Record<string, unknown>,
        next: [],
        tasks: [],
        metadata: { step: checkpoint.step ?? null, source: checkpoint.source ?? null },
        created_at: checkpoint.createdAt,
        checkpoint: checkpointRef(child.threadId, checkpoint.checkpointId),
        parent_checkpoint: checkpoint.parentCheckpointId
          ? checkpointRef(child.threadId, checkpoint.parentCheckpointId)
          : null,
      }));
    },
  );

  routes.get(
    "/threads/:thread_id/subagents/:child_thread_id",
    {
      schema: {
        tags: ["threads"],
        summary: "A subagent's child thread, if the parent thread is yours and records that child",
        params: threadParams.extend({ child_thread_id: z.string().min(1) }),
        response: { 200: childThreadSchema, ...errorResponses },
      },
    },
    async (request) => {
      const { thread_id, child_thread_id } = request.params;
      const child = await readChild(request.uid, thread_id, child_thread_id);
      return {
        thread_id: child.threadId,
        parent_thread_id: child.parentThreadId,
        subagent_type: child.subagentType,
        run: child.run,
        values: { messages: serializeValue(child.messages) },
      };
    },
  );
}
