import { describe, expect, it } from "vitest";
import { parseBlock, readSse } from "../../web/src/sse.js";

function streamOf(pieces: string[]): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  return new ReadableStream({
    start(controller) {
      for (const piece of pieces) controller.enqueue(encoder.encode(piece));
      controller.close();
    },
  });
}

async function collect(pieces: string[]) {
  const events = [];
  for await (const event of readSse(streamOf(pieces))) events.push(event);
  return events;
}

describe("readSse", () => {
  const wire =
    'event: metadata\ndata: {"run_id":"r1"}\nid: 0\n\n' +
    ": keep-alive\n\n" +
    'event: messages\ndata: [{"type":"ai","content":"h\\u00e9"},{}]\nid: 1\n\n' +
    "event: note\ndata: first line\ndata: second line\n\n";

  it("parses events, JSON data, ids, multi-line data, and skips comments", async () => {
    expect(await collect([wire])).toEqual([
      { event: "metadata", data: { run_id: "r1" }, id: "0" },
      { event: "messages", data: [{ type: "ai", content: "hé" }, {}], id: "1" },
      { event: "note", data: "first line\nsecond line", id: undefined },
    ]);
  });

  it("gives the same events whatever the chunk boundaries, multi-byte characters included", async () => {
    const whole = await collect([wire]);
    const bytes = new TextEncoder().encode(wire);
    for (const size of [1, 2, 3, 7, 16]) {
      // The bytes are split, not the characters: "é" is two bytes and may be cut in half.
      const stream = new ReadableStream<Uint8Array>({
        start(controller) {
          for (let at = 0; at < bytes.length; at += size) {
            controller.enqueue(bytes.slice(at, at + size));
          }
          controller.close();
        },
      });
      const events = [];
      for await (const event of readSse(stream)) events.push(event);
      expect(events, `chunks of ${size} bytes`).toEqual(whole);
    }
  });

  it("accepts CRLF line endings and a last event without a trailing blank line", async () => {
    expect(
      await collect(['event: values\r\ndata: {"a":1}\r\n\r\nevent: end\r\ndata: null']),
    ).toEqual([
      { event: "values", data: { a: 1 }, id: undefined },
      { event: "end", data: null, id: undefined },
    ]);
  });

  it("ignores blocks without data", () => {
    expect(parseBlock("event: ping")).toBeUndefined();
    expect(parseBlock(": comment")).toBeUndefined();
  });
});
