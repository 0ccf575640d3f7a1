import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";
import { MemorySaver } from "@langchain/langgraph-checkpoint";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { ForkSafePostgresSaver } from "./postgres-saver.js";

/**
 * The ids of the threads `saver` holds checkpoints of whose id starts with `prefix`, for the
 * savers we ship (memory, SQLite, {@link ForkSafePostgresSaver}); `undefined` for any other
 * saver, whose storage we cannot look into (the caller then relies on what it has recorded).
 *
 * Why: a thread's children are threads of their own (`<thread>_sub_<slug>_<hex>`, see
 * `child-thread-id.ts`), and a child cut short by a crash before its `task` call returned is
 * recorded nowhere but in its own checkpoints. Deleting a thread must find those too.
 */
export async function threadIdsStartingWith(
  saver: BaseCheckpointSaver,
  prefix: string,
): Promise<string[] | undefined> {
  if (saver instanceof ForkSafePostgresSaver) return saver.threadIdsStartingWith(prefix);
  if (saver instanceof MemorySaver) {
    return Object.keys(saver.storage).filter((threadId) => threadId.startsWith(prefix));
  }
  if (saver instanceof SqliteSaver) {
    // The stock saver creates its tables on first use: a saver never written to has none.
    const table = saver.db
      .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'checkpoints'")
      .get();
    if (table === undefined) return [];
    // instr() = 1 rather than LIKE: thread ids contain "_", LIKE's single-character wildcard.
    const rows = saver.db
      .prepare("SELECT DISTINCT thread_id FROM checkpoints WHERE instr(thread_id, ?) = 1")
      .all(prefix) as { thread_id: string }[];
    return rows.map((row) => row.thread_id);
  }
  return undefined;
}
