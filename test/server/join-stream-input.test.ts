import { Client } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectError, type HttpServer, startHttpServer } from "../support/http-server.js";
import { addOfflineBoss } from "../support/runtime-fixture.js";

/**
 * What joining a run's stream (`GET /threads/:id/runs/:run_id/stream`) accepts: a
 * `Last-Event-ID` that is -1 or an id of ours (anything else used to replay the whole run
 * silently), and the `stream_mode` a run is created with (anything else used to be ignored).
 * The official SDK's `runs.joinStream` still works with both, as does rejoining after any event.
 */

const human = (content: string) => ({ messages: [{ type: "human", content }] });

interface Frame {
  id: string | undefined;
  event: string;
}

describe("joining a run's stream", () => {
  let http: HttpServer;
  let token: string;
  let client: Client;
  let stream: string;
  let all: Frame[];

  const collect = async (parts: AsyncIterable<{ id?: string; event: string }>) => {
    const frames: Frame[] = [];
    for await (const part of parts) frames.push({ id: part.id, event: part.event });
    return frames;
  };
  const join = (headers: Record<string, string>, query = "") =>
    http.call(`GET`, `${stream}${query}`, { token, headers });

  beforeAll(async () => {
    http = await startHttpServer({ users: ["demo"] });
    token = http.tokenOf("demo");
    await addOfflineBoss(http.fixture.runtime, "demo");
    // Streamed with two modes, so the run logs a good many events (its own and its subagent's).
    const run = await http.call("POST", "/threads/t1/runs/stream", {
      token,
      body: {
        assistant_id: "boss",
        input: human("Compare tides"),
        if_not_exists: "create",
        stream_mode: ["values", "updates"],
        stream_subgraphs: true,
      },
    });
    expect(run.status, String(run.body)).toBe(200);
    stream = `${run.headers.get("content-location")}/stream`;
    client = new Client({ apiUrl: http.base, apiKey: token, defaultHeaders: {} });
    const runId = stream.split("/").at(-2) ?? "";
    all = await collect(client.runs.joinStream("t1", runId));
    expect(all.length).toBeGreaterThan(4);
    expect(all.map((frame) => frame.id)).toEqual(all.map((_, index) => String(index)));
  });
  afterAll(async () => {
    await http.stop();
  });

  describe("Last-Event-ID", () => {
    it("refuses anything but -1 or an event id with a 422 naming the header and the value", async () => {
      const bad = ["abc", "-2", "1.5", "0x1", "1e1", "", "007", "-0", "+1", "1, 2"];
      bad.push("99999999999999999999", "9".repeat(10_000));
      for (const value of bad) {
        const error = expectError(await join({ "last-event-id": value }), 422, "VALIDATION_FAILED");
        expect(error.field, value.slice(0, 30)).toBe("Last-Event-ID");
        expect(error.message, value.slice(0, 30)).toContain(
          `Last-Event-ID: ${JSON.stringify(value.slice(0, 20))}`.slice(0, 30),
        );
        expect(error.message).toContain("-1 to replay from the start");
        expect(error.message.length, value.slice(0, 30)).toBeLessThan(250);
      }
    });

    it("replays from the start without the header or with -1, and resumes after an id", async () => {
      const events = (text: string) => [...text.matchAll(/^id: (\d+)$/gm)].map((m) => m[1]);
      const ids = all.map((frame) => frame.id);
      for (const headers of [{}, { "last-event-id": "-1" }] as Record<string, string>[]) {
        const answer = await join(headers);
        expect(answer.status).toBe(200);
        expect(events(answer.body as string)).toEqual(ids);
      }
      const afterFirst = await join({ "last-event-id": "0" });
      expect(events(afterFirst.body as string)).toEqual(ids.slice(1));
      const afterLast = await join({ "last-event-id": String(all.length - 1) });
      expect(afterLast.status).toBe(200);
      expect(events(afterLast.body as string)).toEqual([]);
    });

    it("serves the SDK's joinStream from -1 and a rejoin after every event it saw", async () => {
      const runId = stream.split("/").at(-2) ?? "";
      expect(await collect(client.runs.joinStream("t1", runId, { lastEventId: "-1" }))).toEqual(
        all,
      );
      // What a client that lost the stream sends: the id of the last frame it read.
      for (const [index, frame] of all.entries()) {
        const rest = await collect(
          client.runs.joinStream("t1", runId, { lastEventId: frame.id ?? "" }),
        );
        expect(rest, `after ${frame.id}`).toEqual(all.slice(index + 1));
      }
    });
  });

  describe("stream_mode", () => {
    it("refuses an unknown mode with the same 422 as a run created with it", async () => {
      const joined = expectError(await join({}, "?stream_mode=bogus"), 422, "UNSUPPORTED");
      const created = expectError(
        await http.call("POST", "/threads/t1/runs/stream", {
          token,
          body: { assistant_id: "boss", input: human("x"), stream_mode: "bogus" },
        }),
        422,
        "UNSUPPORTED",
      );
      expect(joined).toEqual(created);
      expect(joined.field).toBe("stream_mode");
      expect(joined.message).toContain('"values", "updates", "messages-tuple", "custom"');
      const second = expectError(
        await join({}, "?stream_mode=values&stream_mode=events"),
        422,
        "UNSUPPORTED",
      );
      expect(second.message).toContain('"events" is not supported');
    });

    it("accepts the modes the SDK's joinStream sends", async () => {
      const runId = stream.split("/").at(-2) ?? "";
      const joined = await collect(
        client.runs.joinStream("t1", runId, { streamMode: ["values", "messages-tuple"] }),
      );
      expect(joined).toEqual(all);
      expect((await join({}, "?stream_mode=updates")).status).toBe(200);
      await expect(
        collect(client.runs.joinStream("t1", runId, { streamMode: "debug" })),
      ).rejects.toMatchObject({ status: 422 });
    });
  });
});
