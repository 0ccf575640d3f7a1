import type { BaseMessage } from "@langchain/core/messages";
import type { GraphStreamChunk } from "../../runs/events.js";
import { serializeChunkMetadata, serializeMessage, serializeValue } from "./serialize.js";

/** Stream modes a client may ask for, and the LangGraph mode each one reads. */
export const WIRE_STREAM_MODES = {
  values: "values",
  updates: "updates",
  "messages-tuple": "messages",
  custom: "custom",
} as const;
export type WireStreamMode = keyof typeof WIRE_STREAM_MODES;

/** One event to send, before it gets its sequence number. */
export interface WireEvent {
  event: string;
  data: unknown;
}

/**
 * Turns one LangGraph chunk of a parent run into the API's SSE events for the modes asked.
 *
 * Names are `<mode>` at the root and `<mode>|<namespace…>` inside a subgraph when
 * `subgraphs` is on (without it, subgraph chunks are dropped, as the API does). A subagent's
 * chunks, its tokens included, come under `tools:<task id>` (`contract.ts`), as LangGraph streams
 * a graph run inside a tool; its thread is named by the `subagent_started` custom event and by
 * the `thread_id` of its messages' metadata.
 */
export function translateForWire(
  chunk: GraphStreamChunk,
  modes: ReadonlySet<WireStreamMode>,
  subgraphs: boolean,
): WireEvent[] {
  const [namespace, mode, data] = chunk;
  // A subgraph's chunk no client asked for is dropped before its data is serialized.
  if (namespace.length > 0 && !subgraphs) return [];
  switch (mode) {
    case "values":
      return modes.has("values") ? named("values", namespace, serializeValue(data)) : [];
    case "updates":
      return modes.has("updates") ? named("updates", namespace, serializeValue(data)) : [];
    case "custom":
      return modes.has("custom") ? named("custom", namespace, serializeValue(data)) : [];
    case "messages": {
      if (!modes.has("messages-tuple") || !Array.isArray(data)) return [];
      const [message, metadata] = data as [BaseMessage, unknown];
      const payload = [serializeMessage(message), serializeChunkMetadata(metadata)];
      return named("messages", namespace, payload);
    }
    default:
      return [];
  }
}

function named(mode: string, namespace: readonly string[], data: unknown) {
  if (namespace.length === 0) return [{ event: mode, data }];
  return [{ event: `${mode}|${namespace.join("|")}`, data }];
}
