/**
 * Raw access to the thread protocol ("v2") of a server, for tests that check what goes over the
 * wire itself (filters, replays, error envelopes) rather than what the SDK assembles from it.
 */

/** A protocol event as it arrives. */
export interface WireEvent {
  type: "event";
  event_id: string;
  seq: number;
  method: string;
  params: {
    namespace: string[];
    timestamp: number;
    node?: string;
    data: Record<string, unknown> & { event?: string };
  };
}

/** Whether `event` is the root's last lifecycle event (the run is over). */
export function isRootEnd(event: WireEvent): boolean {
  return (
    event.method === "lifecycle" &&
    event.params.namespace.length === 0 &&
    ["completed", "failed", "interrupted"].includes(event.params.data.event ?? "")
  );
}

/** An open `POST /threads/:id/stream/events`: the events so far, and a way to wait for more. */
export interface EventStream {
  status: number;
  contentType: string;
  events: WireEvent[];
  /** SSE `id` and `event` fields of each frame, in order. */
  frames: { id: string; event: string }[];
  /** Resolves once an event satisfies `predicate` (or rejects after `limitMs`). */
  until(predicate: (event: WireEvent) => boolean, limitMs?: number): Promise<WireEvent>;
  close(): void;
}

export async function openEvents(
  base: string,
  token: string | undefined,
  threadId: string,
  body: unknown,
): Promise<EventStream> {
  const abort = new AbortController();
  const response = await fetch(`${base}/threads/${encodeURIComponent(threadId)}/stream/events`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    },
    body: typeof body === "string" ? body : JSON.stringify(body),
    signal: abort.signal,
  });
  const events: WireEvent[] = [];
  const frames: { id: string; event: string }[] = [];
  const waiters = new Set<() => void>();
  const contentType = response.headers.get("content-type") ?? "";
  if (contentType.includes("text/event-stream") && response.body) {
    void (async () => {
      const decoder = new TextDecoder();
      let text = "";
      try {
        for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
          text += decoder.decode(chunk, { stream: true });
          let cut = text.indexOf("\n\n");
          while (cut >= 0) {
            const block = text.slice(0, cut);
            text = text.slice(cut + 2);
            cut = text.indexOf("\n\n");
            const fields: Record<string, string> = {};
            for (const line of block.split("\n")) {
              const at = line.indexOf(":");
              if (at > 0) fields[line.slice(0, at)] = line.slice(at + 1).trim();
            }
            if (fields.data === undefined) continue;
            frames.push({ id: fields.id ?? "", event: fields.event ?? "" });
            events.push(JSON.parse(fields.data) as WireEvent);
            for (const wake of waiters) wake();
          }
        }
      } catch {
        // Closed by the test.
      }
    })();
  }
  return {
    status: response.status,
    contentType,
    events,
    frames,
    async until(predicate, limitMs = 15_000) {
      const found = () => events.find(predicate);
      const deadline = Date.now() + limitMs;
      while (!found()) {
        if (Date.now() > deadline) {
          throw new Error(
            `no such event within ${limitMs} ms; got ${events.map((e) => `${e.seq}:${e.method}`).join(" ")}`,
          );
        }
        await new Promise<void>((resolve) => {
          const wake = () => {
            waiters.delete(wake);
            resolve();
          };
          waiters.add(wake);
          setTimeout(wake, 50);
        });
      }
      return found() as WireEvent;
    },
    close: () => abort.abort(),
  };
}

/** `POST /threads/:id/commands` with `body` (an object, or raw text), its status and JSON answer. */
export async function sendCommand(
  base: string,
  token: string | undefined,
  threadId: string,
  body: unknown,
): Promise<{
  status: number;
  body: Record<string, unknown> & {
    type?: string;
    id?: unknown;
    error?: string;
    message?: string;
    result?: Record<string, unknown>;
  };
}> {
  const response = await fetch(`${base}/threads/${encodeURIComponent(threadId)}/commands`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : {} };
}
