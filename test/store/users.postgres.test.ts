import { inject } from "vitest";
import { openPostgresDatabase } from "../../store/database.js";
import { createTestDatabase } from "../support/postgres-cluster.js";
import { createIcuTestDatabase } from "./icu-database.js";
import { runUserStoreSuite } from "./users-suite.js";

const clusterUrl = inject("postgresUrl");

// A new database per test: every test starts from an empty, freshly migrated schema.
runUserStoreSuite("postgres", async () =>
  openPostgresDatabase(await createTestDatabase(clusterUrl, "users")),
);
// Again under a language collation, which orders text unlike SQLite.
runUserStoreSuite("postgres with an en-US collation", async () =>
  openPostgresDatabase(await createIcuTestDatabase(clusterUrl, "users_icu")),
);
