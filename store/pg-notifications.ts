/**
 * PostgreSQL's LISTEN/NOTIFY for one process: one dedicated connection listens on every channel
 * the process follows and hands each notification's payload to that channel's handlers.
 *
 * The connection is opened at the first `listen` and kept until `close`. When it breaks (server
 * restart, network), it is opened again with a growing delay, and every handler is then called
 * with {@link MISSED_NOTIFICATIONS}: notifications sent meanwhile were lost, so whoever relies on
 * them reads what they would have announced.
 */

import pg from "pg";
import { ErrorCode, SubagentGraphError } from "../errors.js";

/** The payload a handler receives after the connection was lost and made again. */
export const MISSED_NOTIFICATIONS = "*";

/** A channel's handler: a notification's payload, or {@link MISSED_NOTIFICATIONS}. */
export type NotificationHandler = (payload: string) => void;

/** LISTEN/NOTIFY on the shared database (PostgreSQL only). */
export interface Notifications {
  /**
   * Calls `handler` with the payload of every notification on `channel` from now on; resolves
   * once the channel is listened to. Returns what stops it.
   */
  listen(channel: string, handler: NotificationHandler): Promise<() => void>;
  /** Sends `payload` (at most 8000 bytes) to whoever listens on `channel`, in any process. */
  notify(channel: string, payload: string): Promise<void>;
  /** Closes the listening connection. */
  close(): Promise<void>;
}

/**
 * What {@link pgNotifications} needs of a `pg.Pool`, spelled out so that the package's
 * declarations do not name `pg` (a consumer need not install its types).
 */
export interface NotifyingPool {
  readonly options: object;
  query(text: string, values: unknown[]): Promise<unknown>;
}

/** Delays between attempts to listen again after the connection broke. */
const RECONNECT_MIN_MS = 100;
const RECONNECT_MAX_MS = 5000;

/**
 * Notifications over `pool`'s database: NOTIFY through the pool, LISTEN on a connection of its
 * own (a pooled one would be handed to other queries).
 *
 * @param describe turns a driver error into a message with no secret in it
 */
export function pgNotifications(
  pool: NotifyingPool,
  warn: (message: string) => void,
  describe: (error: unknown) => string,
): Notifications {
  const handlers = new Map<string, Set<NotificationHandler>>();
  let client: pg.Client | undefined;
  let connecting: Promise<pg.Client> | undefined;
  let closed = false;
  let delay = RECONNECT_MIN_MS;
  let retry: NodeJS.Timeout | undefined;

  const dispatch = (channel: string, payload: string) => {
    for (const handler of handlers.get(channel) ?? []) {
      try {
        handler(payload);
      } catch (error) {
        warn(`a handler of notifications on "${channel}" failed: ${describe(error)}`);
      }
    }
  };

  const broken = (error: unknown) => {
    if (closed || !client) return;
    warn(`the connection listening for notifications broke, listening again: ${describe(error)}`);
    const old = client;
    client = undefined;
    connecting = undefined;
    old.removeAllListeners();
    old.on("error", () => undefined);
    void old.end().catch(() => undefined);
    scheduleReconnect();
  };

  const scheduleReconnect = () => {
    if (closed || retry) return;
    retry = setTimeout(() => {
      retry = undefined;
      connect()
        .then(() => {
          delay = RECONNECT_MIN_MS;
          for (const channel of handlers.keys()) dispatch(channel, MISSED_NOTIFICATIONS);
        })
        .catch((error: unknown) => {
          warn(`could not listen for notifications again: ${describe(error)}`);
          delay = Math.min(RECONNECT_MAX_MS, delay * 2);
          scheduleReconnect();
        });
    }, delay);
    retry.unref();
  };

  const connect = (): Promise<pg.Client> => {
    connecting ??= (async () => {
      const fresh = new pg.Client(pool.options as pg.ClientConfig);
      fresh.on("error", (error) => broken(error));
      fresh.on("end", () => broken(new Error("the connection ended")));
      fresh.on("notification", (message) => dispatch(message.channel, message.payload ?? ""));
      try {
        await fresh.connect();
        for (const channel of handlers.keys()) await fresh.query(listenSql(channel));
      } catch (error) {
        fresh.removeAllListeners();
        fresh.on("error", () => undefined);
        await fresh.end().catch(() => undefined);
        connecting = undefined;
        throw error;
      }
      if (closed) {
        fresh.removeAllListeners();
        await fresh.end().catch(() => undefined);
        throw notificationsClosed();
      }
      client = fresh;
      return fresh;
    })();
    return connecting;
  };

  return {
    async listen(channel, handler) {
      if (closed) throw notificationsClosed();
      let set = handlers.get(channel);
      const first = !set;
      if (!set) {
        set = new Set();
        handlers.set(channel, set);
      }
      set.add(handler);
      const listening = await connect();
      if (first && listening === client) await listening.query(listenSql(channel));
      return () => {
        set.delete(handler);
      };
    },
    async notify(channel, payload) {
      await pool.query("select pg_notify($1, $2)", [channel, payload]);
    },
    async close() {
      closed = true;
      clearTimeout(retry);
      const open = client;
      client = undefined;
      if (open) {
        open.removeAllListeners();
        open.on("error", () => undefined);
        await open.end().catch(() => undefined);
      }
    },
  };
}

/** `LISTEN "channel"`, the name quoted as an identifier. */
function listenSql(channel: string): string {
  return `listen "${channel.replaceAll('"', '""')}"`;
}

/** A listen after `close()`: the runtime that owned the notifications is closing. */
function notificationsClosed(): SubagentGraphError {
  return new SubagentGraphError(
    ErrorCode.Closed,
    "PostgreSQL notifications are closed: the runtime that opened them was closed",
  );
}
