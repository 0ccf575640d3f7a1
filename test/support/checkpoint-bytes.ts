import { join } from "node:path";
import type { MemorySaver } from "@langchain/langgraph-checkpoint";
import Database from "better-sqlite3";

/**
 * Bytes the SQLite saver of a runtime's data dir holds: its checkpoints, their metadata and the
 * pending writes, read from the file itself (0 before the saver made its tables, which it does
 * on its first write).
 */
export function sqliteCheckpointBytes(dataDir: string): number {
  const db = new Database(join(dataDir, "checkpoints.sqlite"), { readonly: true });
  try {
    if (!db.prepare("select 1 from sqlite_master where name = 'checkpoints'").get()) return 0;
    const row = db
      .prepare(
        `select (select coalesce(sum(length(checkpoint) + length(metadata)), 0) from checkpoints)
              + (select coalesce(sum(length(value)), 0) from writes) as bytes`,
      )
      .get() as { bytes: number };
    return row.bytes;
  } finally {
    db.close();
  }
}

/** Bytes a `MemorySaver` holds: its serialized checkpoints, metadata and pending writes. */
export function memoryCheckpointBytes(saver: MemorySaver): number {
  let bytes = 0;
  for (const namespaces of Object.values(saver.storage)) {
    for (const checkpoints of Object.values(namespaces)) {
      for (const [checkpoint, metadata] of Object.values(checkpoints)) {
        bytes += checkpoint.byteLength + metadata.byteLength;
      }
    }
  }
  for (const writes of Object.values(saver.writes)) {
    for (const [, , value] of Object.values(writes)) bytes += value.byteLength;
  }
  return bytes;
}
