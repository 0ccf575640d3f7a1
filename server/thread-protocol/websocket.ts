import { randomUUID } from "node:crypto";
import type { WebSocket } from "ws";
import { type CommandContext, runCommand, type Subscriptions } from "./commands.js";
import { matchesFilter } from "./filters.js";
import {
  type EventFilter,
  IdentifiedRefusal,
  MAX_COMMAND_BYTES,
  parseJsonText,
  readCommand,
} from "./parse.js";
import type { EventSink } from "./thread-session.js";
import { CommandRefusal, errorResponse, type ProtocolEvent } from "./wire.js";

/** Subscriptions one connection may hold at once. */
const MAX_SUBSCRIPTIONS = 64;

/**
 * One WebSocket connection of the thread protocol (`GET /threads/:id/stream/events`): commands
 * in as text frames, their responses and the events of its subscriptions out, in order on the
 * one wire. Commands are answered one at a time, in the order they came; a subscribe's response
 * goes out before its replay, so the client knows the subscription before its first event. An
 * event goes out once however many subscriptions want it (the SDK fans it out by its filters).
 * A frame that is not a command gets the error envelope and the connection stays open.
 *
 * `shown` turns our stored thread ids back into the caller's (`server/thread-scope.ts`).
 */
export function serveSocket(
  socket: WebSocket,
  base: Omit<CommandContext, "subscriptions">,
  shown: (text: string) => string,
): void {
  const filters = new Map<string, EventFilter>();
  const write = (message: unknown) => {
    if (socket.readyState === socket.OPEN) socket.send(shown(JSON.stringify(message)));
  };
  const sink: EventSink = {
    wants: (event) => [...filters.values()].some((filter) => matchesFilter(filter, event)),
    send: (event: ProtocolEvent) => write(event),
    close: () => socket.close(1001, "server closing"),
  };
  const { detach } = base.session.attach(sink, undefined);
  const subscriptions: Subscriptions = {
    subscribe(filter) {
      if (filters.size >= MAX_SUBSCRIPTIONS) {
        throw new CommandRefusal(
          "invalid_argument",
          `this connection has ${MAX_SUBSCRIPTIONS} subscriptions: unsubscribe one first`,
        );
      }
      const id = randomUUID();
      const replayed = countKept(base, filter);
      return {
        id,
        replayed,
        after: () => {
          // Replay and activation at once (nothing runs in between): no event is missed or doubled.
          base.session.replay(0, {
            wants: (event) => matchesFilter(filter, event) && !sink.wants(event),
            send: write,
          });
          filters.set(id, filter);
        },
      };
    },
    unsubscribe: (id) => filters.delete(id),
    reconnect: (afterSeq) => base.session.replay(afterSeq, sink),
  };
  const context: CommandContext = { ...base, subscriptions };
  let queue = Promise.resolve();
  socket.on("message", (data, isBinary) => {
    const text = Array.isArray(data)
      ? Buffer.concat(data).toString("utf8")
      : Buffer.from(data as ArrayBuffer).toString("utf8");
    queue = queue.then(() => answer(text, isBinary)).catch(() => undefined);
  });
  socket.on("close", () => detach());
  socket.on("error", () => detach());

  async function answer(text: string, isBinary: boolean): Promise<void> {
    if (Buffer.byteLength(text) > MAX_COMMAND_BYTES) {
      write(
        errorResponse(
          null,
          "invalid_argument",
          `the frame has ${Buffer.byteLength(text)} bytes: a command may have at most ${MAX_COMMAND_BYTES}`,
        ),
      );
      return;
    }
    let command: ReturnType<typeof readCommand>;
    try {
      command = readCommand(parseJsonText(text));
    } catch (error) {
      if (!(error instanceof CommandRefusal)) throw error;
      const id = error instanceof IdentifiedRefusal ? error.commandId : null;
      const kind = isBinary ? " (a binary frame, read as UTF-8)" : "";
      write(errorResponse(id, error.code, `${error.message}${kind}`));
      return;
    }
    const outcome = await runCommand(command, context);
    write(outcome.response);
    outcome.after?.();
  }
}

function countKept(base: Omit<CommandContext, "subscriptions">, filter: EventFilter): number {
  let count = 0;
  const counter: EventSink = {
    wants: (event) => matchesFilter(filter, event),
    send: () => {
      count += 1;
    },
  };
  base.session.replay(0, counter);
  return count;
}
