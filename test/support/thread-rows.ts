import { execFileSync } from "node:child_process";
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MemorySaver } from "@langchain/langgraph-checkpoint";
import Database from "better-sqlite3";
import pg from "pg";
import { createRuntime, type Runtime, type RuntimeOptions } from "../../runtime.js";

/**
 * Rows per thread id of every table that has a `thread_id` column: table → thread → count.
 * Read straight from the database files (SQLite) or the database (PostgreSQL), so a test can
 * see what a runtime left behind whatever the saver's API says.
 */
export type ThreadRows = Record<string, Record<string, number>>;

/** A runtime on a database a test can also read directly, and that it can dispose of. */
export interface RuntimeOnDatabase {
  kind: "memory" | "sqlite" | "postgres";
  runtime: Runtime;
  dataDir: string;
  /** Every table's rows per thread id (checkpoint tables and the agent store's). */
  threadRows(): Promise<ThreadRows>;
  /** Closes the runtime and removes its data dir. */
  dispose(): Promise<void>;
}

const quiet = { env: {}, warn: () => undefined } satisfies Partial<RuntimeOptions>;

/**
 * `createRuntime({ dataDir })`, the embedded default (SQLite agent store and checkpoints in the
 * data dir), in a fresh temp dir. `files` (name → path) are copied into the data dir first.
 */
export async function runtimeOnSqlite(
  options: { files?: Record<string, string>; runtime?: Partial<RuntimeOptions> } = {},
): Promise<RuntimeOnDatabase> {
  const dataDir = mkdtempSync(join(tmpdir(), "sg-rows-sqlite-"));
  for (const [name, from] of Object.entries(options.files ?? {})) {
    copyFileSync(from, join(dataDir, name));
  }
  let runtime: Runtime;
  try {
    runtime = await createRuntime({ dataDir, ...quiet, ...options.runtime });
  } catch (error) {
    rmSync(dataDir, { recursive: true, force: true });
    throw error;
  }
  return {
    kind: "sqlite",
    runtime,
    dataDir,
    threadRows: async () => {
      const rows: ThreadRows = {};
      for (const file of ["checkpoints.sqlite", "agents.sqlite"]) {
        const db = new Database(join(dataDir, file), { readonly: true, fileMustExist: true });
        try {
          const tables = db
            .prepare("SELECT name FROM sqlite_master WHERE type = 'table'")
            .all() as { name: string }[];
          for (const { name } of tables) {
            const columns = db.prepare(`PRAGMA table_info("${name}")`).all() as {
              name: string;
            }[];
            if (!columns.some((column) => column.name === "thread_id")) continue;
            const counts = db
              .prepare(`SELECT thread_id, count(*) AS n FROM "${name}" GROUP BY thread_id`)
              .all() as { thread_id: string; n: number }[];
            rows[name] = Object.fromEntries(counts.map((row) => [row.thread_id, Number(row.n)]));
          }
        } finally {
          db.close();
        }
      }
      return rows;
    },
    dispose: async () => {
      try {
        await runtime.close();
      } finally {
        rmSync(dataDir, { recursive: true, force: true });
      }
    },
  };
}

/**
 * A runtime on the in-memory saver (`checkpointer: "memory"`, SQLite agent store in a fresh
 * data dir). Its rows are the saver's own maps: `checkpoints` (per thread, every namespace) and
 * `writes`.
 */
export async function runtimeInMemory(
  options: { runtime?: Partial<RuntimeOptions> } = {},
): Promise<RuntimeOnDatabase> {
  const dataDir = mkdtempSync(join(tmpdir(), "sg-rows-memory-"));
  let runtime: Runtime;
  try {
    runtime = await createRuntime({
      dataDir,
      checkpointer: "memory",
      ...quiet,
      ...options.runtime,
    });
  } catch (error) {
    rmSync(dataDir, { recursive: true, force: true });
    throw error;
  }
  return {
    kind: "memory",
    runtime,
    dataDir,
    threadRows: async () => {
      const saver = runtime.checkpointer;
      if (!(saver instanceof MemorySaver)) throw new Error("not a MemorySaver");
      const checkpoints: Record<string, number> = {};
      for (const [threadId, namespaces] of Object.entries(saver.storage)) {
        const count = Object.values(namespaces).reduce(
          (sum, byId) => sum + Object.keys(byId).length,
          0,
        );
        if (count > 0) checkpoints[threadId] = count;
      }
      const writes: Record<string, number> = {};
      for (const key of Object.keys(saver.writes)) {
        const [threadId] = JSON.parse(key) as [string];
        writes[threadId] = (writes[threadId] ?? 0) + Object.keys(saver.writes[key] ?? {}).length;
      }
      return { checkpoints, writes };
    },
    dispose: async () => {
      try {
        await runtime.close();
      } finally {
        rmSync(dataDir, { recursive: true, force: true });
      }
    },
  };
}

/** Runs a plain-SQL dump (`pg_dump`'s default format, with `COPY … FROM stdin`) into `url`. */
export function restorePostgresDump(url: string, dumpFile: string): void {
  const bin = execFileSync("pg_config", ["--bindir"], { encoding: "utf8" }).trim();
  execFileSync(join(bin, "psql"), ["-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", url], {
    input: readFileSync(dumpFile),
    stdio: ["pipe", "pipe", "pipe"],
  });
}

/**
 * A runtime with its agent store and checkpoints on the PostgreSQL database `url`
 * (`database: url, checkpointer: "postgres"`), and a fresh data dir for its files.
 */
export async function runtimeOnPostgres(
  url: string,
  options: { runtime?: Partial<RuntimeOptions> } = {},
): Promise<RuntimeOnDatabase> {
  const dataDir = mkdtempSync(join(tmpdir(), "sg-rows-pg-"));
  let runtime: Runtime;
  try {
    runtime = await createRuntime({
      dataDir,
      database: url,
      checkpointer: "postgres",
      ...quiet,
      ...options.runtime,
    });
  } catch (error) {
    rmSync(dataDir, { recursive: true, force: true });
    throw error;
  }
  return {
    kind: "postgres",
    runtime,
    dataDir,
    threadRows: async () => {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        const tables = await client.query<{ table_name: string }>(
          "SELECT table_name FROM information_schema.columns WHERE table_schema = 'public' AND column_name = 'thread_id'",
        );
        const rows: ThreadRows = {};
        for (const { table_name: name } of tables.rows) {
          const counts = await client.query<{ thread_id: string; n: string }>(
            `SELECT thread_id, count(*) AS n FROM "${name}" GROUP BY thread_id`,
          );
          rows[name] = Object.fromEntries(counts.rows.map((row) => [row.thread_id, Number(row.n)]));
        }
        return rows;
      } finally {
        await client.end();
      }
    },
    dispose: async () => {
      try {
        await runtime.close();
      } finally {
        rmSync(dataDir, { recursive: true, force: true });
      }
    },
  };
}

/** The rows of `rows` whose thread id `belongs` accepts: table → thread → count (empty tables left out). */
export function rowsOf(rows: ThreadRows, belongs: (threadId: string) => boolean): ThreadRows {
  const picked: ThreadRows = {};
  for (const [table, counts] of Object.entries(rows)) {
    const kept = Object.entries(counts).filter(([threadId]) => belongs(threadId));
    if (kept.length > 0) picked[table] = Object.fromEntries(kept);
  }
  return picked;
}
