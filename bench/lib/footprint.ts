import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { type BaseCheckpointSaver, MemorySaver } from "@langchain/langgraph-checkpoint";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import pg from "pg";
import type { OurSystem } from "./systems.js";

/** Rows and payload bytes of one part of the checkpoints. */
export interface Part {
  rows: number;
  bytes: number;
}

/**
 * What a saver holds, split into the conversation's own checkpoints (`parent`: its thread, root
 * namespace) and everything else (`child`: our child threads, or Deep Agents' subgraph
 * namespaces). `bytes` are payload bytes (serialized checkpoints, metadata, blobs and writes);
 * `storeBytes` is what the storage takes: SQLite's database size (pages × page size, after a WAL
 * checkpoint), PostgreSQL's `pg_total_relation_size` of the checkpoint tables, or for the
 * memory saver the same payload bytes.
 */
export interface Footprint {
  parent: Part;
  child: Part;
  storeBytes: number;
}

/** Measures a saver's footprint; `threadId` is the conversation's thread. */
export type FootprintReader = (threadId: string) => Promise<Footprint>;

/**
 * A reader for `saver`, the saver of `system` or its `stockSaver` (which on the memory saver is
 * a store of its own); close it with `close()`.
 */
export function footprintReader(
  system: OurSystem,
  saver: BaseCheckpointSaver = system.saver,
): {
  read: FootprintReader;
  close(): Promise<void>;
} {
  if (saver instanceof MemorySaver) {
    return { read: async (threadId) => memoryFootprint(saver, threadId), close: async () => {} };
  }
  if (saver instanceof SqliteSaver) {
    return { read: async (threadId) => sqliteFootprint(saver, threadId), close: async () => {} };
  }
  if (system.postgresUrl) {
    const pool = new pg.Pool({ connectionString: system.postgresUrl, max: 1 });
    return {
      read: (threadId) => postgresFootprint(pool, threadId),
      close: () => pool.end(),
    };
  }
  throw new Error(`no footprint reader for the ${system.saverName} saver`);
}

function memoryFootprint(saver: MemorySaver, threadId: string): Footprint {
  const parent: Part = { rows: 0, bytes: 0 };
  const child: Part = { rows: 0, bytes: 0 };
  for (const [thread, namespaces] of Object.entries(saver.storage)) {
    for (const [ns, checkpoints] of Object.entries(namespaces)) {
      const part = thread === threadId && ns === "" ? parent : child;
      for (const [checkpoint, metadata] of Object.values(checkpoints)) {
        part.rows += 1;
        part.bytes += checkpoint.byteLength + metadata.byteLength;
      }
    }
  }
  for (const [key, writes] of Object.entries(saver.writes)) {
    const [thread, ns] = JSON.parse(key) as [string, string, string];
    const part = thread === threadId && ns === "" ? parent : child;
    for (const write of Object.values(writes)) {
      part.rows += 1;
      part.bytes += write[2].byteLength;
    }
  }
  return { parent, child, storeBytes: parent.bytes + child.bytes };
}

function sqliteFootprint(saver: SqliteSaver, threadId: string): Footprint {
  const db = saver.db;
  const parts = (sql: string) => {
    const rows = db.prepare(sql).all(threadId) as { parent: number; n: number; b: number }[];
    const of = (isParent: number): Part => {
      const row = rows.find((r) => r.parent === isParent);
      return { rows: row?.n ?? 0, bytes: row?.b ?? 0 };
    };
    return { parent: of(1), child: of(0) };
  };
  const checkpoints = parts(
    `SELECT (thread_id = ? AND checkpoint_ns = '') AS parent, count(*) AS n,
            coalesce(sum(length(checkpoint) + coalesce(length(metadata), 0)), 0) AS b
       FROM checkpoints GROUP BY parent`,
  );
  const writes = parts(
    `SELECT (thread_id = ? AND checkpoint_ns = '') AS parent, count(*) AS n,
            coalesce(sum(coalesce(length(value), 0)), 0) AS b
       FROM writes GROUP BY parent`,
  );
  db.pragma("wal_checkpoint(TRUNCATE)");
  const pageCount = Number(db.pragma("page_count", { simple: true }));
  const pageSize = Number(db.pragma("page_size", { simple: true }));
  return {
    parent: add(checkpoints.parent, writes.parent),
    child: add(checkpoints.child, writes.child),
    storeBytes: pageCount * pageSize,
  };
}

async function postgresFootprint(pool: pg.Pool, threadId: string): Promise<Footprint> {
  const part = async (sql: string): Promise<{ parent: Part; child: Part }> => {
    const result = await pool.query<{ parent: boolean; n: string; b: string | null }>(sql, [
      threadId,
    ]);
    const of = (isParent: boolean): Part => {
      const row = result.rows.find((r) => r.parent === isParent);
      return { rows: Number(row?.n ?? 0), bytes: Number(row?.b ?? 0) };
    };
    return { parent: of(true), child: of(false) };
  };
  const checkpoints = await part(
    `SELECT (thread_id = $1 AND checkpoint_ns = '') AS parent, count(*) AS n,
            sum(pg_column_size(checkpoint) + pg_column_size(metadata)) AS b
       FROM checkpoints GROUP BY 1`,
  );
  const blobs = await part(
    `SELECT (thread_id = $1 AND checkpoint_ns = '') AS parent, count(*) AS n,
            sum(coalesce(length(blob), 0)) AS b
       FROM checkpoint_blobs GROUP BY 1`,
  );
  const writes = await part(
    `SELECT (thread_id = $1 AND checkpoint_ns = '') AS parent, count(*) AS n,
            sum(coalesce(length(blob), 0)) AS b
       FROM checkpoint_writes GROUP BY 1`,
  );
  const size = await pool.query<{ bytes: string }>(
    `SELECT pg_total_relation_size('checkpoints') + pg_total_relation_size('checkpoint_blobs')
          + pg_total_relation_size('checkpoint_writes') AS bytes`,
  );
  return {
    parent: add(add(checkpoints.parent, blobs.parent), writes.parent),
    child: add(add(checkpoints.child, blobs.child), writes.child),
    storeBytes: Number(size.rows[0]?.bytes ?? 0),
  };
}

function add(a: Part, b: Part): Part {
  return { rows: a.rows + b.rows, bytes: a.bytes + b.bytes };
}

/** Files and their total size under `dir` (0 when it does not exist). */
export function treeSize(dir: string): { files: number; dirs: number; bytes: number } {
  const total = { files: 0, dirs: 0, bytes: 0 };
  if (!existsSync(dir)) return total;
  const walk = (path: string) => {
    for (const entry of readdirSync(path, { withFileTypes: true })) {
      const full = join(path, entry.name);
      if (entry.isDirectory()) {
        total.dirs += 1;
        walk(full);
      } else if (entry.isFile()) {
        total.files += 1;
        total.bytes += statSync(full).size;
      }
    }
  };
  walk(dir);
  return total;
}
