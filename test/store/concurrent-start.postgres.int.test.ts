/**
 * Several processes starting at once on a fresh PostgreSQL database all come up: every schema
 * step (the store's migrations and the checkpoint saver's own tables) runs under one advisory
 * lock (`store/schema-lock.ts`). Without it about one start in four failed with a duplicate key
 * in `checkpoint_migrations` or `pg_type`.
 */
import { type ChildProcess, fork } from "node:child_process";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { nodeEntry } from "../support/node-entry.js";
import { createTestDatabase } from "../support/postgres-cluster.js";
import type { StartAnswer, StartRequest } from "../support/start-worker.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const PROCESSES = 5;
const ROUNDS = 20;

/** A worker process and the answers it sent, by round. */
interface Starter {
  child: ChildProcess;
  answers: Map<number, StartAnswer>;
  exited: Promise<unknown>;
}

function startWorker(): Promise<Starter> {
  // `fork` takes the script apart from node's own arguments (tsx's loader, outside vitest).
  const entry = nodeEntry("test/support/start-worker.ts");
  const child = fork(entry.at(-1) ?? "", {
    cwd: ROOT,
    execArgv: entry.slice(0, -1),
    // Nothing of the test's environment (a DATABASE_URL, model keys) leaks into the starts.
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "" },
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  const answers = new Map<number, StartAnswer>();
  const exited = new Promise((resolve) => child.on("exit", resolve));
  return new Promise((resolve, reject) => {
    child.on("message", (message: StartAnswer | { ready: true }) => {
      if ("ready" in message) resolve({ child, answers, exited });
      else answers.set(message.round, message);
    });
    child.on("exit", (code) =>
      reject(new Error(`start worker exited (${code}) before it was ready`)),
    );
  });
}

describe("concurrent first starts on one PostgreSQL database", { timeout: 120_000 }, () => {
  const clusterUrl = inject("postgresUrl");
  let starters: Starter[] = [];

  beforeAll(async () => {
    starters = await Promise.all(Array.from({ length: PROCESSES }, startWorker));
  });
  afterAll(async () => {
    for (const starter of starters) starter.child.kill();
    await Promise.all(starters.map((starter) => starter.exited));
  });

  it(`${PROCESSES} processes starting at once on a fresh database all succeed, ${ROUNDS} times`, async () => {
    const failures: string[] = [];
    for (let round = 0; round < ROUNDS; round += 1) {
      const url = await createTestDatabase(clusterUrl, "start");
      const request: StartRequest = { round, url };
      // The same message to every process at once: they race through migrations and setup.
      for (const starter of starters) starter.child.send(request);
      const deadline = Date.now() + 30_000;
      while (starters.some((starter) => !starter.answers.has(round)) && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      for (const [index, starter] of starters.entries()) {
        const answer = starter.answers.get(round);
        if (answer === undefined) failures.push(`round ${round}, process ${index}: no answer`);
        else if (!answer.ok) failures.push(`round ${round}, process ${index}: ${answer.error}`);
      }
      // Every schema step ran once: the saver's migration list has no gap and no repeat.
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        const versions = await client.query<{ v: number }>(
          "select v from checkpoint_migrations order by v",
        );
        const numbers = versions.rows.map((row) => row.v);
        expect(numbers).toEqual(numbers.map((_, index) => index));
      } finally {
        await client.end();
      }
    }
    expect(failures).toEqual([]);
  });
});
