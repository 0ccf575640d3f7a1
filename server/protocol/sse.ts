import type { ServerResponse } from "node:http";
import type { FastifyReply } from "fastify";

/** One server-sent event of a run, with its per-run sequence number. */
export interface RunStreamEvent {
  id: number;
  event: string;
  data: unknown;
}

/** The SSE frame of an event: `event`, one `data` line of JSON, `id` (the order the SDK reads). */
export function sseFrame(event: RunStreamEvent): string {
  // JSON.stringify escapes every line break inside strings, so `data` stays one line.
  return `event: ${event.event}\ndata: ${JSON.stringify(event.data ?? null)}\nid: ${event.id}\n\n`;
}

/** Starts an SSE response (status 200, no caching, CORS-readable `Content-Location`). */
export function startSse(response: ServerResponse, headers: Record<string, string>): void {
  response.writeHead(200, {
    ...headers,
    "content-type": "text/event-stream; charset=utf-8",
    "cache-control": "no-cache",
    connection: "keep-alive",
    "x-accel-buffering": "no",
  });
  response.flushHeaders();
}

/**
 * The headers hooks have set on `reply` so far (CORS among them), as plain strings: a hijacked
 * reply (an SSE stream) sends them itself.
 */
export function replyHeaders(reply: FastifyReply): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(reply.getHeaders())) {
    if (value !== undefined)
      headers[name] = Array.isArray(value) ? value.join(", ") : String(value);
  }
  return headers;
}
