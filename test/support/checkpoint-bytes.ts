import { join } from "node:path";
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
