import { describe, expect, it } from "vitest";
import {
  type Connection,
  followRun,
  type RunSource,
  retryDelayMs,
} from "../../web/src/run-follower.js";
import type { SseEvent } from "../../web/src/stream-event.js";

const event = (id: number, name = "values", data: unknown = { n: id }): SseEvent => ({
  event: name,
  data,
  id: String(id),
});

/** A stream that yields `events` and then fails as a dropped connection does. */
async function* dropsAfter(events: SseEvent[]): AsyncGenerator<SseEvent> {
  yield* events;
  throw new TypeError("network error");
}

async function* ends(events: SseEvent[]): AsyncGenerator<SseEvent> {
  yield* events;
}

class NotFound extends Error {}
class Refused extends Error {}

/** A scripted server: each join answers with the next stream; statuses are read in order. */
function source(joins: ((lastEventId: string) => AsyncIterable<SseEvent>)[], statuses: string[]) {
  const asked: string[] = [];
  const run: RunSource = {
    join(_runId, lastEventId) {
      asked.push(lastEventId);
      const next = joins.shift();
      if (!next) throw new Error(`unexpected join after ${lastEventId}`);
      return next(lastEventId);
    },
    async status() {
      const next = statuses.shift();
      if (next === undefined) throw new Error("unexpected status read");
      return next;
    },
  };
  return { run, asked };
}

async function follow(start: Parameters<typeof followRun>[0], run: RunSource) {
  const seen: string[] = [];
  const connections: Connection[] = [];
  const waits: number[] = [];
  await followRun(
    start,
    run,
    {
      onEvent: (e) => seen.push(`${e.event}#${e.id}`),
      onConnection: (c) => connections.push(c),
    },
    {
      signal: new AbortController().signal,
      isFatal: (error) => error instanceof Refused,
      isNotFound: (error) => error instanceof NotFound,
      sleep: async (ms) => {
        waits.push(ms);
      },
    },
  );
  return { seen, connections, waits };
}

describe("followRun", () => {
  it("rejoins a dropped stream after the last event id, says lost then live, and ends with the run", async () => {
    const server = source([() => dropsAfter([]), () => ends([event(2), event(3)])], ["success"]);
    const first = dropsAfter([event(0, "metadata", { run_id: "r1" }), event(1)]);
    const result = await follow({ stream: first }, server.run);
    expect(result.seen).toEqual(["metadata#0", "values#1", "values#2", "values#3"]);
    // The first rejoin fails too (the server is still away): it waits longer and tries again.
    expect(server.asked).toEqual(["1", "1"]);
    expect(result.connections).toEqual(["lost", "live"]);
    expect(result.waits).toEqual([retryDelayMs(1), retryDelayMs(2)]);
  });

  it("a stream that closes while the run still runs is rejoined; one that closes with it ends", async () => {
    const server = source([() => ends([event(5)]), () => ends([event(6)])], ["running", "success"]);
    const result = await follow({ runId: "r1", lastEventId: "-1" }, server.run);
    expect(server.asked).toEqual(["-1", "5"]);
    expect(result.seen).toEqual(["values#5", "values#6"]);
    expect(result.connections).toEqual(["lost", "live"]);
  });

  it("a run this server does not hold is waited for by its status, then ends", async () => {
    const server = source(
      [
        () => {
          throw new NotFound("run not found here");
        },
        () => {
          throw new NotFound("run not found here");
        },
      ],
      ["running", "interrupted"],
    );
    const result = await follow({ runId: "r1", lastEventId: "-1" }, server.run);
    expect(server.asked).toEqual(["-1", "-1"]);
    expect(result.connections).toEqual(["lost", "live"]);
  });

  it("a refused run, or a first stream that fails before the run is known, rejects", async () => {
    const server = source([], []);
    await expect(follow({ stream: dropsAfter([]) }, server.run)).rejects.toThrow("network error");
    // Fatal even once the run is known (a 401 mid-run): not retried.
    const refused = (async function* () {
      yield event(0, "metadata", { run_id: "r1" });
      throw new Refused("409 busy");
    })();
    await expect(follow({ stream: refused }, server.run)).rejects.toThrow("409 busy");
    expect(server.asked).toEqual([]);
  });

  it("retry waits grow and stay capped", () => {
    expect([1, 2, 3, 4, 5, 9].map(retryDelayMs)).toEqual([500, 1000, 2000, 4000, 4000, 4000]);
  });
});
