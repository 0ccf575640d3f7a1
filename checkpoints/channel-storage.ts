import {
  DeltaValue,
  MessagesDeltaValue,
  messagesDeltaReducer,
  ReducedValue,
  StateSchema,
  type StateSchemaFields,
} from "@langchain/langgraph";
import type { z } from "zod";
import { ErrorCode, SubagentGraphError } from "../errors.js";

/**
 * How an agent's growing channels (`messages`, `subagent_runs`) are checkpointed:
 * - `"delta"` (default): each step stores only what it wrote, with a full snapshot of the channel
 *   every `snapshotFrequency` updates; a read rebuilds the value from the nearest snapshot and
 *   the writes since (one query on our SQLite and PostgreSQL savers). Bytes grow linearly with
 *   the conversation.
 * - `"full"`: LangGraph's stock storage, the whole value in every checkpoint that changed it.
 *   Reads need no replay, but a conversation of n steps stores on the order of n² bytes.
 * A thread written one way stays readable the other way (LangGraph rebuilds either), so the
 * setting can change between runs.
 */
export type CheckpointStorage = "full" | "delta";

/** The resolved storage of a runtime's agents. */
export interface ChannelStorage {
  kind: CheckpointStorage;
  /** Updates of a delta channel between full snapshots (ignored by `"full"`). */
  snapshotFrequency: number;
}

/**
 * Updates of a channel between two snapshots. A main agent's turn writes `messages` about four
 * times (input, model, tools, model), so 1000 updates is a snapshot every ~250 turns: rare
 * enough that the bytes of a turn stay flat, while a read replays at most 1000 writes in one
 * query (bench/README.md, "Checkpoint growth", has the sweep behind the choice).
 */
export const DEFAULT_SNAPSHOT_FREQUENCY = 1000;

/**
 * The storage the `checkpointStorage` and `deltaSnapshotFrequency` options ask for.
 *
 * @throws SubagentGraphError `VALIDATION_FAILED` naming the option for an unknown storage or a
 *   frequency that is not a whole number of at least 1.
 */
export function resolveChannelStorage(
  kind: unknown = "delta",
  snapshotFrequency: unknown = DEFAULT_SNAPSHOT_FREQUENCY,
): ChannelStorage {
  if (kind !== "delta" && kind !== "full") {
    throw new SubagentGraphError(
      ErrorCode.Validation,
      `checkpointStorage ${JSON.stringify(kind)} is not a storage: use "delta" (the default, linear) or "full" (LangGraph's stock storage)`,
      { field: "checkpointStorage" },
    );
  }
  if (
    typeof snapshotFrequency !== "number" ||
    !Number.isInteger(snapshotFrequency) ||
    snapshotFrequency < 1
  ) {
    throw new SubagentGraphError(
      ErrorCode.Validation,
      `deltaSnapshotFrequency ${JSON.stringify(snapshotFrequency)} is invalid: use a whole number of channel updates of at least 1 (default ${DEFAULT_SNAPSHOT_FREQUENCY})`,
      { field: "deltaSnapshotFrequency" },
    );
  }
  return { kind, snapshotFrequency };
}

/**
 * The `messages` field for `createAgent`'s `stateSchema` under `storage`: undefined keeps the
 * agent's own (full) one. langchain puts a caller's fields after its own, so this one replaces
 * the default `messages` channel.
 */
export function messagesField(storage: ChannelStorage) {
  if (storage.kind === "full") return undefined;
  return new DeltaValue(MessagesDeltaValue.valueSchema, {
    inputSchema: MessagesDeltaValue.inputSchema,
    // LangGraph recognises this reducer and gives every written message an id before the
    // write is stored, so a replay never mints new ids (langgraph's pregel/loop.js).
    reducer: messagesDeltaReducer,
    snapshotFrequency: storage.snapshotFrequency,
    jsonSchemaExtra: MessagesDeltaValue.jsonSchemaExtra,
  });
}

/**
 * `createAgent`'s `stateSchema` option: the `messages` field of `storage` plus `fields` (delta
 * channels of middleware, which langchain 1.5 accepts on the agent but not on a middleware);
 * nothing when neither is there, so the agent keeps its own state.
 */
export function agentStateOption(storage: ChannelStorage, fields: StateSchemaFields = {}) {
  const messages = messagesField(storage);
  const all: StateSchemaFields = { ...(messages ? { messages } : {}), ...fields };
  return Object.keys(all).length > 0 ? { stateSchema: new StateSchema(all) } : {};
}

/**
 * A list channel under `storage`: a delta channel folding each write with `merge`, or LangGraph's
 * reducer channel with the same `merge`. `merge` must be a fold that gives the same result
 * however the writes are batched (an upsert by id is), as delta replay batches them.
 */
export function listValue<T>(
  storage: ChannelStorage,
  listSchema: z.ZodType<T[]>,
  inputSchema: z.ZodType<T[] | undefined>,
  merge: (current: readonly T[], update: readonly T[] | undefined) => T[],
) {
  if (storage.kind === "full") return new ReducedValue(listSchema, { inputSchema, reducer: merge });
  return new DeltaValue(listSchema, {
    inputSchema,
    reducer: (state: T[], writes: (T[] | undefined)[]) => writes.reduce<T[]>(merge, state),
    snapshotFrequency: storage.snapshotFrequency,
  });
}
