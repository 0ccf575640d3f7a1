import { join } from "node:path";
import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";
import { ErrorCode, SubagentGraphError } from "../errors.js";
import { prepareDataDir } from "../store/data-dir.js";
import { type Database, openDatabase } from "../store/database.js";
import { type ChannelStorage, requestedStorage, resolveChannelStorage } from "./channel-storage.js";
import type { ChannelReducers } from "./delta-read.js";
import { borrowSaver, type ManagedSaver, openSaver } from "./savers.js";

/** Where a runtime keeps agents and checkpoints (the storage options of `createRuntime`). */
export interface StorageOptions {
  /** The data folder, resolved. */
  dataDir: string;
  env: NodeJS.ProcessEnv;
  /** A SQLite path, `":memory:"`, a `postgres://` URL or an open database the caller owns. */
  database?: string | Database;
  checkpointer?: "sqlite" | "memory" | "postgres" | "host" | BaseCheckpointSaver;
  /** The state channels our savers store by reference in `Send` packets (see `send-refs.ts`). */
  sendRefReducers?: ChannelReducers;
  /** The runtime's `checkpointStorage` option, checked before anything opens. */
  checkpointStorage?: unknown;
  /** The runtime's `deltaSnapshotFrequency` option, checked with it. */
  deltaSnapshotFrequency?: unknown;
}

/** The opened store and saver; `close` closes what was opened here, not what was lent. */
export interface Storage {
  database: Database;
  saver: BaseCheckpointSaver;
  /**
   * Graphs are hosted by a server that brings its own saver (`checkpointer: "host"`); `saver` is
   * then ours (SQLite in the data folder, PostgreSQL with a URL) for background tasks' children.
   */
  hosted: boolean;
  /**
   * How graphs store their channels: the options' (or the environment's) choice, else the
   * saver's default (hosted graphs see the server's saver through the same packet compaction
   * as ours, `graphs/hosted-graph.ts`, so they take our savers' default too).
   */
  channelStorage: ChannelStorage;
  close(): Promise<void>;
}

/**
 * Opens the agent store and the checkpoint saver the options name: `DATABASE_URL` when set
 * (PostgreSQL for both unless `checkpointer` says otherwise), else SQLite files in the data
 * folder. Nothing stays open when either fails.
 */
export async function openStorage(options: StorageOptions): Promise<Storage> {
  const { dataDir, env } = options;
  const requested = requestedStorage(
    options.checkpointStorage,
    options.deltaSnapshotFrequency,
    env,
  );
  const ownsDatabase = typeof options.database !== "object";
  const databaseUrl = env.DATABASE_URL?.trim() || undefined;
  // SQLite files go into the data folder (the agent store unless a database is named, the
  // checkpoints with the sqlite saver): a folder that cannot be made or written fails here, with
  // one error naming it. A runtime that keeps nothing there makes it only when a file is written.
  const kind = options.checkpointer ?? (databaseUrl ? "postgres" : "sqlite");
  // A hosted runtime runs no main graph itself (the server lends its saver to those runs), but
  // the children of background tasks run here, later and outside the server's runs, so they
  // need a saver of ours: the one a runtime on the same data folder or database opens.
  const saverKind =
    kind === "host" ? (postgresUrlOf(databaseUrl, options.database) ? "postgres" : "sqlite") : kind;
  if ((options.database === undefined && databaseUrl === undefined) || saverKind === "sqlite") {
    prepareDataDir(dataDir);
  }
  const database =
    typeof options.database === "object"
      ? options.database
      : await openDatabase(options.database ?? databaseUrl ?? join(dataDir, "agents.sqlite"));
  let saver: ManagedSaver;
  try {
    saver =
      typeof saverKind === "object"
        ? borrowSaver(saverKind)
        : saverKind === "postgres"
          ? await openSaver(
              "postgres",
              postgresTarget(databaseUrl, options.database),
              options.sendRefReducers,
            )
          : openSaver(saverKind, join(dataDir, "checkpoints.sqlite"), options.sendRefReducers);
  } catch (error) {
    if (ownsDatabase) await database.close();
    throw error;
  }
  return {
    database,
    saver: saver.saver,
    hosted: kind === "host",
    channelStorage: resolveChannelStorage(requested, saver.saver),
    async close() {
      try {
        await saver.close();
      } finally {
        if (ownsDatabase) await database.close();
      }
    },
  };
}

/** `DATABASE_URL`, else the store's own `postgres://` URL, if either is set. */
function postgresUrlOf(
  databaseUrl: string | undefined,
  store: StorageOptions["database"],
): string | undefined {
  return (
    databaseUrl ??
    (typeof store === "string" && /^postgres(ql)?:\/\//.test(store) ? store : undefined)
  );
}

/** Where Postgres checkpoints go: `DATABASE_URL`, else the store's own `postgres://` URL. */
function postgresTarget(
  databaseUrl: string | undefined,
  store: StorageOptions["database"],
): string {
  const url = postgresUrlOf(databaseUrl, store);
  if (!url) {
    throw new SubagentGraphError(
      ErrorCode.Validation,
      'checkpointer "postgres" needs a PostgreSQL URL: set DATABASE_URL or pass database: "postgres://…"',
      { field: "checkpointer" },
    );
  }
  return url;
}
