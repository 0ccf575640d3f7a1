import {
  DeltaValue,
  MessagesDeltaValue,
  messagesDeltaReducer,
  ReducedValue,
  StateSchema,
  type StateSchemaFields,
} from "@langchain/langgraph";
import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";
import type { z } from "zod";
import { ErrorCode, SubagentGraphError } from "../errors.js";
import { ForkSafePostgresSaver } from "./postgres-saver.js";
import { SendCompactingMemorySaver } from "./send-compacting-savers.js";
import { DeltaHistorySqliteSaver } from "./sqlite-saver.js";

/**
 * How an agent's growing channels (`messages`, `subagent_runs`) are checkpointed:
 * - `"delta"`: each step stores only what it wrote, with a full snapshot of the channel every
 *   `snapshotFrequency` updates; a read rebuilds the value from the nearest snapshot and the
 *   writes since (one query on our SQLite and PostgreSQL savers).
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
 * times (input, model, tools, model), so 250 updates is a snapshot every ~60 turns: a read
 * replays at most 250 writes (about 15 ms on SQLite), and a snapshot rarely falls inside a
 * window of turns (bench/README.md, "Scenario: snapshots", has the sweep behind the choice).
 */
export const DEFAULT_SNAPSHOT_FREQUENCY = 250;

/**
 * The environment variable that sets `checkpointStorage` when the option is not given: the way
 * to choose for `npm start` and for graphs hosted by a LangGraph server (Studio).
 */
export const CHECKPOINT_STORAGE_ENV = "SUBAGENT_GRAPH_CHECKPOINT_STORAGE";

/** The storage options as given, checked: `kind` undefined means the saver's default. */
export interface RequestedStorage {
  kind: CheckpointStorage | undefined;
  snapshotFrequency: number;
}

/**
 * Checks the `checkpointStorage` and `deltaSnapshotFrequency` options (before anything opens).
 * `kindSource` names where `kind` came from, for the error (the option, or
 * {@link CHECKPOINT_STORAGE_ENV}).
 *
 * @throws SubagentGraphError `VALIDATION_FAILED` naming the option for an unknown storage or a
 *   frequency that is not a whole number of at least 1.
 */
export function checkStorageOptions(
  kind: unknown,
  snapshotFrequency: unknown = DEFAULT_SNAPSHOT_FREQUENCY,
  kindSource = "checkpointStorage",
): RequestedStorage {
  if (kind !== undefined && kind !== "delta" && kind !== "full") {
    throw new SubagentGraphError(
      ErrorCode.Validation,
      `${kindSource} ${JSON.stringify(kind)} is not a storage: use "delta" (linear, the default on our savers) or "full" (LangGraph's stock storage)`,
      { field: kindSource },
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
 * The storage a runtime uses: the one asked for, else `"delta"` on our savers (SQLite and
 * PostgreSQL rebuild a delta channel in one query; all three store `Send` packets by reference,
 * as does a LangGraph server's saver seen through `sendCompactingView`, which hosted graphs use)
 * and `"full"` on a saver passed in. A stock saver stores each step's `Send` packets whole, and
 * its delta read deserializes every ancestor checkpoint: the bench measured delta there at 10×
 * the full storage's time per turn by turn 50.
 */
/**
 * The storage the runtime's options ask for, else {@link CHECKPOINT_STORAGE_ENV}, checked before
 * anything opens ({@link checkStorageOptions}).
 */
export function requestedStorage(
  option: unknown,
  snapshotFrequency: unknown,
  env: Readonly<Record<string, string | undefined>>,
): RequestedStorage {
  const fromEnv = env[CHECKPOINT_STORAGE_ENV]?.trim() || undefined;
  return checkStorageOptions(
    option ?? fromEnv,
    snapshotFrequency,
    option === undefined && fromEnv ? CHECKPOINT_STORAGE_ENV : undefined,
  );
}

export function resolveChannelStorage(
  requested: RequestedStorage = checkStorageOptions(undefined),
  saver?: BaseCheckpointSaver,
): ChannelStorage {
  const ours =
    saver instanceof DeltaHistorySqliteSaver ||
    saver instanceof ForkSafePostgresSaver ||
    saver instanceof SendCompactingMemorySaver;
  return {
    kind: requested.kind ?? (ours ? "delta" : "full"),
    snapshotFrequency: requested.snapshotFrequency,
  };
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
 * The batch reducer of a delta channel whose writes fold one at a time with `merge`: the same
 * value however the writes are batched, as delta replay requires.
 */
export function foldWrites<T>(
  merge: (current: readonly T[], update: readonly T[] | undefined) => T[],
): (state: T[], writes: (T[] | undefined)[]) => T[] {
  return (state, writes) => writes.reduce<T[]>(merge, state);
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
    reducer: foldWrites(merge),
    snapshotFrequency: storage.snapshotFrequency,
  });
}
