import type { FastifyInstance } from "fastify";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import { z } from "zod";
import { ASYNC_TASK_STATUSES } from "../../contract.js";
import { asyncTaskSchema } from "../../middleware/async-task-records.js";
import type { Runtime } from "../../runtime.js";
import { idParam } from "../protocol/store-text.js";
import { errorResponses } from "../schemas.js";

const threadParams = z.object({ thread_id: idParam() });
const taskParams = threadParams.extend({ task_id: idParam() });
const detailSchema = asyncTaskSchema.extend({
  result: z.string().nullable().describe("the task's whole final answer, once it completed"),
});

/**
 * A thread's background tasks (README "Background subagents"): what its agent started with
 * `start_async_task`, read, cancelled, steered and answered from outside the conversation. Only
 * the thread's owner reaches them; a task of another thread is not found.
 */
export function asyncTaskRoutes(app: FastifyInstance, runtime: Runtime): void {
  const routes = app.withTypeProvider<ZodTypeProvider>();

  routes.get(
    "/threads/:thread_id/async_tasks",
    {
      schema: {
        tags: ["threads"],
        summary: "The thread's background tasks, oldest first",
        params: threadParams,
        querystring: z.object({
          status: z
            .enum(ASYNC_TASK_STATUSES, {
              error: `use one of ${ASYNC_TASK_STATUSES.join(", ")}, or leave status out`,
            })
            .optional(),
        }),
        response: { 200: z.array(asyncTaskSchema), ...errorResponses },
      },
    },
    async (request) =>
      runtime.asyncTasks.list(request.uid, request.params.thread_id, {
        ...(request.query.status ? { status: request.query.status } : {}),
      }),
  );

  routes.get(
    "/threads/:thread_id/async_tasks/:task_id",
    {
      schema: {
        tags: ["threads"],
        summary: "A background task with its whole final answer",
        params: taskParams,
        response: { 200: detailSchema, ...errorResponses },
      },
    },
    async (request) =>
      runtime.asyncTasks.get(request.uid, request.params.thread_id, request.params.task_id),
  );

  routes.post(
    "/threads/:thread_id/async_tasks/:task_id/cancel",
    {
      schema: {
        tags: ["threads"],
        summary: "Stop a background task that has not ended (its model call is aborted)",
        params: taskParams,
        response: { 200: asyncTaskSchema, ...errorResponses },
      },
    },
    async (request) =>
      runtime.asyncTasks.cancel(request.uid, request.params.thread_id, request.params.task_id),
  );

  routes.post(
    "/threads/:thread_id/async_tasks/:task_id/update",
    {
      schema: {
        tags: ["threads"],
        summary:
          "Send a follow-up message to a background task's subagent (run after what it does now)",
        params: taskParams,
        body: z.object({
          message: z
            .string({ error: "use the follow-up instruction as a string" })
            .min(1, { error: "use a non-empty follow-up instruction" }),
        }),
        response: { 200: asyncTaskSchema, ...errorResponses },
      },
    },
    async (request) =>
      runtime.asyncTasks.update(
        request.uid,
        request.params.thread_id,
        request.params.task_id,
        request.body.message,
      ),
  );

  routes.post(
    "/threads/:thread_id/async_tasks/:task_id/answer",
    {
      schema: {
        tags: ["threads"],
        summary:
          'Answer the approval a waiting background task asks for: { "resume": { "decisions": [...] } }, one decision per call it waits on',
        params: taskParams,
        body: z.object({ resume: z.unknown() }),
        response: { 200: asyncTaskSchema, ...errorResponses },
      },
    },
    async (request) =>
      runtime.asyncTasks.answer(
        request.uid,
        request.params.thread_id,
        request.params.task_id,
        request.body.resume,
      ),
  );
}
