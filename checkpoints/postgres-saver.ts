import { randomInt } from "node:crypto";
import type { SerializerProtocol } from "@langchain/langgraph-checkpoint";
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import pg from "pg";
import { ErrorCode, SubagentGraphError } from "../errors.js";
import { withSchemaLock } from "../store/schema-lock.js";

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
    const saver = new ForkSafePostgresSaver(
      pool,
      undefined,
      options.schema ? { schema: options.schema } : undefined,
    );
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
    await withSchemaLock(this.connections.options, () => super.setup());
  }

  /**
   * A unique, string-comparable, increasing version; see {@link nextForkSafeVersion}. The base
   * class types versions as numbers, but LangGraph and this saver's SQL accept strings
   * (`ChannelVersion` is `number | string`; blob versions are `TEXT`), hence the cast.
   */
  override getNextVersion(current: number | undefined): number {
    return nextForkSafeVersion(current as string | number | undefined) as unknown as number;
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
