/**
 * Reading a LangGraph API stream's subagent events, as a client sees them: each subagent streams
 * under `tools:<task id>` (the namespace LangGraph gives a graph run inside a tool), and its
 * tokens' metadata names its child thread.
 */

/** One SSE event as the SDK yields it. */
export interface StreamedEvent {
  event: string;
  data: unknown;
}

/** The first namespace segment of an event name (`updates|tools:abc|model:x` → `tools:abc`). */
export function firstSegment(event: string): string | undefined {
  return event.split("|")[1];
}

/** The distinct `tools:` namespaces (first segment) the events of `mode` came under. */
export function subagentNamespaces(events: readonly StreamedEvent[], mode = "updates"): string[] {
  const seen = new Set<string>();
  for (const { event } of events) {
    if (!event.startsWith(`${mode}|`)) continue;
    const segment = firstSegment(event);
    if (segment?.startsWith("tools:")) seen.add(segment);
  }
  return [...seen];
}

/**
 * For each child thread, the namespace its tokens came under (from `messages|…` events, whose
 * metadata names the child's `thread_id`). A child whose tokens came under two namespaces, or at
 * the root, maps to every one of them, so a test comparing the result sees it.
 */
export function namespacesByChildThread(events: readonly StreamedEvent[]): Map<string, string[]> {
  const byThread = new Map<string, Set<string>>();
  for (const { event, data } of events) {
    if (event !== "messages" && !event.startsWith("messages|")) continue;
    const [, metadata] = (Array.isArray(data) ? data : []) as [unknown, { thread_id?: unknown }?];
    if (typeof metadata?.thread_id !== "string") continue;
    const seen = byThread.get(metadata.thread_id) ?? new Set<string>();
    seen.add(firstSegment(event) ?? "(root)");
    byThread.set(metadata.thread_id, seen);
  }
  return new Map([...byThread].map(([thread, seen]) => [thread, [...seen]]));
}
