import type { FastifyInstance, HTTPMethods } from "fastify";
import { ErrorCode } from "../../errors.js";
import { sendError } from "../http-errors.js";
import { errorSchema } from "../schemas.js";

/** An endpoint of the LangGraph Platform API that `@langchain/langgraph-sdk` calls and we do not serve. */
export interface UnsupportedEndpoint {
  method: Extract<HTTPMethods, "GET" | "POST" | "PUT" | "PATCH" | "DELETE">;
  /** The route, in Fastify's syntax. */
  url: string;
  /** The SDK method(s) that call it, e.g. `threads.copy`. */
  sdk: string;
  /** What to do instead, for the message. */
  instead: string;
}

const AGENTS = "an assistant here is a chat agent, managed under /api/agent";
const CRONS =
  "this server has no scheduler: run on a schedule from outside (cron, a job runner) with runs.create";
const STORE =
  "this server has no key-value store: keep such data in your application, or in thread metadata (threads.update)";
const THREADLESS =
  'every run here is on a thread: create one (threads.create) or pass a thread id with ifNotExists: "create"';

/**
 * Every endpoint of `@langchain/langgraph-sdk` 1.15's `Client` that we do not serve, read from
 * its client source (`dist/client/{assistants,threads,runs,crons,store,ui-internal}/index.js`
 * and the thread stream transport `dist/client/stream/transport/http.js`). Each answers
 * `{ error: { code: "UNSUPPORTED", message: "<SDK method> is not supported by this server: …" } }`
 * (see {@link unsupportedRoutes} for the status). `test/server/sdk-contract.test.ts` calls every
 * SDK method and fails on one that is neither served nor listed here.
 */
export const UNSUPPORTED_ENDPOINTS: readonly UnsupportedEndpoint[] = [
  {
    method: "POST",
    url: "/assistants",
    sdk: "assistants.create",
    instead: `${AGENTS}: create one with POST /api/agent`,
  },
  {
    method: "PATCH",
    url: "/assistants/:assistant_id",
    sdk: "assistants.update",
    instead: `${AGENTS}: update it with PUT /api/agent/:id`,
  },
  {
    method: "DELETE",
    url: "/assistants/:assistant_id",
    sdk: "assistants.delete",
    instead: `${AGENTS}: delete it with DELETE /api/agent/:id`,
  },
  {
    method: "POST",
    url: "/assistants/:assistant_id/versions",
    sdk: "assistants.getVersions",
    instead: "an agent keeps only its current version (its `version` counts the updates)",
  },
  {
    method: "POST",
    url: "/assistants/:assistant_id/latest",
    sdk: "assistants.setLatest",
    instead: "an agent keeps only its current version: update it with PUT /api/agent/:id",
  },
  {
    method: "GET",
    url: "/assistants/:assistant_id/graph",
    sdk: "assistants.getGraph",
    instead: "see the graph in LangGraph Studio (npm run studio)",
  },
  {
    method: "GET",
    url: "/assistants/:assistant_id/schemas",
    sdk: "assistants.getSchemas",
    instead:
      "a run takes messages as input and no config or context; LangGraph Studio (npm run studio) shows the graph's schemas",
  },
  {
    method: "GET",
    url: "/assistants/:assistant_id/subgraphs",
    sdk: "assistants.getSubgraphs",
    instead:
      "subagents are not subgraphs: they run on child threads of their own, listed in the agent's context.subagents (GET /api/agent/:id)",
  },
  {
    method: "GET",
    url: "/assistants/:assistant_id/subgraphs/:namespace",
    sdk: "assistants.getSubgraphs",
    instead:
      "subagents are not subgraphs: they run on child threads of their own, listed in the agent's context.subagents (GET /api/agent/:id)",
  },
  {
    method: "POST",
    url: "/threads/:thread_id/copy",
    sdk: "threads.copy",
    instead:
      "branch a thread in place instead: run from an earlier checkpoint_id, or fork with threads.updateState",
  },
  {
    method: "POST",
    url: "/threads/prune",
    sdk: "threads.prune",
    instead: "delete each thread with threads.delete",
  },
  {
    method: "PATCH",
    url: "/threads/:thread_id/state",
    sdk: "threads.patchState",
    instead:
      "a checkpoint's metadata is not changed after the fact: keep notes in the thread's metadata (threads.update)",
  },
  {
    method: "GET",
    url: "/threads/:thread_id/stream",
    sdk: "threads.joinStream",
    instead: "join one run's events with runs.joinStream(threadId, runId)",
  },
  { method: "POST", url: "/runs", sdk: "runs.create (without a thread)", instead: THREADLESS },
  {
    method: "POST",
    url: "/runs/stream",
    sdk: "runs.stream (without a thread)",
    instead: THREADLESS,
  },
  { method: "POST", url: "/runs/wait", sdk: "runs.wait (without a thread)", instead: THREADLESS },
  {
    method: "POST",
    url: "/runs/batch",
    sdk: "runs.createBatch",
    instead: "start each run with runs.create on its thread",
  },
  {
    method: "POST",
    url: "/runs/cancel",
    sdk: "runs.cancelMany",
    instead: "cancel each run with runs.cancel(threadId, runId)",
  },
  {
    method: "GET",
    url: "/runs/:run_id/stream",
    sdk: "runs.joinStream (without a thread)",
    instead: "pass the run's thread id: runs.joinStream(threadId, runId)",
  },
  {
    method: "DELETE",
    url: "/threads/:thread_id/runs/:run_id",
    sdk: "runs.delete",
    instead:
      "a run's record stays with its thread: delete the thread (threads.delete) to remove its runs",
  },
  {
    method: "POST",
    url: "/threads/:thread_id/runs/crons",
    sdk: "crons.createForThread",
    instead: CRONS,
  },
  { method: "POST", url: "/runs/crons", sdk: "crons.create", instead: CRONS },
  { method: "PATCH", url: "/runs/crons/:cron_id", sdk: "crons.update", instead: CRONS },
  { method: "DELETE", url: "/runs/crons/:cron_id", sdk: "crons.delete", instead: CRONS },
  { method: "POST", url: "/runs/crons/search", sdk: "crons.search", instead: CRONS },
  { method: "POST", url: "/runs/crons/count", sdk: "crons.count", instead: CRONS },
  { method: "PUT", url: "/store/items", sdk: "store.putItem", instead: STORE },
  { method: "GET", url: "/store/items", sdk: "store.getItem", instead: STORE },
  { method: "DELETE", url: "/store/items", sdk: "store.deleteItem", instead: STORE },
  { method: "POST", url: "/store/items/search", sdk: "store.searchItems", instead: STORE },
  { method: "POST", url: "/store/namespaces", sdk: "store.listNamespaces", instead: STORE },
  {
    method: "POST",
    url: "/ui/:assistant_id",
    sdk: "~ui.getComponent",
    instead: "agents here render no generative UI components",
  },
];

/**
 * The SDK retries a failed GET, PUT or DELETE answered with a status outside 400–409 and 422
 * (`AsyncCaller` in `@langchain/langgraph-sdk`'s `dist/utils/async_caller.js`): 4 more attempts
 * with a growing back-off: 21 to 23 s before the caller saw the error in a measurement against
 * a 501. POST and PATCH are never retried. So a method we do not serve answers 501 Not
 * Implemented on POST and PATCH, and 405 Method Not Allowed (with the `Allow` header the route
 * has) on GET, PUT and DELETE: the same body, at once.
 */
export function unsupportedStatus(method: UnsupportedEndpoint["method"]): 501 | 405 {
  return method === "POST" || method === "PATCH" ? 501 : 405;
}

/**
 * Routes answering every {@link UNSUPPORTED_ENDPOINTS} entry with code `UNSUPPORTED` naming the
 * SDK method and what to use instead, instead of a generic `404 no route`.
 */
export function unsupportedRoutes(app: FastifyInstance): void {
  for (const endpoint of UNSUPPORTED_ENDPOINTS) {
    const status = unsupportedStatus(endpoint.method);
    const message = `${endpoint.sdk} is not supported by this server: ${endpoint.instead}`;
    app.route({
      method: endpoint.method,
      url: endpoint.url,
      schema: {
        tags: ["unsupported"],
        summary: `Not served (${endpoint.sdk}): ${endpoint.instead}`,
        response: { [status]: errorSchema },
      },
      handler: async (_request, reply) => {
        if (status === 405) reply.header("allow", allowedMethods(app, endpoint.url));
        return sendError(reply, status, ErrorCode.Unsupported, message);
      },
    });
  }
}

/** The methods served at the route `url` (a 405's `Allow` header; empty when none is). */
function allowedMethods(app: FastifyInstance, url: string): string {
  return (["GET", "POST", "PUT", "PATCH", "DELETE"] as const)
    .filter(
      (method) =>
        app.hasRoute({ method, url }) &&
        !UNSUPPORTED_ENDPOINTS.some((entry) => entry.method === method && entry.url === url),
    )
    .join(", ");
}
