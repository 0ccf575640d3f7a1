/**
 * A process that starts a runtime on a PostgreSQL database when told to, for the concurrent
 * first-start test (`test/store/concurrent-start.postgres.int.test.ts`):
 *
 *   fork(<this file, see test/support/node-entry.ts>)
 *
 * Each IPC message `{ round, url }` makes it run `createRuntime` with `DATABASE_URL=url` (the
 * store's migrations and the checkpoint saver's setup, as `npm start` does), close it, and answer
 * `{ round, ok: true }` or `{ round, ok: false, error }`. Several such processes told at once
 * start on one database truly concurrently, which a single process's pools do not reproduce.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createRuntime } from "../../runtime.js";

/** What the test sends. */
export interface StartRequest {
  round: number;
  url: string;
}

/** What the worker answers. */
export type StartAnswer = { round: number; ok: true } | { round: number; ok: false; error: string };

async function startOnce({ round, url }: StartRequest): Promise<StartAnswer> {
  const dataDir = await mkdtemp(join(tmpdir(), "start-worker-"));
  try {
    const runtime = await createRuntime({ dataDir, env: { DATABASE_URL: url } });
    await runtime.close();
    return { round, ok: true };
  } catch (error) {
    return { round, ok: false, error: error instanceof Error ? error.message : String(error) };
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
}

process.on("message", (message: StartRequest) => {
  void startOnce(message).then((answer) => process.send?.(answer));
});
process.send?.({ ready: true });
