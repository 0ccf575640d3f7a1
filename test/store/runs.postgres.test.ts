import { inject } from "vitest";
import { openPostgresDatabase } from "../../store/database.js";
import { createTestDatabase } from "../support/postgres-cluster.js";
import { runRunStoreSuite } from "./runs-suite.js";

const clusterUrl = inject("postgresUrl");

// A new database per test: every test starts from an empty, freshly migrated schema.
runRunStoreSuite("postgres", async () =>
  openPostgresDatabase(await createTestDatabase(clusterUrl, "runs")),
);
