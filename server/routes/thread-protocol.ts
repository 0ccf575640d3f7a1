import websocket from "@fastify/websocket";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { messageOf } from "../../errors.js";
import type { Runtime } from "../../runtime.js";
import type { RunRegistry } from "../live-runs/run-registry.js";
import type { RunService } from "../live-runs/run-service.js";
import { replyHeaders, sseFrame, startSse } from "../protocol/sse.js";
import { type CommandContext, runCommand } from "../thread-protocol/commands.js";
import { matchesFilter } from "../thread-protocol/filters.js";
import {
  IdentifiedRefusal,
  MAX_COMMAND_BYTES,
  parseJsonText,
  readCommand,
  readFilter,
} from "../thread-protocol/parse.js";
import { runDoor } from "../thread-protocol/run-adapter.js";
import { ThreadSessions } from "../thread-protocol/sessions.js";
import { serveSocket } from "../thread-protocol/websocket.js";
import { CommandRefusal, errorResponse } from "../thread-protocol/wire.js";
import { newThreadId, unscopeText } from "../thread-scope.js";

/**
 * Bodies up to this size reach our own reading, which refuses anything over
 * `MAX_COMMAND_BYTES` with the protocol's envelope (larger ones get the server's 413).
 */
const BODY_LIMIT = 8 * MAX_COMMAND_BYTES;

/** An SSE comment this often keeps proxies from closing a quiet stream and lets the SDK detect a dead one. */
const HEARTBEAT_MS = 15_000;

/**
 * The thread-centric ("v2") protocol of LangGraph's API, which `client.threads.stream(...)` of
 * `@langchain/langgraph-sdk` and `@langchain/react` speak:
 *
 * - `POST /threads/:id/commands`: one command (`run.start`, `input.respond`, `state.get`,
 *   `agent.getTree`), answered with `{ type: "success" | "error", id, … }`;
 * - `POST /threads/:id/stream/events`: the thread's events as SSE, filtered by the body
 *   (`channels`, `namespaces`, `depth`) and replayed after its `since`;
 * - `GET /threads/:id/stream/events` upgraded to a WebSocket: commands and the events of the
 *   connection's subscriptions (`subscription.subscribe` / `unsubscribe` / `reconnect`).
 *
 * Same tokens and per-user threads as every route (the hooks of `server/app.ts` run first);
 * anything malformed gets the protocol's error envelope, never a 5xx. Everything below the
 * routes is in `server/thread-protocol/`.
 */
export async function threadProtocolRoutes(
  app: FastifyInstance,
  runtime: Runtime,
  runs: RunRegistry,
  service: RunService,
): Promise<void> {
  const door = runDoor(app, runtime, runs, service);
  const sessions = new ThreadSessions(door, (message) => app.log.warn(message));
  // Before the server waits for its connections: open streams and sockets end here.
  app.addHook("preClose", async () => sessions.closeAll());

  await app.register(async (scope) => {
    // Commands are read here, so that unreadable JSON gets the protocol's envelope, not the
    // server's error shape (the checks are `server/json-body.ts`'s, in `parseJsonText`).
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser("*", { parseAs: "string" }, (_request, body, done) =>
      done(null, body),
    );
    await scope.register(websocket, { options: { maxPayload: 8 * MAX_COMMAND_BYTES } });
    // An upgrade refused by a hook before the plugin's own (401 without a token) is answered on
    // the raw socket, which nothing else ends: it would keep the server from closing.
    scope.addHook("onResponse", async (request) => {
      if (String(request.headers.upgrade).toLowerCase() === "websocket")
        request.raw.socket?.destroy();
    });

    scope.post(
      "/threads/:thread_id/commands",
      { schema: { hide: true }, bodyLimit: BODY_LIMIT },
      async (request, reply) => {
        const context = contextOf(request);
        if (!("session" in context)) return reply.code(context.status).send(context.response);
        let command: ReturnType<typeof readCommand>;
        try {
          command = readCommand(parseJsonText(bodyText(request)));
        } catch (error) {
          if (!(error instanceof CommandRefusal)) throw error;
          const id = error instanceof IdentifiedRefusal ? error.commandId : null;
          return reply.code(error.status).send(errorResponse(id, error.code, error.message));
        }
        const outcome = await runCommand(command, context);
        return reply.code(outcome.status).send(outcome.response);
      },
    );

    scope.post(
      "/threads/:thread_id/stream/events",
      { schema: { hide: true }, bodyLimit: BODY_LIMIT },
      async (request, reply) => {
        const context = contextOf(request);
        if (!("session" in context)) return reply.code(context.status).send(context.response);
        let filter: ReturnType<typeof readFilter>;
        try {
          const body = parseJsonText(bodyText(request));
          if (typeof body !== "object" || body === null || Array.isArray(body)) {
            throw new CommandRefusal(
              "invalid_argument",
              'the body is a filter: {"channels": [...], "namespaces"?, "depth"?, "since"?}',
              400,
            );
          }
          filter = readFilter(body as Record<string, unknown>, true);
        } catch (error) {
          if (!(error instanceof CommandRefusal)) throw error;
          return reply.code(error.status).send(errorResponse(null, error.code, error.message));
        }
        streamEvents(request, reply, context, filter);
      },
    );

    scope.get(
      "/threads/:thread_id/stream/events",
      { websocket: true, schema: { hide: true } },
      (socket, request) => {
        const context = contextOf(request);
        if (!("session" in context)) {
          socket.send(JSON.stringify(context.response));
          socket.close(4000 + context.status, "thread id refused");
          return;
        }
        serveSocket(socket, context, (text) => unscopeText(request.uid, text));
      },
    );
  });

  /**
   * The command context of a request: the caller, the thread its `:thread_id` names (resolved by
   * the hook of `server/thread-scope.ts`; a thread the caller does not have yet gets the id its
   * first `run.start` will create), and that thread's session. A thread id that can never be
   * created is refused with the envelope.
   */
  function contextOf(
    request: FastifyRequest,
  ):
    | Omit<CommandContext, "subscriptions">
    | { status: number; response: ReturnType<typeof errorResponse> } {
    const external = (request.params as { thread_id: string }).thread_id;
    const ref = request.threadRef ?? { external, id: external, exists: false };
    let id = ref.id;
    if (!ref.exists) {
      try {
        id = newThreadId(request.uid, ref.external);
      } catch (error) {
        const message = messageOf(error);
        return { status: 400, response: errorResponse(null, "invalid_argument", message) };
      }
    }
    const auth: Record<string, string> = {};
    for (const name of ["authorization", "x-api-key"]) {
      const value = request.headers[name];
      if (typeof value === "string") auth[name] = value;
    }
    return {
      uid: request.uid,
      thread: { external: ref.external, id, exists: ref.exists },
      auth,
      session: sessions.get(request.uid, id),
      door,
    };
  }
}

/** The SSE stream of one filtered subscription: the replay after its `since`, then live events. */
function streamEvents(
  request: FastifyRequest,
  reply: FastifyReply,
  context: Omit<CommandContext, "subscriptions">,
  filter: ReturnType<typeof readFilter>,
): void {
  const headers = replyHeaders(reply);
  reply.hijack();
  const response = reply.raw;
  startSse(response, headers);
  const shown = (text: string) => unscopeText(request.uid, text);
  const { detach } = context.session.attach(
    {
      wants: (event) => matchesFilter(filter, event),
      send: (event) =>
        response.write(shown(sseFrame({ id: event.seq, event: event.method, data: event }))),
      close: () => response.end(),
    },
    filter,
  );
  const heartbeat = setInterval(() => response.write(": heartbeat\n\n"), HEARTBEAT_MS);
  heartbeat.unref();
  response.on("close", () => {
    clearInterval(heartbeat);
    detach();
  });
}

function bodyText(request: FastifyRequest): string {
  return typeof request.body === "string" ? request.body : "";
}
