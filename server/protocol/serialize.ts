import type { BaseMessage } from "@langchain/core/messages";
import type { StateSnapshot } from "@langchain/langgraph";
import { messageOf } from "../../errors.js";
import { clampDepth } from "../../util/json-depth.js";

/** A message as the LangGraph API sends it: LangChain's dict data plus a `type`. */
export type MessageDict = Record<string, unknown> & { type: string; content: unknown };

/** Chunk classes map to the message type a client expects (`AIMessageChunk` → `ai`). */
const CHUNK_TYPES: Record<string, string> = {
  AIMessageChunk: "ai",
  HumanMessageChunk: "human",
  ToolMessageChunk: "tool",
  SystemMessageChunk: "system",
};

function isMessage(value: unknown): value is BaseMessage {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as { getType?: unknown }).getType === "function" &&
    typeof (value as { toDict?: unknown }).toDict === "function"
  );
}

/** One message in the wire format (`{type, content, id, tool_calls, …}`). */
export function serializeMessage(message: BaseMessage): MessageDict {
  const data = { ...message.toDict().data } as Record<string, unknown>;
  const type = message.getType();
  return { ...data, type: CHUNK_TYPES[type] ?? type, content: data.content ?? "" };
}

/**
 * Deepest state value a response shows; anything deeper reads as {@link TOO_DEEP}. Request
 * bodies are refused beyond 64 levels (`server/json-body.ts`), so this only clips values stored
 * before that limit existed, which would otherwise overflow the stack in `JSON.stringify`.
 */
export const MAX_READ_DEPTH = 256;

/** What a value deeper than {@link MAX_READ_DEPTH} is shown as. */
export const TOO_DEEP = `[nested deeper than ${MAX_READ_DEPTH} levels: not shown]`;

/**
 * State values (or a node's update) in wire form: messages anywhere become dicts, everything
 * else is kept if JSON can carry it. Undefined values are dropped, as JSON does.
 */
export function serializeValue(value: unknown, depth = 0): unknown {
  if (isMessage(value)) {
    return clampDepth(serializeMessage(value), Math.max(1, MAX_READ_DEPTH - depth), TOO_DEEP);
  }
  if (value === null || typeof value !== "object") {
    return typeof value === "function" || typeof value === "symbol" ? undefined : value;
  }
  if (depth >= MAX_READ_DEPTH) return TOO_DEEP;
  if (Array.isArray(value)) return value.map((item) => serializeValue(item, depth + 1));
  if (value instanceof Date) return value.toISOString();
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    const serialized = serializeValue(item, depth + 1);
    if (serialized !== undefined) out[key] = serialized;
  }
  return out;
}

/**
 * The metadata of a `messages` chunk, reduced to what JSON can carry: callbacks put LangGraph's
 * own objects there too, which are neither meaningful to a client nor serialisable.
 */
export function serializeChunkMetadata(metadata: unknown): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (typeof metadata !== "object" || metadata === null) return out;
  for (const [key, item] of Object.entries(metadata)) {
    if (key.startsWith("__")) continue;
    if (item === null || ["string", "number", "boolean"].includes(typeof item)) out[key] = item;
    else if (Array.isArray(item) && item.every((v) => typeof v === "string")) out[key] = item;
  }
  return out;
}

/**
 * The `ThreadState` of the LangGraph API for a thread with no checkpoint yet. Its `checkpoint`
 * names the thread with a null `checkpoint_id`, as the SDK's `ThreadState` type (a non-null
 * `Checkpoint`) and its own stand-in state for such a thread have it, where the reference dev
 * server sends `checkpoint: null`.
 */
export function emptyThreadState(threadId: string) {
  return {
    values: {},
    next: [] as string[],
    tasks: [],
    metadata: {},
    created_at: null,
    checkpoint: {
      thread_id: threadId,
      checkpoint_ns: "",
      checkpoint_id: null,
      checkpoint_map: null,
    },
    parent_checkpoint: null,
  };
}

/** A LangGraph `StateSnapshot` as the API's `ThreadState`. */
export function serializeSnapshot(snapshot: StateSnapshot, threadId: string) {
  const checkpointId = snapshot.config.configurable?.checkpoint_id as string | undefined;
  const parentId = snapshot.parentConfig?.configurable?.checkpoint_id as string | undefined;
  return {
    values: serializeValue(snapshot.values ?? {}) as Record<string, unknown>,
    next: [...snapshot.next],
    tasks: snapshot.tasks.map((task) => ({
      id: task.id,
      name: task.name,
      path: task.path ?? ["__pregel_pull", task.name],
      error:
        task.error === undefined || task.error === null
          ? null
          : JSON.stringify({
              message: messageOf(task.error),
              name: task.error instanceof Error ? task.error.name : "Error",
            }),
      interrupts: serializeValue(task.interrupts ?? []),
      checkpoint: null,
      state: null,
      result: serializeValue(task.result ?? null) ?? null,
    })),
    metadata: serializeValue(snapshot.metadata ?? {}) as Record<string, unknown>,
    created_at: snapshot.createdAt ?? null,
    checkpoint: checkpointRef(threadId, checkpointId ?? null),
    parent_checkpoint: parentId ? checkpointRef(threadId, parentId) : null,
  };
}

/** A checkpoint reference as the API writes it (root namespace). */
export function checkpointRef<Id extends string | null>(threadId: string, checkpointId: Id) {
  return {
    thread_id: threadId,
    checkpoint_ns: "",
    checkpoint_id: checkpointId,
    checkpoint_map: null,
  };
}
