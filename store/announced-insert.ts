import { type InsertQueryBuilder, type InsertResult, type Kysely, sql } from "kysely";
import type { DatabaseSchema } from "./schema.js";

/** A notification to send with a write: its channel and payload (at most 8000 bytes). */
export interface Announcement {
  channel: string;
  payload: string;
}

/**
 * Runs `insert`, and with `announce` sends that notification in the same statement (PostgreSQL
 * only: a data-modifying `WITH` runs whether or not the query reads it). Listeners hear it when
 * the statement's transaction commits, so they find the rows: one round trip, not two.
 */
export async function insertAnnounced<Table extends keyof DatabaseSchema & string>(
  db: Kysely<DatabaseSchema>,
  insert: InsertQueryBuilder<DatabaseSchema, Table, InsertResult>,
  announce: Announcement | undefined,
): Promise<void> {
  if (!announce) {
    await insert.execute();
    return;
  }
  await db
    .with("inserted", () => insert)
    .selectNoFrom(sql<string>`pg_notify(${announce.channel}, ${announce.payload})`.as("sent"))
    .execute();
}
