import { matchesSubscription } from "@langchain/langgraph/stream";
import type { EventFilter } from "./parse.js";
import type { ProtocolEvent } from "./wire.js";

/**
 * Whether `event` passes `filter`: its channel is one of `channels` (a `custom:<name>` event
 * passes `custom` too), its namespace starts with one of `namespaces` (a segment without `:`
 * matches any task of that name) no more than `depth` levels below it, and its `seq` is after
 * `since`. LangGraph's own rule (`matchesSubscription` of `@langchain/langgraph/stream`), which
 * the SDK applies on its side too, so both agree on every event.
 */
export function matchesFilter(filter: EventFilter, event: ProtocolEvent): boolean {
  return matchesSubscription(event, {
    channels: filter.channels as Parameters<typeof matchesSubscription>[1]["channels"],
    ...(filter.namespaces ? { namespaces: filter.namespaces } : {}),
    ...(filter.depth !== undefined ? { depth: filter.depth } : {}),
    ...(filter.since !== undefined ? { since: filter.since } : {}),
  });
}
