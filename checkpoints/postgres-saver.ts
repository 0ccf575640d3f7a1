import { randomInt } from "node:crypto";
import type { RunnableConfig } from "@langchain/core/runnables";
import {
  type ChannelVersions,
  type Checkpoint,
  type CheckpointMetadata,
  type DeltaChannelHistory,
  type PendingWrite,
  type SerializerProtocol,
  WRITES_IDX_MAP,
} from "@langchain/langgraph-checkpoint";
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import pg from "pg";
import { ErrorCode, SubagentGraphError } from "../errors.js";
import { withSchemaLock } from "../store/schema-lock.js";
import { survivePoolClientErrors } from "../util/pg-client-errors.js";
import {
  DeltaHistoryBuilder,
  type DeltaHistoryRequest,
  MAX_DELTA_CHANNELS,
  requestedChannels,
} from "./delta-history.js";
import { putCheckpointSql, putWritesSql } from "./postgres-put-sql.js";

/** Digits of the counter part of a version (as the Python saver: `f"{counter:032}"`). */
const COUNTER_DIGITS = 32;
/** Digits of the random part of a version. */
const RANDOM_DIGITS = 16;
const VERSION_PATTERN = new RegExp(`^(\\d{1,${COUNTER_DIGITS}})(?:\\.\\d*)?$`);

/** `RANDOM_DIGITS` random decimal digits (two 8-digit draws: `randomInt` caps its range at 2^48). */
function randomDigits(): string {
  const half = RANDOM_DIGITS / 2;
  const draw = () => String(randomInt(0, 10 ** half)).padStart(half, "0");
  return `${draw()}${draw()}`;
}

/**
 * The next channel version after `current`, unique per call:
 * `<counter + 1, 32 digits zero-padded>.<16 random digits>`, e.g.
 * `00000000000000000000000000000003.0417725819243365`.
 *
 * Ordering: every version has the same shape (32 digits, a dot, 16 digits), so comparing two of
 * them as strings, with `>` (what LangGraph's `algo.ts` does on channel versions) or
 * `localeCompare` (what `maxChannelVersion` does), compares the counters first, digit by digit,
 * and the result is strictly greater than `current` whatever the random part is. Every version is
 * also greater than `""`, LangGraph's "never seen" version for string versions.
 *
 * `current` may be a number (a thread written by the stock saver, whose versions are 1, 2, 3…):
 * the counter continues from it. Mixing both kinds in one thread is not recommended:
 * `maxChannelVersion` compares a number and a string as strings ("5" > "000…"), so use a fresh
 * database (or threads) for this saver.
 */
export function nextForkSafeVersion(current: string | number | undefined): string {
  let counter: bigint;
  if (current === undefined) counter = 0n;
  else if (typeof current === "number") {
    if (!Number.isSafeInteger(current) || current < 0) throw foreignVersion(String(current));
    counter = BigInt(current);
  } else {
    const match = VERSION_PATTERN.exec(current);
    if (match?.[1] === undefined) throw foreignVersion(`"${current}"`);
    counter = BigInt(match[1]);
  }
  const next = (counter + 1n).toString();
  if (next.length > COUNTER_DIGITS) {
    // 10^32 writes to one channel: unreachable unless a stored version was tampered with.
    throw new SubagentGraphError(
      ErrorCode.Internal,
      `ForkSafePostgresSaver: channel version counter overflow after ${String(current)}`,
    );
  }
  return `${next.padStart(COUNTER_DIGITS, "0")}.${randomDigits()}`;
}

/** A stored channel version neither this saver nor the stock one (1, 2, 3…) writes. */
function foreignVersion(shown: string): SubagentGraphError {
  return new SubagentGraphError(
    ErrorCode.CheckpointIncompatible,
    `ForkSafePostgresSaver: unexpected channel version ${shown} in a stored checkpoint (this saver writes "<32-digit counter>.<16 digits>", the stock saver 1, 2, 3…): another writer shares the checkpoint tables; give this saver a database or schema of its own`,
  );
}

/** One row of {@link deltaHistorySql}: a write of a walked channel, or a channel's seed. */
interface DeltaHistoryRow {
  /** 0: a write; 1: the stored value (seed) of `channel`. */
  kind: 0 | 1;
  task_id: string | null;
  channel: string;
  type: string | null;
  blob: Buffer | null;
}

/**
 * The one query behind {@link ForkSafePostgresSaver.getDeltaChannelHistory}. Parameters: `$1`
 * thread id, `$2` namespace, `$3` channel names, `$4` their bits, `$5` the mask of all of them,
 * `$6` the checkpoint id (when `byId`).
 *
 * `chain` walks `parent_checkpoint_id` up from the requested checkpoint's parent, one row per
 * ancestor, carrying `open` (the channels still without a seed when the walk reaches it) and
 * `seeds` (those of them it stores a value for). An ancestor stores a value for a channel when
 * the blob its `channel_versions` names is not the stock saver's `empty` marker, the test the
 * stock `getTuple` applies when it loads `channel_values`. The walk stops once every channel has
 * its seed, or at the root. Writes come from every chain row for the channels still open there,
 * including those the row seeds (the seed is the value before that ancestor's writes, as in the
 * base class).
 *
 * Rows come back in replay order: writes by ancestor from the oldest, then by
 * `(task_path, task_id, idx)`, the order of this saver's `getTuple` (see {@link TASK_PATH_ORDER}).
 * Channel versions play no part in the order, so this saver's random version suffixes cannot
 * reorder anything; they only select the blob of each ancestor's own version.
 */
function deltaHistorySql(schema: string, byId: boolean): string {
  const table = (name: string) => `"${schema}".${name}`;
  // Each ancestor and each blob is looked up through a LATERAL subquery with `OFFSET 0`, which
  // the planner cannot pull up into a join: it is then one probe of the table's primary key.
  // As joins, on tables without statistics (a new database), the planner scanned all of the
  // thread's checkpoints and blobs once per ancestor: 114 ms for a 30-turn thread, growing with
  // the square of its length.
  const checkpointOf = (id: string) => `LATERAL (
        SELECT k.checkpoint_id, k.parent_checkpoint_id, k.checkpoint FROM ${table("checkpoints")} AS k
        WHERE k.thread_id = $1 AND k.checkpoint_ns = $2 AND k.checkpoint_id = ${id}
        OFFSET 0
      )`;
  const blobOf = (channel: string, version: string, only = "") => `LATERAL (
        SELECT b.type, b.blob FROM ${table("checkpoint_blobs")} AS b
        WHERE b.thread_id = $1 AND b.checkpoint_ns = $2 AND b.channel = ${channel}
          AND b.version = ${version} ${only}
        OFFSET 0
      )`;
  const present = (versions: string) => `(
        SELECT coalesce(bit_or(1::bigint << r.bit), 0)
        FROM requested AS r
        CROSS JOIN ${blobOf("r.name", `${versions} ->> r.name`, "AND b.type <> 'empty'")} AS bl
      )`;
  const target = byId
    ? "WHERE thread_id = $1 AND checkpoint_ns = $2 AND checkpoint_id = $6"
    : "WHERE thread_id = $1 AND checkpoint_ns = $2 ORDER BY checkpoint_id DESC LIMIT 1";
  return `
WITH RECURSIVE
  requested(name, bit) AS (SELECT * FROM unnest($3::text[], $4::int[])),
  target AS (SELECT parent_checkpoint_id FROM ${table("checkpoints")} ${target}),
  chain AS (
    SELECT c.checkpoint_id, c.parent_checkpoint_id, c.checkpoint -> 'channel_versions' AS versions,
      1 AS depth, $5::bigint AS open,
      ${present("c.checkpoint -> 'channel_versions'")} & $5::bigint AS seeds
    FROM target
    CROSS JOIN ${checkpointOf("target.parent_checkpoint_id")} AS c
    UNION ALL
    SELECT c.checkpoint_id, c.parent_checkpoint_id, c.checkpoint -> 'channel_versions',
      chain.depth + 1, chain.open & ~chain.seeds,
      ${present("c.checkpoint -> 'channel_versions'")} & (chain.open & ~chain.seeds)
    FROM chain
    CROSS JOIN ${checkpointOf("chain.parent_checkpoint_id")} AS c
    WHERE chain.open & ~chain.seeds <> 0
  )
SELECT 0 AS kind, chain.depth, cw.task_path COLLATE "C" AS task_path, cw.task_id, cw.idx, cw.channel, cw.type, cw.blob
FROM chain
JOIN ${table("checkpoint_writes")} AS cw
  ON cw.thread_id = $1 AND cw.checkpoint_ns = $2 AND cw.checkpoint_id = chain.checkpoint_id
JOIN requested AS r ON r.name = cw.channel
WHERE (chain.open >> r.bit) & 1 = 1
UNION ALL
SELECT 1, chain.depth, NULL, NULL, NULL, r.name, bl.type, bl.blob
FROM chain
JOIN requested AS r ON (chain.seeds >> r.bit) & 1 = 1
CROSS JOIN ${blobOf("r.name", "chain.versions ->> r.name")} AS bl
ORDER BY kind, depth DESC, task_path, task_id, idx`;
}

/** How the stock `getTuple` query orders a checkpoint's pending writes. */
const STOCK_WRITES_ORDER = "order by cw.task_id, cw.idx";
/**
 * How this saver orders them: by task path first, the order live execution applies a
 * superstep's writes in (compared by code point, as upstream's `compareWritesSortKeys`, hence
 * `COLLATE "C"`: byte order of UTF-8 is code point order).
 */
const TASK_PATH_ORDER = 'order by cw.task_path COLLATE "C", cw.task_id, cw.idx';

/** The stock saver's SQL statements, which the base class keeps private. */
interface StockStatements {
  SQL_STATEMENTS: { SELECT_SQL: string };
}

/** Pool settings of {@link ForkSafePostgresSaver.open}. */
export interface ForkSafePostgresSaverOpenOptions {
  /** Most connections the pool opens. Default 10. */
  max?: number;
  /** Postgres schema of the checkpoint tables. Default `public`. */
  schema?: string;
  /** Called with errors of idle pool connections (a restarted server, a dropped link). */
  onError?: (error: Error) => void;
}

/**
 * The stock `PostgresSaver` (`@langchain/langgraph-checkpoint-postgres` 1.0.5) with channel
 * versions that are unique per write, so time-travel forks keep their edits.
 *
 * **The bug (langgraphjs#1812).** The stock saver inherits `getNextVersion` from
 * `BaseCheckpointSaver`: versions are the integers 1, 2, 3… counted from the checkpoint's
 * highest version. It stores each channel value once, in `checkpoint_blobs` keyed by
 * `(thread_id, checkpoint_ns, channel, version)`, inserted with `ON CONFLICT DO NOTHING`, and a
 * checkpoint only lists `channel → version`. An `updateState` on an OLDER checkpoint counts from
 * that checkpoint's versions, so the fork's new value gets a version the original branch already
 * used (say `messages` → 3); its blob insert conflicts and is silently dropped, and the fork's
 * checkpoint then reads the ORIGINAL branch's value for version 3. The edit is lost.
 *
 * **The fix.** {@link nextForkSafeVersion}: `<counter, 32 digits>.<16 random digits>`, as the
 * Python saver does. Two branches growing from the same checkpoint share the counter but not the
 * random part, so each write has its own blob row; fixed width keeps string comparison (which
 * LangGraph uses on versions) ordered by the counter.
 *
 * **Writes in the order they were applied.** Tasks of one superstep (parallel tool calls,
 * parallel subagents) write the same channel; live execution applies their writes by task
 * path, and a `DeltaChannel` rebuilt from stored writes must replay them in that order or it
 * differs from the run's (two tool results swap places). The stock saver drops the task path
 * `putWrites` is given and lists writes by task id. This saver stores it
 * (`checkpoint_writes.task_path`, added by `setup`; rows written before have `''`, which sorts
 * first, as upstream specifies for writes without a path) and orders `getTuple`'s and `list`'s
 * pending writes by `(task_path, task_id, idx)`.
 *
 * **One query per `DeltaChannel` read**: see {@link getDeltaChannelHistory}.
 *
 * `PostgresSaver.fromConnString` always builds the base class, so build this one from a
 * `pg.Pool` (or with {@link ForkSafePostgresSaver.open}), and call `setup()` before use
 * (`open` does).
 */
export class ForkSafePostgresSaver extends PostgresSaver {
  /** The pool (the base class keeps its own reference private). */
  readonly connections: pg.Pool;
  /** The Postgres schema of the checkpoint tables (the base class keeps its options private). */
  readonly schemaName: string;
  private ended: Promise<void> | undefined;

  constructor(pool: pg.Pool, serde?: SerializerProtocol, options?: { schema?: string }) {
    super(pool, serde, options);
    this.connections = pool;
    this.schemaName = options?.schema ?? "public";
    // Both `getTuple` and `list` read with SELECT_SQL.
    const statements = (this as unknown as StockStatements).SQL_STATEMENTS;
    const found = statements.SELECT_SQL.split(STOCK_WRITES_ORDER).length - 1;
    if (found !== 1) {
      throw new SubagentGraphError(
        ErrorCode.Internal,
        `ForkSafePostgresSaver: the stock PostgresSaver's SELECT_SQL orders pending writes ${found} times by "${STOCK_WRITES_ORDER}" where once was expected; @langchain/langgraph-checkpoint-postgres changed, update checkpoints/postgres-saver.ts for it`,
      );
    }
    statements.SELECT_SQL = statements.SELECT_SQL.replace(STOCK_WRITES_ORDER, TASK_PATH_ORDER);
  }

  /**
   * The ids of the threads with checkpoints whose id starts with `prefix` (a thread's children,
   * `<thread>_sub_…`, for deleting them with it). A scan of the checkpoint table: meant for rare
   * operations such as deleting a thread.
   */
  async threadIdsStartingWith(prefix: string): Promise<string[]> {
    // The table name is written as the base class writes it (`sql.ts` of the stock saver).
    const result = await this.connections.query<{ thread_id: string }>(
      `SELECT DISTINCT thread_id FROM "${this.schemaName}".checkpoints WHERE starts_with(thread_id, $1)`,
      [prefix],
    );
    return result.rows.map((row) => row.thread_id);
  }

  /**
   * A saver on a new pool to `url`, with an `error` listener on the pool (an idle connection
   * dying must not crash the process) and its tables set up. Close it with {@link close}.
   */
  static async open(
    url: string,
    options: ForkSafePostgresSaverOpenOptions = {},
  ): Promise<ForkSafePostgresSaver> {
    return ForkSafePostgresSaver.openWith(
      url,
      options,
      (pool, schema) => new ForkSafePostgresSaver(pool, undefined, schema),
    );
  }

  /** {@link open} with the saver built by `make` (a subclass's `open` passes its constructor). */
  protected static async openWith<T extends ForkSafePostgresSaver>(
    url: string,
    options: ForkSafePostgresSaverOpenOptions,
    make: (pool: pg.Pool, schema: { schema?: string } | undefined) => T,
  ): Promise<T> {
    const pool = new pg.Pool({
      connectionString: url,
      max: options.max ?? 10,
      idleTimeoutMillis: 30_000,
      connectionTimeoutMillis: 10_000,
    });
    const onError =
      options.onError ??
      ((error: Error) => console.warn(`[subagent-graph] postgres pool error: ${error.message}`));
    pool.on("error", onError);
    survivePoolClientErrors(pool);
    const saver = make(pool, options.schema ? { schema: options.schema } : undefined);
    try {
      await saver.setup();
    } catch (error) {
      await saver.close();
      throw error;
    }
    return saver;
  }

  /**
   * The stock setup (its schema, tables and numbered migrations), under the schema lock every
   * process of this project takes for schema steps (`store/schema-lock.ts`). The stock setup
   * takes no lock: processes starting at once on a fresh database both insert the same
   * `checkpoint_migrations` row or create the same table, and one of them fails to start.
   */
  override async setup(): Promise<void> {
    await withSchemaLock(this.connections.options, async () => {
      await super.setup();
      // Outside the stock numbered migrations, whose positions are upstream's to add to.
      // Python's saver added the same column (name and definition) as its migration 9, an
      // ALTER without IF NOT EXISTS: if the JS saver ever ships that migration, it fails on a
      // database this saver set up, so mark it applied here before upgrading that package.
      await this.connections.query(
        `ALTER TABLE "${this.schemaName}".checkpoint_writes ADD COLUMN IF NOT EXISTS task_path TEXT NOT NULL DEFAULT ''`,
      );
    });
  }

  /**
   * The stock `put` (same rows, same rules) in one statement instead of a transaction of one
   * statement per blob: see `postgres-put-sql.ts`.
   */
  override async put(
    config: RunnableConfig,
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
    newVersions: ChannelVersions,
  ): Promise<RunnableConfig> {
    if (config.configurable === undefined) {
      throw new SubagentGraphError(
        ErrorCode.Validation,
        `Missing "configurable" field in "config" param: pass { configurable: { thread_id } }`,
        { field: "config.configurable" },
      );
    }
    const { thread_id, checkpoint_ns = "", checkpoint_id } = config.configurable;
    const [blobs, serializedMetadata] = await Promise.all([
      this._dumpBlobs(thread_id, checkpoint_ns, checkpoint.channel_values, newVersions),
      this._dumpMetadata(metadata),
    ]);
    const params: unknown[] = [
      thread_id,
      checkpoint_ns,
      checkpoint.id,
      checkpoint_id,
      this._dumpCheckpoint(checkpoint),
      serializedMetadata,
    ];
    for (const [, , channel, version, type, blob] of blobs) {
      params.push(channel, version, type, blob ?? null);
    }
    await this.connections.query(putCheckpointSql(this.schemaName, blobs.length), params);
    return { configurable: { thread_id, checkpoint_ns, checkpoint_id: checkpoint.id } };
  }

  /**
   * The stock `putWrites` (same rows, same rule: special writes such as errors and interrupts
   * replace, others keep the first) that also stores `taskPath`, the sort key live execution
   * applied the task's writes by. One statement for all of the task's writes (see
   * `postgres-put-sql.ts`) where the stock one sends a transaction of one statement per write.
   */
  override async putWrites(
    config: RunnableConfig,
    writes: PendingWrite[],
    taskId: string,
    taskPath = "",
  ): Promise<void> {
    if (writes.length === 0) return;
    const { thread_id, checkpoint_ns, checkpoint_id } = config.configurable ?? {};
    const replace = writes.every(([channel]) => channel in WRITES_IDX_MAP);
    const rows = await Promise.all(
      writes.map(async ([channel, value], idx) => {
        const [type, serialized] = await this.serde.dumpsTyped(value);
        return [
          thread_id,
          checkpoint_ns,
          checkpoint_id,
          taskId,
          taskPath,
          WRITES_IDX_MAP[channel] ?? idx,
          channel,
          type,
          new Uint8Array(serialized),
        ];
      }),
    );
    // Rows sharing an index (two writes to one special channel) would conflict within the
    // statement; one statement per write kept the last when replacing, the first otherwise.
    const byIndex = new Map<unknown, unknown[]>();
    for (const row of replace ? rows : [...rows].reverse()) byIndex.set(row[5], row);
    const kept = [...byIndex.values()];
    await this.connections.query(putWritesSql(this.schemaName, kept.length, replace), kept.flat());
  }

  /**
   * A unique, string-comparable, increasing version; see {@link nextForkSafeVersion}. The base
   * class types versions as numbers, but LangGraph and this saver's SQL accept strings
   * (`ChannelVersion` is `number | string`; blob versions are `TEXT`), hence the cast.
   */
  override getNextVersion(current: number | undefined): number {
    return nextForkSafeVersion(current as string | number | undefined) as unknown as number;
  }

  /**
   * A `DeltaChannel`'s history in ONE query (see {@link deltaHistorySql}) instead of the base
   * class's `getTuple` per ancestor: same result, exactly (writes by ancestor from the oldest,
   * then by task path, task id and index as `getTuple` lists them; the nearest stored value as the seed;
   * only the requested checkpoint's own ancestors, so a fork reads its branch). Falls back to
   * the base walk for more than {@link MAX_DELTA_CHANNELS} channels at once.
   */
  override async getDeltaChannelHistory(
    options: DeltaHistoryRequest,
  ): Promise<Record<string, DeltaChannelHistory>> {
    const { config, channels } = options;
    if (channels.length === 0) return {};
    const requested = requestedChannels(channels);
    if (requested.length > MAX_DELTA_CHANNELS) return super.getDeltaChannelHistory(options);
    const checkpointId: unknown = config.configurable?.checkpoint_id;
    const byId = typeof checkpointId === "string" && checkpointId !== "";
    const everything = (1n << BigInt(requested.length)) - 1n;
    const params: unknown[] = [
      config.configurable?.thread_id ?? null,
      config.configurable?.checkpoint_ns ?? "",
      requested.map(({ name }) => name),
      requested.map(({ bit }) => bit),
      everything.toString(),
    ];
    if (byId) params.push(checkpointId);
    const { rows } = await this.connections.query<DeltaHistoryRow>(
      deltaHistorySql(this.schemaName, byId),
      params,
    );
    const history = new DeltaHistoryBuilder(channels);
    for (const row of rows) {
      // Deserialized as the stock `getTuple` does (`_loadWrites`, `_loadBlobs`).
      const value: unknown =
        row.blob === null ? undefined : await this.serde.loadsTyped(row.type ?? "json", row.blob);
      if (row.kind === 1) history.setSeed(row.channel, value);
      else if (row.task_id !== null) history.addWrite([row.task_id, row.channel, value]);
    }
    return history.build();
  }

  /** Ends the pool. Idempotent (a second `pool.end()` would throw). */
  override end(): Promise<void> {
    this.ended ??= this.connections.end();
    return this.ended;
  }

  /** Same as {@link end}. */
  close(): Promise<void> {
    return this.end();
  }
}
