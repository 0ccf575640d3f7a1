/** One server-sent event: its name, its JSON data (or the raw text) and its id. */
export interface SseEvent {
  event: string;
  data: unknown;
  id: string | undefined;
}

/**
 * Reads server-sent events from a response body. `EventSource` cannot send a POST body or an
 * `Authorization` header, which every run stream needs, so the stream is parsed here: events are
 * separated by a blank line, `data:` lines are joined with newlines, `:` lines are comments
 * (keep-alives), and a data payload that is JSON is parsed.
 */
export async function* readSse(body: ReadableStream<Uint8Array>): AsyncGenerator<SseEvent> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  try {
    for (;;) {
      const { done, value } = await reader.read();
      buffer += done ? decoder.decode() : decoder.decode(value, { stream: true });
      const blocks = buffer.split(/\r?\n\r?\n/);
      buffer = done ? "" : (blocks.pop() ?? "");
      for (const block of blocks) {
        const event = parseBlock(block);
        if (event) yield event;
      }
      if (done) return;
    }
  } finally {
    reader.releaseLock();
  }
}

/** One event block, or undefined for a comment-only or empty block. */
export function parseBlock(block: string): SseEvent | undefined {
  let event = "message";
  let id: string | undefined;
  const data: string[] = [];
  for (const line of block.split(/\r?\n/)) {
    if (line === "" || line.startsWith(":")) continue;
    const colon = line.indexOf(":");
    const field = colon === -1 ? line : line.slice(0, colon);
    const value = colon === -1 ? "" : line.slice(colon + 1).replace(/^ /, "");
    if (field === "event") event = value;
    else if (field === "data") data.push(value);
    else if (field === "id") id = value;
  }
  if (data.length === 0) return undefined;
  const text = data.join("\n");
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // Not JSON: keep the text as sent.
  }
  return { event, data: parsed, id };
}
