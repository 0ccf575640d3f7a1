/**
 * Follows one run's event stream to its end, across dropped connections. The server runs a run
 * whatever its clients do and logs its events with ids, so a client that loses the stream (a
 * network drop, a restarted proxy, a reload) rejoins with the last id it saw and misses nothing.
 * No DOM here: the page hands in how to open streams and read a run, so this is unit-tested
 * with fakes.
 */

import type { SseEvent } from "./stream-event.js";

/** Whether the stream is connected, or was lost and is being retried. */
export type Connection = "live" | "lost";

/** How a run's stream is opened again and how its status is read. */
export interface RunSource {
  /** The run's events after `lastEventId` ("-1": from the start), until the run ends. */
  join(runId: string, lastEventId: string, signal: AbortSignal): AsyncIterable<SseEvent>;
  /** The run's status as the server records it ("running" while it runs). */
  status(runId: string): Promise<string>;
}

/** What the follower reports to its page. */
export interface FollowHandlers {
  onEvent(event: SseEvent): void;
  onConnection(connection: Connection): void;
}

/** Where a follow starts: a stream already opened (the POST that started the run), or a join. */
export type FollowStart =
  | { stream: AsyncIterable<SseEvent> }
  | { runId: string; lastEventId: string };

/** Waits before retry `attempt` (1, 2, …): 0.5 s, 1 s, 2 s, then every 4 s. */
export function retryDelayMs(attempt: number): number {
  return Math.min(500 * 2 ** (attempt - 1), 4_000);
}

const STILL_RUNNING = new Set(["pending", "running"]);

/**
 * Reads the run's events until it ends. A stream that fails, or closes while the server says the
 * run still runs, is reported `lost` and rejoined after the last event id seen (with growing
 * waits, for as long as the run runs); the first event or clean end after that reports `live`.
 *
 * Resolves when the run has ended (or `signal` aborts). Rejects with an error `isFatal` accepts
 * (a refused run, a 401), and with any error of the first stream before a run id is known:
 * a run that never started cannot be rejoined.
 */
export async function followRun(
  start: FollowStart,
  source: RunSource,
  handlers: FollowHandlers,
  options: {
    signal: AbortSignal;
    /** Errors that retrying cannot fix (a refused run, a 401): they reject. */
    isFatal: (error: unknown) => boolean;
    /** Whether an error means the run is unknown where it was asked for (an HTTP 404). */
    isNotFound: (error: unknown) => boolean;
    sleep?: (ms: number) => Promise<void>;
  },
): Promise<void> {
  const sleep = options.sleep ?? ((ms: number) => new Promise((r) => setTimeout(r, ms)));
  let runId = "runId" in start ? start.runId : undefined;
  let lastEventId = "runId" in start ? start.lastEventId : "-1";
  let stream: AsyncIterable<SseEvent> | undefined = "stream" in start ? start.stream : undefined;
  let attempt = 0;
  const recovered = () => {
    if (attempt > 0) handlers.onConnection("live");
    attempt = 0;
  };
  for (;;) {
    if (options.signal.aborted) return;
    try {
      if (!stream) {
        if (!runId) return;
        stream = source.join(runId, lastEventId, options.signal);
      }
      for await (const event of stream) {
        if (event.id !== undefined) lastEventId = event.id;
        if (event.event === "metadata") {
          const announced = (event.data as { run_id?: unknown } | null)?.run_id;
          if (typeof announced === "string") runId = announced;
        }
        recovered();
        handlers.onEvent(event);
      }
      stream = undefined;
      // A stream closes when its run ends, or when the connection goes: ask which.
      if (!runId) return;
      if (!STILL_RUNNING.has(await source.status(runId))) {
        recovered();
        return;
      }
    } catch (error) {
      stream = undefined;
      if (options.signal.aborted) return;
      if (options.isFatal(error) || !runId) throw error;
      // Unknown here (this process does not hold its event log, or forgot it): it may still run
      // elsewhere, so its status decides between waiting and ending.
      if (options.isNotFound(error)) {
        const status = await source.status(runId).catch((probe: unknown) => {
          if (options.isNotFound(probe)) return "gone";
          if (options.isFatal(probe)) throw probe;
          return "unknown";
        });
        if (status !== "unknown" && !STILL_RUNNING.has(status)) {
          recovered();
          return;
        }
      }
    }
    attempt += 1;
    if (attempt === 1) handlers.onConnection("lost");
    await sleep(retryDelayMs(attempt));
  }
}
