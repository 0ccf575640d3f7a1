/**
 * Runs' event streams through the shared PostgreSQL database, so that any process of a fleet can
 * stream, join or replay any run, whichever process runs it (no sticky sessions).
 *
 * The process running a run writes its events to `run_events` in small batches
 * ({@link RunEventWriter}) and announces each batch with a NOTIFY sent by the statement that
 * writes it (heard as it commits): the run id and the last event's number, and the batch itself
 * when it fits in a notification ({@link announcement}). A follower in any process
 * ({@link RunEventLog.follow}) listens; on each announcement it hands on the batch it carries,
 * or reads the rows after the last one it sent. A timer reads too, so a lost
 * announcement (the listening connection broke) delays events by at most
 * {@link FOLLOW_POLL_MS}. The log ends with a marker row written when the run is over; a run
 * whose process died before writing it ends for its followers once its record says it is over
 * and nothing more has come for {@link QUIET_END_MS}.
 */

import { messageOf } from "../errors.js";
import { MISSED_NOTIFICATIONS, type Notifications } from "../store/pg-notifications.js";
import {
  RUN_END_EVENT,
  type RunEventRepository,
  type StoredRunEvent,
} from "../store/run-events.js";

/** One event of a run's stream (the SSE `id`, `event` and `data`). */
export interface LoggedRunEvent {
  id: number;
  event: string;
  data: unknown;
}

/** The channel every process listens on; payloads are `<run id>:<last seq>`. */
export const RUN_EVENTS_CHANNEL = "subagent_graph_run_events";

/** A batch waits this long for more events before it is written. */
const FLUSH_AFTER_MS = 10;
/** A batch this large is written at once. */
const FLUSH_AT_EVENTS = 200;
/** Most bytes of an announcement that carries its batch (PostgreSQL refuses 8000 or more). */
const MAX_ANNOUNCEMENT_BYTES = 7900;
/** Rows a follower reads per query. */
const READ_PAGE = 500;
/** A follower reads at least this often, announcement or not. */
const FOLLOW_POLL_MS = 1000;
/**
 * A run that is over in its record but wrote no end marker (its process died at the end) ends
 * for its followers after this long without a new event.
 */
const QUIET_END_MS = 5000;
/** A failed batch is written again after this long (it is kept meanwhile). */
const RETRY_AFTER_MS = 250;

/** What {@link RunEventLog} works with. */
export interface RunEventLogOptions {
  events: RunEventRepository;
  notifications: Notifications;
  warn(message: string): void;
  /** Events kept per run; beyond it the oldest are deleted. Default 20,000. */
  maxEventsPerRun?: number;
  /** How long a finished run's events stay for replays. Default one hour. */
  retentionMs?: number;
}

/** How a follow ended: the run's end marker, or the run is over without one. */
export type FollowEnd = "end" | "over";

/**
 * What a run's end marker tells its followers: the root graph's final state values (wire form),
 * so a join answers without reading the thread back. Only a run that ended well has them.
 */
export interface RunEnding {
  values: unknown;
}

/**
 * Final values longer than this as JSON stay out of the end marker (a join then reads the
 * thread): the log keeps every run's marker for its retention, and a long thread's state is
 * megabytes.
 */
const MAX_ENDING_CHARS = 256 * 1024;

/** A follow in progress (see {@link RunEventLog.follow}). */
export interface RunEventFollow {
  /** Stops following; `done` then never settles. */
  stop(): void;
  /** Settles once every event of the run has been handed over. */
  done: Promise<FollowEnd>;
  /** What the end marker carried, once `done` settled with "end" (see {@link RunEnding}). */
  ending(): RunEnding | undefined;
}

/** Runs' events in the shared database: written by the run's process, followed from any. */
export class RunEventLog {
  readonly #options: RunEventLogOptions;
  #lastPrune = 0;

  constructor(options: RunEventLogOptions) {
    this.#options = options;
  }

  /** A writer for the events of `runId` (one per run, in the process running it). */
  writer(runId: string, threadId: string): RunEventWriter {
    return new RunEventWriter(runId, threadId, this.#options, () => this.#pruneNowAndThen());
  }

  /** The id the next event of `runId` takes (a later attempt goes on from there). */
  nextId(runId: string): Promise<number> {
    return this.#options.events.nextSeq(runId);
  }

  /** Whether some process has written events of `runId`. */
  has(runId: string): Promise<boolean> {
    return this.#options.events.has(runId);
  }

  /** Deletes the events of every run of `threadId` (its thread is being deleted). */
  deleteForThread(threadId: string): Promise<void> {
    return this.#options.events.deleteForThread(threadId);
  }

  /**
   * Hands `sink` every event of `runId` after `afterId` (-1: from the first) as it is written,
   * until the run's end. `isOver` says whether the run's record shows it over (checked when no
   * event came for a while): a run without an end marker (its process died) ends then.
   */
  async follow(
    runId: string,
    afterId: number,
    sink: (event: LoggedRunEvent) => void,
    isOver: () => Promise<boolean>,
  ): Promise<RunEventFollow> {
    const { events, notifications, warn } = this.#options;
    let last = afterId;
    let stopped = false;
    let reading = false;
    let readAgain = false;
    let lastEventAt = Date.now();
    let ending: RunEnding | undefined;
    let settle!: (end: FollowEnd) => void;
    const done = new Promise<FollowEnd>((resolve) => {
      settle = resolve;
    });
    const finish = (end: FollowEnd) => {
      if (stopped) return;
      stop();
      settle(end);
    };
    /** Hands on one event; true once it was the run's end marker (the follow is then over). */
    const deliver = (seq: number, event: string, data: unknown): boolean => {
      if (event === RUN_END_EVENT) {
        ending = endingOf(data);
        finish("end");
        return true;
      }
      last = seq;
      lastEventAt = Date.now();
      sink({ id: seq, event, data });
      return false;
    };
    /**
     * Hands on the events an announcement carried that come after the last one sent; false
     * when they do not follow on from it (a batch was missed), so the log must be read.
     */
    const deliverCarried = (carried: CarriedEvent[]): boolean => {
      for (const [seq, event, data] of carried) {
        if (stopped) return true;
        if (seq <= last) continue;
        if (seq !== last + 1) return false;
        if (deliver(seq, event, data)) return true;
      }
      return true;
    };
    const read = async () => {
      if (stopped) return;
      if (reading) {
        readAgain = true;
        return;
      }
      reading = true;
      try {
        for (;;) {
          readAgain = false;
          const rows = await events.after(runId, last, READ_PAGE);
          for (const row of rows) {
            if (stopped) return;
            if (deliver(row.seq, row.event, JSON.parse(row.data))) return;
          }
          if (rows.length < READ_PAGE && !readAgain) break;
        }
        if (Date.now() - lastEventAt >= QUIET_END_MS && (await isOver())) {
          // One last read: events written between the read above and the check.
          const rest = await events.after(runId, last, READ_PAGE);
          if (rest.length === 0) return finish("over");
          readAgain = true;
        }
      } catch (error) {
        warn(`reading the events of run ${runId} failed, trying again: ${messageOf(error)}`);
      } finally {
        reading = false;
      }
      if (readAgain && !stopped) void read();
    };
    const prefix = `${runId}:`;
    const unlisten = await notifications.listen(RUN_EVENTS_CHANNEL, (payload) => {
      if (payload === MISSED_NOTIFICATIONS) return void read();
      if (!payload.startsWith(prefix)) return;
      // A read under way reads these rows too (it reads again); else the batch it carries
      // saves a read.
      const carried = reading ? undefined : carriedEvents(payload, prefix.length);
      if (!carried || !deliverCarried(carried)) void read();
    });
    const timer = setInterval(() => void read(), FOLLOW_POLL_MS);
    timer.unref();
    function stop() {
      if (stopped) return;
      stopped = true;
      clearInterval(timer);
      unlisten();
    }
    void read();
    return { stop, done, ending: () => ending };
  }

  /** Deletes the events of runs over for longer than the retention, at most once a minute. */
  #pruneNowAndThen(): void {
    const now = Date.now();
    if (now - this.#lastPrune < 60_000) return;
    this.#lastPrune = now;
    const cutoff = new Date(now - (this.#options.retentionMs ?? 3_600_000)).toISOString();
    this.#options.events.prune(cutoff).catch((error: unknown) => {
      this.#options.warn(`pruning old run events failed: ${messageOf(error)}`);
    });
  }
}

/**
 * The events of one run, written to the log as they come: batched for {@link FLUSH_AFTER_MS},
 * in order, each batch announced as it is written. A batch that fails is kept and written again.
 */
export class RunEventWriter {
  #pending: StoredRunEvent[] = [];
  #timer: NodeJS.Timeout | undefined;
  #chain: Promise<void> = Promise.resolve();
  #lastSeq = -1;
  #failed = false;
  #ended = false;
  #trimmedThrough = -1;

  constructor(
    private readonly runId: string,
    private readonly threadId: string,
    private readonly options: RunEventLogOptions,
    private readonly onEnd: () => void,
  ) {}

  /** Adds event `id` (ids come in order, from 0) to the next batch. */
  push(id: number, event: string, data: unknown): void {
    if (this.#ended) return;
    this.#lastSeq = id;
    this.#pending.push({ seq: id, event, data: JSON.stringify(data ?? null) });
    if (this.#pending.length >= FLUSH_AT_EVENTS) this.#flushSoon(0);
    else this.#flushSoon(FLUSH_AFTER_MS);
  }

  /**
   * Writes what is pending and the end marker, carrying `ending` unless it is larger than
   * {@link MAX_ENDING_CHARS}; resolves once they are in the log (or given up).
   */
  async end(ending?: RunEnding): Promise<void> {
    if (this.#ended) return this.#chain;
    this.#ended = true;
    const data = ending === undefined ? "null" : JSON.stringify(ending);
    this.#pending.push({
      seq: this.#lastSeq + 1,
      event: RUN_END_EVENT,
      data: data.length > MAX_ENDING_CHARS ? "null" : data,
    });
    // A database that keeps failing gives up after about five seconds: followers then end the
    // run by its record (see `RunEventLog.follow`).
    for (let attempt = 0; attempt < 20 && this.#pending.length > 0; attempt += 1) {
      if (attempt > 0) await delay(RETRY_AFTER_MS);
      await this.#flushNow();
    }
    this.onEnd();
  }

  /**
   * Writes what is pending but no end marker: the run goes on in another process, which writes
   * its next events after these.
   */
  async stop(): Promise<void> {
    if (this.#ended) return this.#chain;
    this.#ended = true;
    await this.#flushNow();
  }

  #flushSoon(afterMs: number): void {
    if (this.#timer && afterMs > 0) return;
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => void this.#flushNow(), afterMs);
  }

  #flushNow(): Promise<void> {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#chain = this.#chain.then(() => this.#flush());
    return this.#chain;
  }

  async #flush(): Promise<void> {
    const batch = this.#pending;
    if (batch.length === 0) return;
    this.#pending = [];
    const { events, warn } = this.options;
    const last = batch.at(-1)?.seq ?? 0;
    try {
      await events.append(this.runId, this.threadId, batch, {
        channel: RUN_EVENTS_CHANNEL,
        payload: announcement(this.runId, batch),
      });
    } catch (error) {
      this.#pending = [...batch, ...this.#pending];
      if (!this.#failed) {
        warn(`writing the events of run ${this.runId} failed, trying again: ${messageOf(error)}`);
      }
      this.#failed = true;
      if (!this.#ended) this.#flushSoon(RETRY_AFTER_MS);
      return;
    }
    this.#failed = false;
    const max = this.options.maxEventsPerRun ?? 20_000;
    // Past its bound, the run's oldest events go, a batch's worth at a time.
    if (last - max >= this.#trimmedThrough + FLUSH_AT_EVENTS) {
      try {
        await events.trim(this.runId, last - max);
        this.#trimmedThrough = last - max;
      } catch (error) {
        // The bound is kept at the next batch.
        warn(`trimming the events of run ${this.runId} failed: ${messageOf(error)}`);
      }
    }
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** The ending an end marker's data holds; none for a marker without one (or an older one). */
function endingOf(data: unknown): RunEnding | undefined {
  return typeof data === "object" && data !== null && "values" in data
    ? (data as RunEnding)
    : undefined;
}

/** An event as an announcement carries it: its number, name and data. */
type CarriedEvent = [seq: number, event: string, data: unknown];

/**
 * A batch's announcement: `<run id>:<last event's number>`, then `:` and the batch as a JSON
 * array of {@link CarriedEvent}s when that stays under {@link MAX_ANNOUNCEMENT_BYTES} (the
 * events' data is JSON already, and goes in as it is).
 */
export function announcement(runId: string, batch: readonly StoredRunEvent[]): string {
  const head = `${runId}:${batch.at(-1)?.seq ?? 0}`;
  // Characters never outnumber bytes: a batch this long cannot fit.
  let length = head.length;
  for (const event of batch) length += event.data.length + event.event.length;
  if (length >= MAX_ANNOUNCEMENT_BYTES) return head;
  const carried = batch.map(
    (event) => `[${event.seq},${JSON.stringify(event.event)},${event.data}]`,
  );
  const full = `${head}:[${carried.join(",")}]`;
  return Buffer.byteLength(full) < MAX_ANNOUNCEMENT_BYTES ? full : head;
}

/** The events an announcement carries (after `from`, its run id's end), if it carries any. */
function carriedEvents(payload: string, from: number): CarriedEvent[] | undefined {
  const start = payload.indexOf(":", from);
  if (start < 0) return undefined;
  try {
    const parsed: unknown = JSON.parse(payload.slice(start + 1));
    return Array.isArray(parsed) && parsed.every(isCarriedEvent) ? parsed : undefined;
  } catch {
    return undefined;
  }
}

function isCarriedEvent(value: unknown): value is CarriedEvent {
  return (
    Array.isArray(value) &&
    value.length === 3 &&
    Number.isInteger(value[0]) &&
    typeof value[1] === "string"
  );
}
