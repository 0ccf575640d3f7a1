import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { openSqliteDatabase } from "../../store/database.js";
import { cli } from "../support/cli.js";

/**
 * `serve --role` as typed on the embedded default (SQLite): a fleet's split roles need
 * PostgreSQL, so they are refused before anything is written, and a mistyped role or worker
 * count is a usage mistake.
 */
describe("serve --role on SQLite", { timeout: 120_000 }, () => {
  let dataDir = "";
  afterEach(async () => {
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it("refuses a split role naming DATABASE_URL, before the first start seeds anything", async () => {
    dataDir = await mkdtemp(join(tmpdir(), "serve-role-"));
    const refused = await cli(["serve", "--role", "worker", "--port", "0", "--data", dataDir], {
      killAfterMs: 60_000,
    });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(
      'error [VALIDATION_FAILED]: role: "worker" needs a fleet\'s shared queue, which runs on PostgreSQL: set DATABASE_URL',
    );
    expect(refused.stdout).not.toContain("serving on");
    // No demo user was made whose first token nobody saw.
    const database = await openSqliteDatabase(join(dataDir, "agents.sqlite"));
    try {
      const users = await database.db.selectFrom("users").select("uid").execute();
      expect(users).toEqual([]);
    } finally {
      await database.close();
    }

    const mistyped = await cli(["serve", "--workers", "0", "--data", dataDir], {
      killAfterMs: 60_000,
    });
    expect(mistyped.code).toBe(2);
    expect(mistyped.stderr).toContain(
      'error: --workers: "0" is not a number of runs at once: use a whole number from 1 to 1000',
    );
  });
});
