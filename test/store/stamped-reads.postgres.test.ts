import { inject } from "vitest";
import { openPostgresDatabase } from "../../store/database.js";
import { createTestDatabase } from "../support/postgres-cluster.js";
import { runStampedReadsSuite } from "./stamped-reads-suite.js";

const clusterUrl = inject("postgresUrl");

// Two pools on one database, as two processes of a fleet have them.
runStampedReadsSuite("postgres", async () => {
  const url = await createTestDatabase(clusterUrl, "stamped");
  const first = await openPostgresDatabase(url);
  const second = await openPostgresDatabase(url);
  return { first, second };
});
