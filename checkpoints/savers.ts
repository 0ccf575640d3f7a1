import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";
import { MemorySaver } from "@langchain/langgraph-checkpoint";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { ErrorCode, SubagentGraphError } from "../errors.js";

/** Which built-in saver to use. */
export type SaverKind = "memory" | "sqlite";

/** A checkpoint saver plus how to release it. */
export interface ManagedSaver {
  saver: BaseCheckpointSaver;
  kind: SaverKind | "custom";
  close(): Promise<void>;
}

/**
 * Opens a built-in checkpoint saver. `sqlite` stores checkpoints in `file` (its folder is
 * created); `memory` keeps them in this process only (tests, throwaway runs).
 */
export function openSaver(kind: SaverKind, file?: string): ManagedSaver {
  if (kind === "memory") {
    return { saver: new MemorySaver(), kind, close: async () => {} };
  }
  if (file === undefined) {
    throw new SubagentGraphError(
      ErrorCode.Internal,
      "openSaver: the sqlite saver needs a file path",
    );
  }
  mkdirSync(dirname(file), { recursive: true });
  const saver = SqliteSaver.fromConnString(file);
  return {
    saver,
    kind,
    close: async () => {
      saver.db.close();
    },
  };
}

/** Wraps a saver the caller owns: closing the runtime leaves it open. */
export function borrowSaver(saver: BaseCheckpointSaver): ManagedSaver {
  return { saver, kind: "custom", close: async () => {} };
}
