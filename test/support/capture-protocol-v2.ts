/**
 * Captures what the official dev server (`langgraphjs dev` on our `langgraph.json`, graph
 * `agent`, the offline model, no context) sends over the v2 thread protocol, as fixtures for
 * `test/server/thread-protocol-*.test.ts` to compare our server's shapes with.
 *
 * Run: `npx tsx test/support/capture-protocol-v2.ts` (about a minute; writes
 * `test/fixtures/protocol-v2/dev-server.json`).
 */
import { randomUUID } from "node:crypto";
import { writeFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { startNewcomerStudio } from "../studio/newcomer-project.js";

const OUT = fileURLToPath(new URL("../fixtures/protocol-v2/dev-server.json", import.meta.url));
const ALL = ["values", "updates", "messages", "tools", "lifecycle", "input", "custom", "tasks"];

/** Reads an SSE body into `{ id, event, data }` frames until `stop` says so or it ends. */
async function readSse(
  response: Response,
  stop: (frame: {
    data: { method?: string; params?: { namespace?: string[]; data?: { event?: string } } };
  }) => boolean,
) {
  const frames: { id?: string; event?: string; data: never }[] = [];
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let text = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    text += decoder.decode(value, { stream: true });
    let cut = text.indexOf("\n\n");
    while (cut >= 0) {
      const block = text.slice(0, cut);
      text = text.slice(cut + 2);
      cut = text.indexOf("\n\n");
      const frame: Record<string, string> = {};
      for (const line of block.split("\n")) {
        const at = line.indexOf(":");
        if (at > 0) frame[line.slice(0, at)] = line.slice(at + 1).trim();
      }
      if (!frame.data) continue;
      const parsed = { id: frame.id, event: frame.event, data: JSON.parse(frame.data) as never };
      frames.push(parsed);
      if (stop(parsed)) {
        await reader.cancel();
        return frames;
      }
    }
  }
  return frames;
}

const rootEnd = (frame: {
  data: { method?: string; params?: { namespace?: string[]; data?: { event?: string } } };
}) =>
  frame.data.method === "lifecycle" &&
  frame.data.params?.namespace?.length === 0 &&
  ["completed", "failed", "interrupted"].includes(frame.data.params?.data?.event ?? "");

const studio = await startNewcomerStudio();
try {
  const url = studio.server.url;
  const post = async (path: string, body: unknown) => {
    const response = await fetch(`${url}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: typeof body === "string" ? body : JSON.stringify(body),
    });
    const text = await response.text();
    let json: unknown = text;
    try {
      json = JSON.parse(text);
    } catch {}
    return { status: response.status, body: json };
  };
  const threadId = randomUUID();
  await post("/threads", { thread_id: threadId });
  const stream = await fetch(`${url}/threads/${threadId}/stream/events`, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "text/event-stream" },
    body: JSON.stringify({ channels: ALL }),
  });
  const framesPromise = readSse(stream, rootEnd);
  const start = await post(`/threads/${threadId}/commands`, {
    id: 1,
    method: "run.start",
    params: {
      assistant_id: "agent",
      input: { messages: [{ type: "human", content: "Plan a small launch" }] },
    },
  });
  const frames = await framesPromise;
  const replay = await fetch(`${url}/threads/${threadId}/stream/events`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ channels: ["lifecycle"], since: 3 }),
  });
  const replayed = await readSse(replay, rootEnd);
  const commands: Record<string, unknown> = {
    "state.get": await post(`/threads/${threadId}/commands`, {
      id: 2,
      method: "state.get",
      params: {},
    }),
    "agent.getTree": await post(`/threads/${threadId}/commands`, {
      id: 3,
      method: "agent.getTree",
      params: {},
    }),
    "subscription.subscribe": await post(`/threads/${threadId}/commands`, {
      id: 4,
      method: "subscription.subscribe",
      params: { channels: ["values"] },
    }),
    "subscription.unsubscribe unknown": await post(`/threads/${threadId}/commands`, {
      id: 5,
      method: "subscription.unsubscribe",
      params: { subscription_id: "nope" },
    }),
    "subscription.reconnect": await post(`/threads/${threadId}/commands`, {
      id: 6,
      method: "subscription.reconnect",
      params: { run_id: "x" },
    }),
    "unknown method": await post(`/threads/${threadId}/commands`, {
      id: 7,
      method: "no.such",
      params: {},
    }),
    "missing id": await post(`/threads/${threadId}/commands`, { method: "state.get" }),
    "not json": await post(`/threads/${threadId}/commands`, "{nope"),
    "run.start without assistant": await post(`/threads/${threadId}/commands`, {
      id: 8,
      method: "run.start",
      params: {},
    }),
    "input.respond without interrupt": await post(`/threads/${threadId}/commands`, {
      id: 9,
      method: "input.respond",
      params: { interrupt_id: "x", response: {} },
    }),
    "stream bad filter": await post(`/threads/${threadId}/stream/events`, { channels: "values" }),
  };
  await writeFile(
    OUT,
    `${JSON.stringify({ threadId, start, frames, replaySince3: replayed, commands }, null, 2)}\n`,
  );
  console.log(`${frames.length} frames, ${replayed.length} replayed → ${OUT}`);
} finally {
  await studio.dispose();
}
