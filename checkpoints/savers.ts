import { dirname } from "node:path";
import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";
import { ErrorCode, SubagentGraphError } from "../errors.js";
import { makeDirectorySync } from "../util/make-directory.js";
import type { ChannelReducers } from "./delta-read.js";
import type { ForkSafePostgresSaverOpenOptions } from "./postgres-saver.js";
import {
  SendCompactingMemorySaver,
  SendCompactingPostgresSaver,
  SendCompactingSqliteSaver,
} from "./send-compacting-savers.js";
import { DEFAULT_SEND_REF_REDUCERS } from "./send-refs.js";

/** Which built-in saver to use. */
export type SaverKind = "memory" | "sqlite" | "postgres";

/** A checkpoint saver plus how to release it. */
export interface ManagedSaver {
  saver: BaseCheckpointSaver;
  kind: SaverKind | "custom";
  close(): Promise<void>;
}

/**
 * Opens a built-in checkpoint saver. `sqlite` stores checkpoints in `file` (its folder is
 * created) with a {@link SendCompactingSqliteSaver} (the stock SQLite saver and its schema, with
 * one-query `DeltaChannel` reads, and createAgent's `Send` packets stored with their `messages`
 * by reference, see `send-refs.ts`); `memory` keeps them in this process only (tests, throwaway
 * runs) with a {@link SendCompactingMemorySaver}; `postgres` connects to the database URL `target` (see {@link openPostgresSaver}) and
 * is async. `sendRefReducers` are the state channels stored by reference in `Send` packets, with
 * the reducers that rebuild them (default: `messages`).
 */
export function openSaver(
  kind: "postgres",
  target: string,
  sendRefReducers?: ChannelReducers,
): Promise<ManagedSaver>;
export function openSaver(
  kind: "memory" | "sqlite",
  file?: string,
  sendRefReducers?: ChannelReducers,
): ManagedSaver;
export function openSaver(
  kind: SaverKind,
  target?: string,
  sendRefReducers: ChannelReducers = DEFAULT_SEND_REF_REDUCERS,
): ManagedSaver | Promise<ManagedSaver> {
  if (kind === "memory") {
    return { saver: new SendCompactingMemorySaver(sendRefReducers), kind, close: async () => {} };
  }
  if (target === undefined) {
    throw new SubagentGraphError(
      ErrorCode.Internal,
      kind === "postgres"
        ? "openSaver: the postgres saver needs a database URL"
        : "openSaver: the sqlite saver needs a file path",
    );
  }
  if (kind === "postgres") return openPostgresSaver(target, {}, sendRefReducers);
  makeDirectorySync(dirname(target));
  const saver = SendCompactingSqliteSaver.fromConnString(target, sendRefReducers);
  return {
    saver,
    kind,
    close: async () => {
      saver.db.close();
    },
  };
}

/**
 * A {@link SendCompactingPostgresSaver} (a `ForkSafePostgresSaver` storing `Send` packets'
 * `messages` by reference) on a new pool to `url`, its tables set up; `close()` ends the pool.
 * (The stock `PostgresSaver` loses time-travel forks, see `ForkSafePostgresSaver`.)
 */
export async function openPostgresSaver(
  url: string,
  options: ForkSafePostgresSaverOpenOptions = {},
  sendRefReducers: ChannelReducers = DEFAULT_SEND_REF_REDUCERS,
): Promise<ManagedSaver> {
  const saver = await SendCompactingPostgresSaver.open(url, options, sendRefReducers);
  return { saver, kind: "postgres", close: () => saver.close() };
}

/** Wraps a saver the caller owns: closing the runtime leaves it open. */
export function borrowSaver(saver: BaseCheckpointSaver): ManagedSaver {
  return { saver, kind: "custom", close: async () => {} };
}
