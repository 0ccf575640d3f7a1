import type { StateSnapshot } from "@langchain/langgraph";
import type { FastifyInstance } from "fastify";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import { z } from "zod";
import { ErrorCode, SubagentGraphError } from "../../errors.js";
import type { Runtime } from "../../runtime.js";
import type { ThreadInfo } from "../../threads/thread-api.js";
import { jsonContains } from "../../util/json-contains.js";
import { clampDepth } from "../../util/json-depth.js";
import type { RunService } from "../live-runs/run-service.js";
import {
  checkpointRef,
  emptyThreadState,
  MAX_READ_DEPTH,
  serializeSnapshot,
  serializeValue,
  TOO_DEEP,
} from "../protocol/serialize.js";
import { projectState, STATE_FIELDS, stateSelection } from "../protocol/state-select.js";
import { idParam, metadataFilterSchema, storeId } from "../protocol/store-text.js";
import { childThreadSchema, errorResponses, threadSchema, threadStateSchema } from "../schemas.js";
import { newThreadId, resolveThread, scopedThreadId } from "../thread-scope.js";

const threadParams = z.object({ thread_id: idParam() });
const metadataSchema = z.record(z.string(), z.unknown());
/** A checkpoint named in a body (the SDK's `Checkpoint`): only the root namespace has states. */
const checkpointRefSchema = z.looseObject({
  checkpoint_id: storeId().min(1).nullable().optional(),
  checkpoint_ns: z
    .literal("", {
      error:
        'only the root namespace "" has states here: a subagent\'s checkpoints are on its child thread (GET /threads/:id/subagents/:child_thread_id/history)',
    })
    .optional(),
});

/** The filters of a thread search or count (the SDK's `threads.search` and `threads.count`). */
const threadQuerySchema = z.looseObject({
  metadata: metadataSchema.optional(),
  ids: z.array(storeId()).optional(),
  status: z.enum(["idle", "busy", "interrupted", "error"]).optional(),
  values: z
    .record(z.string(), z.unknown())
    .optional()
    .describe(
      "threads whose latest state values contain these (as PostgreSQL's jsonb @>: nested objects match by subset, arrays by elements); a thread with no state has none",
    ),
});
type ThreadQuery = z.infer<typeof threadQuerySchema>;

/** The fields of the API's `Thread` that `select` may name. */
const THREAD_FIELDS = [
  "thread_id",
  "created_at",
  "updated_at",
  "state_updated_at",
  "metadata",
  "status",
  "config",
  "values",
  "interrupts",
] as const;

/** The API's `Thread` for one of the caller's threads. */
async function threadOf(
  runtime: Runtime,
  service: RunService,
  uid: string,
  info: ThreadInfo,
  withState = true,
): Promise<z.infer<typeof threadSchema>> {
  // The state (a checkpoint read and the graph's next step) is the costly part; a search that
  // selects none of values, status, state_updated_at and interrupts skips it.
  const state = withState ? await runtime.threads.state(uid, info.threadId) : undefined;
  const status = service.threadStatus(uid, info, state?.next);
  return {
    thread_id: info.threadId,
    created_at: info.createdAt,
    updated_at: info.updatedAt,
    state_updated_at: state?.createdAt ?? info.createdAt,
    // Clamped: metadata stored before bodies were depth-limited could be too deep to serialise.
    metadata: clampDepth(
      { ...info.metadata, ...(info.agentId ? { assistant_id: info.agentId } : {}) },
      MAX_READ_DEPTH,
      TOO_DEEP,
    ),
    status,
    config: {},
    values: state ? serializeSnapshot(state, info.threadId).values : {},
    interrupts: state ? interruptsByTask(state.tasks) : {},
  };
}

/**
 * The API's `Thread.interrupts`: each task of the thread's head with its interrupts
 * (`[{ id, value }]`), keyed by task id, as the reference server fills it from the head's tasks
 * (`@langchain/langgraph-api`'s `threads.setStatus`); a task that finished or failed in the
 * paused step shows `[]`. Empty when the thread waits on nothing.
 */
function interruptsByTask(tasks: StateSnapshot["tasks"]): Record<string, unknown> {
  return Object.fromEntries(tasks.map((task) => [task.id, serializeValue(task.interrupts ?? [])]));
}

/** `/threads`: the caller's threads and their LangGraph state and history. */
export function threadRoutes(app: FastifyInstance, runtime: Runtime, service: RunService): void {
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
      return threadOf(runtime, service, request.uid, info);
    },
  );

  /**
   * The caller's threads a search or a count asks for. Filters on what only the state tells
   * (`status`, `values`) read every candidate's state and then page; the others page in the
   * store and read the state only if `withState`.
   */
  const findThreads = async (
    uid: string,
    query: ThreadQuery,
    page: { limit: number; offset: number } | undefined,
    withState: boolean,
  ) => {
    const byState = query.status !== undefined || query.values !== undefined;
    const infos = await runtime.threads.search(uid, {
      ...(query.metadata ? { metadata: query.metadata } : {}),
      // Each id may name a thread the caller chose it for (stored scoped) or one stored as is.
      ...(query.ids ? { ids: query.ids.flatMap((id) => [id, scopedThreadId(uid, id)]) } : {}),
      limit: byState || !page ? Number.MAX_SAFE_INTEGER : page.limit,
      offset: byState || !page ? 0 : page.offset,
    });
    const threads = await Promise.all(
      infos.map((info) => threadOf(runtime, service, uid, info, withState || byState)),
    );
    if (!byState) return threads;
    const matching = threads.filter(
      (thread) =>
        (query.status === undefined || thread.status === query.status) &&
        (query.values === undefined || jsonContains(thread.values, query.values)),
    );
    return page ? matching.slice(page.offset, page.offset + page.limit) : matching;
  };

  routes.post(
    "/threads/search",
    {
      schema: {
        tags: ["threads"],
        summary: "Search your threads (most recently used first)",
        body: threadQuerySchema
          .extend({
            limit: z.number().int().min(1).max(1000).optional(),
            offset: z.number().int().min(0).optional(),
            select: z
              .array(
                z.enum(THREAD_FIELDS, {
                  error: `use some of ${THREAD_FIELDS.join(", ")} (context is not kept)`,
                }),
              )
              .min(1)
              .optional()
              .describe(
                "the fields to answer with (default all); without values, status, state_updated_at and interrupts no state is read",
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
        !select ||
        select.has("values") ||
        select.has("status") ||
        select.has("state_updated_at") ||
        select.has("interrupts");
      const threads = await findThreads(
        request.uid,
        body,
        { limit: body.limit ?? 10, offset: body.offset ?? 0 },
        withState,
      );
      if (!select) return threads;
      return threads.map((thread) =>
        Object.fromEntries(Object.entries(thread).filter(([field]) => select.has(field))),
      );
    },
  );

  routes.post(
    "/threads/count",
    {
      schema: {
        tags: ["threads"],
        summary: "How many of your threads a search with these filters finds",
        body: threadQuerySchema.optional(),
        response: { 200: z.number().int(), ...errorResponses },
      },
    },
    async (request) =>
      (await findThreads(request.uid, request.body ?? {}, undefined, false)).length,
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
        service,
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
        service,
        request.uid,
        await runtime.threads.updateMetadata(
          request.uid,
          request.params.thread_id,
          request.body.metadata,
        ),
      ),
  );

  const readState = async (
    uid: string,
    threadId: string,
    checkpointId: string | undefined,
    select: string | string[] | undefined,
  ) => {
    const selection = stateSelection(select);
    const state = await runtime.threads.state(uid, threadId, checkpointId ? { checkpointId } : {});
    return projectState(
      state ? serializeSnapshot(state, threadId) : emptyThreadState(threadId),
      selection,
    );
  };

  /**
   * The query of a state read. `subgraphs` is accepted and changes nothing: subagents run on
   * child threads of their own (read them under /threads/:id/subagents), not as subgraphs.
   */
  const stateQuery = z.looseObject({
    select: z
      .union([z.string(), z.array(z.string())])
      .optional()
      .describe(
        `the fields to answer with (default all): ${STATE_FIELDS.join(", ")}, values.<key>`,
      ),
    subgraphs: z.enum(["0", "1", "true", "false"]).optional(),
  });
  const stateResponse = threadStateSchema
    .partial()
    .describe("the state; all fields unless select names some");

  routes.get(
    "/threads/:thread_id/state",
    {
      schema: {
        tags: ["threads"],
        summary:
          "A thread's latest state (values, next, tasks, checkpoint); with no checkpoint yet, empty values and a checkpoint whose checkpoint_id is null",
        params: threadParams,
        querystring: stateQuery,
        response: { 200: stateResponse, ...errorResponses },
      },
    },
    async (request) =>
      readState(request.uid, request.params.thread_id, undefined, request.query.select),
  );

  routes.post(
    "/threads/:thread_id/state/checkpoint",
    {
      schema: {
        tags: ["threads"],
        summary:
          "A thread's state at the checkpoint named in the body (checkpoint_id null or absent: the latest)",
        params: threadParams,
        body: z.looseObject({
          checkpoint: checkpointRefSchema,
          subgraphs: z.boolean().optional(),
          select: z.array(z.string()).optional(),
        }),
        response: { 200: stateResponse, ...errorResponses },
      },
    },
    async (request) =>
      readState(
        request.uid,
        request.params.thread_id,
        request.body.checkpoint.checkpoint_id ?? undefined,
        request.body.select,
      ),
  );

  routes.get(
    "/threads/:thread_id/state/:checkpoint_id",
    {
      schema: {
        tags: ["threads"],
        summary: "A thread's state at one checkpoint",
        params: threadParams.extend({ checkpoint_id: idParam() }),
        querystring: stateQuery,
        response: { 200: stateResponse, ...errorResponses },
      },
    },
    async (request) =>
      readState(
        request.uid,
        request.params.thread_id,
        request.params.checkpoint_id,
        request.query.select,
      ),
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
                storeId(),
                z.looseObject({
                  configurable: z.looseObject({ checkpoint_id: storeId() }),
                }),
              ])
              .optional(),
            metadata: metadataFilterSchema
              .optional()
              .describe("only checkpoints whose metadata has these top-level values"),
            checkpoint: checkpointRefSchema
              .optional()
              .describe("with a checkpoint_id, only that checkpoint (as LangGraph lists it)"),
            select: z
              .array(z.string())
              .optional()
              .describe(
                `the fields of each state (default all): ${STATE_FIELDS.join(", ")}, values.<key>`,
              ),
          })
          .optional(),
        response: {
          200: z
            .array(threadStateSchema.partial())
            .describe("states; all fields unless select names some"),
          ...errorResponses,
        },
      },
    },
    async (request) => {
      const body = request.body ?? {};
      const selection = stateSelection(body.select);
      const before =
        typeof body.before === "string" ? body.before : body.before?.configurable.checkpoint_id;
      const states = await runtime.threads
        .stateHistory(request.uid, request.params.thread_id, {
          limit: body.limit ?? 10,
          ...(before ? { before } : {}),
          ...(body.metadata ? { metadata: body.metadata } : {}),
          ...(body.checkpoint?.checkpoint_id
            ? { checkpointId: body.checkpoint.checkpoint_id }
            : {}),
        })
        .catch((error: unknown) => {
          // The runtime names its option; over HTTP the field is the body's.
          if (SubagentGraphError.isInstance(error) && error.field === "checkpoint_id") {
            throw new SubagentGraphError(error.code, `checkpoint.checkpoint_id: ${error.message}`, {
              field: "checkpoint.checkpoint_id",
              cause: error,
            });
          }
          throw error;
        });
      return states.map((state) =>
        projectState(serializeSnapshot(state, request.params.thread_id), selection),
      );
    },
  );

  routes.delete(
    "/threads/:thread_id",
    {
      schema: {
        tags: ["threads"],
        summary:
          "Delete one of your threads with everything it holds: its checkpoints, its subagents' child threads, its files and its runs (409 while a run is on it)",
        params: threadParams,
        response: { 204: z.null().describe("deleted"), ...errorResponses },
      },
    },
    async (request, reply) => {
      await runtime.threads.delete(request.uid, request.params.thread_id);
      service.forgetThread(request.uid, request.params.thread_id);
      return reply.status(204).send(null);
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
          checkpoint_id: storeId().optional(),
          checkpoint: z.looseObject({ checkpoint_id: storeId() }).optional(),
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
        params: threadParams.extend({ child_thread_id: idParam() }),
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
        params: threadParams.extend({ child_thread_id: idParam() }),
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
