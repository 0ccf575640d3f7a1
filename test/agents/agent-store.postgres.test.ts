import { inject } from "vitest";
import { openPostgresDatabase } from "../../store/database.js";
import { createIcuTestDatabase } from "../store/icu-database.js";
import { createTestDatabase } from "../support/postgres-cluster.js";
import { runAgentStoreSuite } from "./agent-store-suite.js";

const clusterUrl = inject("postgresUrl");

// A new database per test: every test starts from an empty, freshly migrated schema.
runAgentStoreSuite("postgres", async () =>
  openPostgresDatabase(await createTestDatabase(clusterUrl, "agents")),
);
// Again under a language collation, which orders text unlike SQLite.
runAgentStoreSuite("postgres with an en-US collation", async () =>
  openPostgresDatabase(await createIcuTestDatabase(clusterUrl, "agents_icu")),
);
