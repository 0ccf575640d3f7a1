import { sql } from "kysely";
import { afterEach, describe, expect, inject, it } from "vitest";
import {
  announcement,
  type LoggedRunEvent,
  RUN_EVENTS_CHANNEL,
  RunEventLog,
} from "../../runs/run-event-log.js";
import { type Database, openPostgresDatabase } from "../../store/database.js";
import { MISSED_NOTIFICATIONS } from "../../store/pg-notifications.js";
import { RunEventRepository, type StoredRunEvent } from "../../store/run-events.js";
import { RunRepository } from "../../store/runs.js";
import { createTestDatabase } from "../support/postgres-cluster.js";
import { until } from "../support/until.js";

const clusterUrl = inject("postgresUrl");

/** Two pools on one database, as two processes of a fleet have them: one writes, one follows. */
describe("the run event log on PostgreSQL", { timeout: 60_000 }, () => {
  const open: Database[] = [];
  afterEach(async () => {
    for (const database of open.splice(0)) await database.close();
  });

  async function twoProcesses(maxEventsPerRun?: number) {
    const url = await createTestDatabase(clusterUrl, "runevents");
    const writer = await openPostgresDatabase(url);
    const reader = await openPostgresDatabase(url);
    open.push(writer, reader);
    const warnings: string[] = [];
    const logOf = (database: Database) =>
      new RunEventLog({
        events: new RunEventRepository(database.db),
        notifications: database.notifications ?? fail("no notifications on PostgreSQL"),
        warn: (message) => warnings.push(message),
        ...(maxEventsPerRun ? { maxEventsPerRun } : {}),
      });
    const runs = new RunRepository(writer.db);
    const startRun = (runId: string, threadId = "t1") =>
      runs.start({ runId, threadId, uid: "alice", agentId: "agent" });
    return {
      writer,
      reader,
      writeLog: logOf(writer),
      readLog: logOf(reader),
      runs,
      startRun,
      warnings,
    };
  }

  function follower() {
    const seen: LoggedRunEvent[] = [];
    return { seen, sink: (event: LoggedRunEvent) => seen.push(event) };
  }

  it("hands a follower in another process every event live, in order, then the end", async () => {
    const { writeLog, readLog, startRun, reader } = await twoProcesses();
    await startRun("r1");
    const heard: string[] = [];
    await reader.notifications?.listen(RUN_EVENTS_CHANNEL, (payload) => heard.push(payload));
    const { seen, sink } = follower();
    const follow = await readLog.follow("r1", -1, sink, async () => false);
    const writer = writeLog.writer("r1", "t1");
    writer.push(0, "metadata", { run_id: "r1" });
    await until(() => seen.length === 1);
    // Each batch is announced: its run and last event, and the batch when it fits.
    await until(() => heard.includes('r1:0:[[0,"metadata",{"run_id":"r1"}]]'));
    for (let id = 1; id < 450; id += 1) writer.push(id, "values", { n: id, text: 'é\n"x"' });
    await writer.end();
    expect(await follow.done).toBe("end");
    expect(seen.map((event) => event.id)).toEqual(Array.from({ length: 450 }, (_, id) => id));
    expect(seen[0]).toEqual({ id: 0, event: "metadata", data: { run_id: "r1" } });
    expect(seen[7]).toEqual({ id: 7, event: "values", data: { n: 7, text: 'é\n"x"' } });

    // A late follower replays it all, or from any event on.
    const replay = follower();
    expect(await (await readLog.follow("r1", 446, replay.sink, async () => true)).done).toBe("end");
    expect(replay.seen.map((event) => event.id)).toEqual([447, 448, 449]);
  });

  it("carries a run's final values in its end marker, unless they are too large", async () => {
    const { writeLog, readLog, startRun } = await twoProcesses();
    const ended = async (runId: string, ending?: { values: unknown }) => {
      await startRun(runId);
      const follow = await readLog.follow(
        runId,
        -1,
        () => undefined,
        async () => false,
      );
      const writer = writeLog.writer(runId, "t1");
      writer.push(0, "metadata", { run_id: runId });
      await writer.end(ending);
      expect(await follow.done).toBe("end");
      return follow.ending();
    };
    const values = { messages: [{ type: "ai", content: 'the "answer"\n' }], subagent_runs: [] };
    expect(await ended("r1", { values })).toEqual({ values });
    // Values of a quarter of a MiB or more stay out: a join reads the thread for them.
    expect(await ended("r2", { values: { text: "x".repeat(300 * 1024) } })).toBeUndefined();
    expect(await ended("r3")).toBeUndefined();
    // The marker is no event: a replay sees the metadata only.
    const { seen, sink } = follower();
    await (await readLog.follow("r1", -1, sink, async () => true)).done;
    expect(seen.map((event) => event.event)).toEqual(["metadata"]);
  });

  it("hands on the batches their announcements carry, without reading the log", async () => {
    const { writeLog, reader, startRun } = await twoProcesses();
    await startRun("r1");
    // A follower that finds nothing in the log: whatever it gets came in announcements.
    class UnreadableEvents extends RunEventRepository {
      override async after(): Promise<StoredRunEvent[]> {
        return [];
      }
    }
    const readLog = new RunEventLog({
      events: new UnreadableEvents(reader.db),
      notifications: reader.notifications ?? fail("no notifications on PostgreSQL"),
      warn: () => undefined,
    });
    const { seen, sink } = follower();
    const follow = await readLog.follow("r1", -1, sink, async () => false);
    const writer = writeLog.writer("r1", "t1");
    writer.push(0, "metadata", { run_id: "r1" });
    await until(() => seen.length === 1);
    writer.push(1, "values", { text: 'é\n"x"\u0000' });
    writer.push(2, "custom", [1, null]);
    const values = { messages: [{ type: "ai", content: "done" }] };
    await writer.end({ values });
    expect(await follow.done).toBe("end");
    expect(seen).toEqual([
      { id: 0, event: "metadata", data: { run_id: "r1" } },
      { id: 1, event: "values", data: { text: 'é\n"x"\u0000' } },
      { id: 2, event: "custom", data: [1, null] },
    ]);
    expect(follow.ending()).toEqual({ values });
  });

  it("announces a batch too large for a notification by its last event's number only", () => {
    const event = (seq: number, data: unknown) => ({
      seq,
      event: "values",
      data: JSON.stringify(data),
    });
    expect(announcement("r1", [event(4, { a: "é" }), event(5, null)])).toBe(
      'r1:5:[[4,"values",{"a":"é"}],[5,"values",null]]',
    );
    // PostgreSQL takes payloads under 8000 bytes: counted in bytes, not characters.
    expect(announcement("r1", [event(6, "é".repeat(3000))])).toMatch(/^r1:6:/);
    expect(announcement("r1", [event(6, "é".repeat(4000))])).toBe("r1:6");
    expect(announcement("r1", [event(7, "x".repeat(9000))])).toBe("r1:7");
  });

  it("keeps a run's newest events within its bound", async () => {
    const { writeLog, readLog, startRun } = await twoProcesses(300);
    await startRun("r1");
    const writer = writeLog.writer("r1", "t1");
    for (let id = 0; id < 1000; id += 1) writer.push(id, "values", { n: id });
    await writer.end();
    const { seen, sink } = follower();
    await (await readLog.follow("r1", -1, sink, async () => true)).done;
    expect(seen.at(-1)?.id).toBe(999);
    // At most 300 rows are kept at any time, the end marker one of them.
    expect(seen.length).toBeGreaterThanOrEqual(299);
    expect(seen.length).toBeLessThan(1000);
    // What is kept has no gap.
    const first = seen[0]?.id ?? 0;
    expect(seen.map((event) => event.id)).toEqual(seen.map((_, index) => first + index));
  });

  it("ends a follow once the run is over without an end marker (its process died)", async () => {
    const { writeLog, readLog, startRun, runs } = await twoProcesses();
    await startRun("r1");
    const writer = writeLog.writer("r1", "t1");
    writer.push(0, "metadata", {});
    const { seen, sink } = follower();
    const follow = await readLog.follow(
      "r1",
      -1,
      sink,
      async () => (await runs.find("r1"))?.status !== "running",
    );
    await until(() => seen.length === 1);
    await runs.interrupt("r1", "its process died", []);
    expect(await follow.done).toBe("over");
    expect(seen.map((event) => event.event)).toEqual(["metadata"]);
  });

  it("deletes events with their thread, and prunes those of runs long over or gone", async () => {
    const { writer, writeLog, startRun, runs } = await twoProcesses();
    const events = new RunEventRepository(writer.db);
    for (const [runId, threadId] of [
      ["old", "t1"],
      ["recent", "t1"],
      ["running", "t1"],
      ["other-thread", "t2"],
    ] as const) {
      await startRun(runId, threadId);
      const log = writeLog.writer(runId, threadId);
      log.push(0, "metadata", {});
      await log.end();
    }
    const orphan = writeLog.writer("no-row", "t1");
    orphan.push(0, "metadata", {});
    await orphan.end();
    await runs.end("old", "t1", "success");
    await runs.end("recent", "t1", "success");
    await sql`update runs set updated_at = '2000-01-01T00:00:00.000Z' where run_id = 'old'`.execute(
      writer.db,
    );
    // Two rows each: the event and the end marker.
    expect(await events.prune(new Date(Date.now() - 60_000).toISOString())).toBe(4);
    expect(await events.has("old")).toBe(false);
    expect(await events.has("no-row")).toBe(false);
    expect(await events.has("recent")).toBe(true);
    expect(await events.has("running")).toBe(true);

    await runs.deleteForThread("t1");
    expect(await events.has("recent")).toBe(false);
    expect(await events.has("running")).toBe(false);
    expect(await events.has("other-thread")).toBe(true);
  });

  it("listens again after its connection is killed, and says notifications may be missed", async () => {
    const { reader, writer } = await twoProcesses();
    const payloads: string[] = [];
    const notifications = reader.notifications ?? fail("no notifications");
    await notifications.listen("test_channel", (payload) => payloads.push(payload));
    await writer.notifications?.notify("test_channel", "one");
    await until(() => payloads.includes("one"));
    // Kill every connection listening on the channel, as a server restart or a network cut does.
    await sql`select pg_terminate_backend(pid) from pg_stat_activity where query like 'listen%' and pid <> pg_backend_pid()`.execute(
      writer.db,
    );
    await until(() => payloads.includes(MISSED_NOTIFICATIONS), 10_000);
    await writer.notifications?.notify("test_channel", "two");
    await until(() => payloads.includes("two"), 10_000);
  });
});

function fail(message: string): never {
  throw new Error(message);
}
