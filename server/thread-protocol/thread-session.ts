import { messageOf } from "../../errors.js";
import type { LoggedRunEvent } from "../../runs/run-event-log.js";
import { RunConverter } from "./convert.js";
import { matchesFilter } from "./filters.js";
import type { EventFilter } from "./parse.js";
import type { RunDoor, RunFollow } from "./run-adapter.js";
import type { AgentTreeNode } from "./tree.js";
import type { ProtocolEvent, UnnumberedEvent } from "./wire.js";

/** Events a thread keeps for `since` replays and late subscribers; beyond it the oldest go. */
const MAX_BUFFERED_EVENTS = 20_000;
/** How often a thread with listeners looks for runs it does not follow yet (another door's, another process's). */
const DISCOVER_EVERY_MS = 250;

/** Where a thread's events go: an SSE stream, or a WebSocket connection's subscriptions. */
export interface EventSink {
  /** The events it wants; null takes none (a WebSocket with no subscription yet). */
  wants(event: ProtocolEvent): boolean;
  send(event: ProtocolEvent): void;
  /** Ends its transport (the server is closing). */
  close?(): void;
}

/**
 * The protocol's view of one thread of one user, in this process: its events numbered by one
 * sequence across its runs (`seq`, from 1), kept for replays, and handed to its listeners as
 * they come. It follows each run of the thread once, in the order they were made, whichever
 * door started it and whichever process runs it: the runs it starts itself at once, others as
 * it finds them ({@link DISCOVER_EVERY_MS}, while it has listeners). Every run is read from
 * its logged events (`RunDoor.follow`) and converted ({@link RunConverter}).
 *
 * Delivery is synchronous: an event goes to every listener before the next is numbered, and a
 * listener that attaches gets its replay and then the live events with nothing in between.
 */
export class ThreadSession {
  /** The last sequence number given (0: none yet). */
  seq = 0;
  /** When it was made: runs from then on are its to follow. */
  readonly since = new Date().toISOString();
  lastUsed = Date.now();
  private readonly buffer: ProtocolEvent[] = [];
  private readonly sinks = new Set<EventSink>();
  private readonly known = new Set<string>();
  private readonly queue: { runId: string; agentId: string }[] = [];
  private following: RunFollow | undefined;
  private converter: RunConverter | undefined;
  private timer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(
    readonly uid: string,
    readonly threadId: string,
    private readonly door: RunDoor,
    private readonly warn: (message: string) => void,
  ) {}

  /**
   * Adds a listener: first the kept events `filter` passes (after its `since`), then every new
   * one it wants. Returns how many were replayed and the function that removes it.
   */
  attach(
    sink: EventSink,
    replay: EventFilter | undefined,
  ): { replayed: number; detach: () => void } {
    this.lastUsed = Date.now();
    let replayed = 0;
    if (replay) {
      for (const event of this.buffer) {
        if (matchesFilter(replay, event)) {
          sink.send(event);
          replayed += 1;
        }
      }
    }
    this.sinks.add(sink);
    this.discoverSoon();
    return {
      replayed,
      detach: () => {
        this.sinks.delete(sink);
        this.lastUsed = Date.now();
      },
    };
  }

  /** The kept events after `seq` that `wants` takes (a WebSocket reconnect's replay). */
  replay(afterSeq: number, sink: EventSink): number {
    let count = 0;
    for (const event of this.buffer) {
      if (event.seq > afterSeq && sink.wants(event)) {
        sink.send(event);
        count += 1;
      }
    }
    return count;
  }

  get listening(): boolean {
    return this.sinks.size > 0 || this.following !== undefined;
  }

  /** The agent tree of the run followed now (or last): the root, its model calls, its subagents. */
  tree(graphName: string): AgentTreeNode {
    return (
      this.converter?.tree.tree() ?? { namespace: [], status: "started", graph_name: graphName }
    );
  }

  /** Follows run `runId` after the runs before it (at once when none is followed). */
  follow(runId: string, agentId: string): void {
    if (this.known.has(runId) || this.closed) return;
    this.known.add(runId);
    this.queue.push({ runId, agentId });
    if (!this.following) void this.next();
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
    this.following?.stop();
    for (const sink of this.sinks) sink.close?.();
    this.sinks.clear();
  }

  private async next(): Promise<void> {
    const run = this.queue.shift();
    if (!run || this.closed) return;
    const converter = new RunConverter(run.agentId);
    this.converter = converter;
    this.push(converter.start());
    let follow: RunFollow;
    try {
      follow = await this.door.follow(this.uid, this.threadId, run.runId, (event: LoggedRunEvent) =>
        this.push(converter.convert(event.event, event.data)),
      );
    } catch (error) {
      this.warn(`following run ${run.runId}: ${messageOf(error)}`);
      follow = {
        stop: () => undefined,
        done: Promise.resolve({ status: "failed", error: "its events cannot be read" }),
      };
    }
    this.following = follow;
    const ending = await follow.done;
    this.push(converter.end(ending));
    this.following = undefined;
    this.lastUsed = Date.now();
    void this.next();
  }

  private push(events: UnnumberedEvent[]): void {
    for (const entry of events) {
      this.seq += 1;
      const event: ProtocolEvent = {
        type: "event",
        event_id: String(this.seq),
        seq: this.seq,
        method: entry.method,
        params: {
          namespace: entry.namespace,
          timestamp: Date.now(),
          ...(entry.node !== undefined ? { node: entry.node } : {}),
          data: entry.data,
        },
      };
      this.buffer.push(event);
      if (this.buffer.length > MAX_BUFFERED_EVENTS) this.buffer.shift();
      for (const sink of this.sinks) if (sink.wants(event)) sink.send(event);
    }
  }

  /** Looks for runs of the thread it does not follow yet, again and again while it has listeners. */
  private discoverSoon(): void {
    if (this.timer || this.closed) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (this.sinks.size === 0 || this.closed) return;
      void this.door
        .runsSince(this.uid, this.threadId, this.since)
        .then((runs) => {
          for (const run of runs) this.follow(run.runId, run.agentId);
        })
        .catch((error: unknown) => this.warn(`finding the runs of a thread: ${String(error)}`))
        .finally(() => this.discoverSoon());
    }, DISCOVER_EVERY_MS);
    this.timer.unref();
  }
}
