import { inject } from "vitest";
import { openPostgresDatabase } from "../../store/database.js";
import { createTestDatabase } from "../support/postgres-cluster.js";
import { createIcuTestDatabase } from "./icu-database.js";
import { runThreadStoreSuite } from "./threads-suite.js";

const clusterUrl = inject("postgresUrl");

// A new database per test: every test starts from an empty, freshly migrated schema.
runThreadStoreSuite("postgres", async () =>
  openPostgresDatabase(await createTestDatabase(clusterUrl, "threads")),
);
// Again under a language collation, which orders text unlike SQLite.
runThreadStoreSuite("postgres with an en-US collation", async () =>
  openPostgresDatabase(await createIcuTestDatabase(clusterUrl, "threads_icu")),
);
