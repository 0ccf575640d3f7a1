/**
 * One PostgreSQL advisory lock around every schema step of this project.
 *
 * Several processes may start at once on one fresh database (a fleet rolled out together), and
 * each brings the schema up: our Kysely migrations (`migrations.ts`) and the checkpoint saver's
 * own `setup()` (`checkpoints/postgres-saver.ts`), which creates its tables and records its own
 * migration numbers without any lock or transaction. Racing, two processes both insert the same
 * `checkpoint_migrations` row or both create the same table (`pg_type_typname_nsp_index`), and
 * one of them fails to start. Taking one advisory lock around each step makes the starts take
 * turns: the second process finds the work done and applies nothing.
 */

import pg from "pg";

/**
 * The advisory lock's key: "subagent" in ASCII, as a 64-bit number. Advisory locks are per
 * database, so processes on other databases of the same server never wait for each other.
 */
export const SCHEMA_LOCK_KEY = "8319104481002098292";

/**
 * Runs `step` while holding the schema lock of the database `connection` points at, and waits
 * for the lock as long as another process holds it.
 *
 * The lock lives on a connection of its own, outside any pool: the step may use every connection
 * of its pool (a pool of one would otherwise wait for itself), and a session-level lock is given
 * back by PostgreSQL if this process dies while holding it. Behind a pooler in transaction mode
 * (PgBouncer) session locks do not hold: point the starts at the database directly.
 *
 * @param connection how to reach the database: a `pg.Pool`'s `options` (what the pool itself
 *   opens its clients with) or any `pg.ClientConfig`.
 * @example
 * await withSchemaLock(pool.options, () => migrateToLatest(db));
 */
export async function withSchemaLock<T>(
  connection: pg.ClientConfig,
  step: () => Promise<T>,
): Promise<T> {
  const client = new pg.Client(connection);
  // An error on the idle lock connection (the server restarted) must not crash the process;
  // the step's own queries report the failure.
  client.on("error", () => undefined);
  await client.connect();
  try {
    await client.query("select pg_advisory_lock($1::bigint)", [SCHEMA_LOCK_KEY]);
    try {
      return await step();
    } finally {
      await client
        .query("select pg_advisory_unlock($1::bigint)", [SCHEMA_LOCK_KEY])
        // Closing the connection below gives the lock back anyway.
        .catch(() => undefined);
    }
  } finally {
    await client.end().catch(() => undefined);
  }
}
