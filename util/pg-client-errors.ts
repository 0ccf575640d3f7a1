import type pg from "pg";

/**
 * Keeps a PostgreSQL connection that breaks while it is checked out of `pool` (between the
 * queries of a transaction, or just before its first) from crashing the process. pg-pool listens
 * for errors on idle connections only, and an `error` event nobody listens to is thrown. The
 * broken connection is not lost track of: its next query fails with the connection error, where
 * the caller handles it, and the pool drops it when it is released. Idle connections that break
 * are still reported by the pool's own `error` event.
 */
export function survivePoolClientErrors(pool: pg.Pool): void {
  pool.on("connect", (client) => {
    client.on("error", () => undefined);
  });
}
