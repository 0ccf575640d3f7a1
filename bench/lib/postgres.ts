import { messageOf } from "../../errors.js";
import {
  createTestDatabase,
  type PostgresCluster,
  startPostgresCluster,
} from "../../test/support/postgres-cluster.js";

let cluster: PostgresCluster | undefined;
let unavailable: string | undefined;

/**
 * A fresh database on the bench's private PostgreSQL cluster (started on first use, `fsync=off`
 * as in the tests), or undefined with the reason printed once when PostgreSQL is not installed.
 */
export async function freshPostgresDatabase(prefix = "bench"): Promise<string | undefined> {
  if (unavailable !== undefined) return undefined;
  if (!cluster) {
    try {
      cluster = await startPostgresCluster();
    } catch (error) {
      unavailable = messageOf(error);
      console.warn(`PostgreSQL variants skipped: ${unavailable}`);
      return undefined;
    }
  }
  return createTestDatabase(cluster.url, prefix);
}

/** Stops the cluster (if one was started) and removes its files. */
export function stopPostgres(): void {
  cluster?.stop();
  cluster = undefined;
}
