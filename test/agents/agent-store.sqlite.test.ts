import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll } from "vitest";
import { openSqliteDatabase } from "../../store/database.js";
import { runAgentStoreSuite } from "./agent-store-suite.js";

let dir: string;
let opened = 0;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "agent-store-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

// A new file per test: every test starts from an empty, freshly migrated database.
runAgentStoreSuite("sqlite", () => openSqliteDatabase(join(dir, `agents-${++opened}.sqlite`)));
