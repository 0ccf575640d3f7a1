import type { RunnableConfig } from "@langchain/core/runnables";
import {
  type Checkpoint,
  type DeltaChannelHistory,
  type PendingWrite,
  WRITES_IDX_MAP,
} from "@langchain/langgraph-checkpoint";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import Database from "better-sqlite3";
import { ErrorCode, SubagentGraphError } from "../errors.js";
import {
  channelsInMask,
  DeltaHistoryBuilder,
  type DeltaHistoryRequest,
  MAX_DELTA_CHANNELS,
  type RequestedChannel,
  requestedChannels,
} from "./delta-history.js";

/** One row of {@link historySql}: a write of a walked channel, or a checkpoint holding seeds. */
interface HistoryRow {
  /** 0: a write; 1: a checkpoint that holds the seed of the channels in `mask`. */
  kind: 0 | 1;
  /** 1 for the requested checkpoint's parent, 2 for its grandparent, … */
  depth: number;
  task_id: string | null;
  task_path: string | null;
  idx: number | null;
  channel: string | null;
  type: string | null;
  /** A write's value as text (as the stock `getTuple` reads it), or the checkpoint blob. */
  value: string | Buffer | null;
  /** Seed rows: the channels this checkpoint seeds, as a decimal bit mask; NULL when unknown. */
  mask: string | null;
}

/**
 * The one query behind {@link DeltaHistorySqliteSaver.getDeltaChannelHistory}.
 *
 * `chain` walks `parent_checkpoint_id` up from the requested checkpoint's parent, one row per
 * ancestor, carrying `open` (the channels still without a seed when the walk reaches this
 * ancestor) and `seeds` (those of them this ancestor stores a value for). It stops once every
 * channel has its seed, or at the root. Writes are taken from every chain row for the channels
 * still open there, including those the row seeds: the seed is the value at that ancestor,
 * before its own writes, which is what the base class returns too.
 *
 * Whether an ancestor stores a channel is read from its checkpoint blob's `channel_values` keys
 * (`json_each`), which only works for blobs of type `json` (the default serializer's). For any
 * other type `seeds` is NULL, the walk stops there and the caller falls back to the generic walk.
 *
 * Rows come back in replay order: writes by ancestor from the oldest, then by
 * `(task_path, task_id, idx)`, the order live execution applies a superstep's writes in (and
 * the order this saver's `getTuple` lists them in).
 */
function historySql(channelCount: number, byId: boolean): string {
  const requested = Array.from({ length: channelCount }, (_, bit) => `(@c${bit}, ${bit})`).join(
    ", ",
  );
  const present = (alias: string) => `CASE WHEN coalesce(${alias}.type, 'json') = 'json' THEN (
        SELECT coalesce(sum(1 << r.bit), 0)
        FROM json_each(CAST(${alias}.checkpoint AS TEXT), '$.channel_values') AS j
        JOIN requested AS r ON r.name = j.key
      ) END`;
  const target = byId
    ? "WHERE thread_id = @thread AND checkpoint_ns = @ns AND checkpoint_id = @id"
    : "WHERE thread_id = @thread AND checkpoint_ns = @ns ORDER BY checkpoint_id DESC LIMIT 1";
  return `
WITH RECURSIVE
  requested(name, bit) AS (VALUES ${requested}),
  everything(mask) AS (SELECT sum(1 << bit) FROM requested),
  target(parent_checkpoint_id) AS (
    SELECT parent_checkpoint_id FROM checkpoints ${target}
  ),
  chain(checkpoint_id, parent_checkpoint_id, depth, open, seeds) AS (
    SELECT c.checkpoint_id, c.parent_checkpoint_id, 1, everything.mask,
      ${present("c")} & everything.mask
    FROM target, everything
    JOIN checkpoints AS c
      ON c.thread_id = @thread AND c.checkpoint_ns = @ns
      AND c.checkpoint_id = target.parent_checkpoint_id
    UNION ALL
    SELECT c.checkpoint_id, c.parent_checkpoint_id, chain.depth + 1, chain.open & ~chain.seeds,
      ${present("c")} & (chain.open & ~chain.seeds)
    FROM chain
    JOIN checkpoints AS c
      ON c.thread_id = @thread AND c.checkpoint_ns = @ns
      AND c.checkpoint_id = chain.parent_checkpoint_id
    WHERE chain.open & ~chain.seeds <> 0
  )
SELECT 0 AS kind, chain.depth AS depth, w.task_path AS task_path, w.task_id AS task_id,
  w.idx AS idx, w.channel AS channel, w.type AS type, CAST(w.value AS TEXT) AS value, NULL AS mask
FROM chain
JOIN writes AS w
  ON w.thread_id = @thread AND w.checkpoint_ns = @ns AND w.checkpoint_id = chain.checkpoint_id
JOIN requested AS r ON r.name = w.channel
WHERE (chain.open >> r.bit) & 1 = 1
UNION ALL
SELECT 1, chain.depth, NULL, NULL, NULL, NULL, c.type, c.checkpoint, CAST(chain.seeds AS TEXT)
FROM chain
JOIN checkpoints AS c
  ON c.thread_id = @thread AND c.checkpoint_ns = @ns AND c.checkpoint_id = chain.checkpoint_id
WHERE chain.seeds IS NULL OR chain.seeds <> 0
ORDER BY kind, depth DESC, task_path, task_id, idx`;
}

/**
 * The stock `getTuple` query with its pending writes ordered by `(task_path, task_id, idx)`.
 * The stock query aggregates them in whatever order SQLite scans the primary key, i.e. by task
 * id, which is not the order live execution applied them in.
 */
function orderPendingWrites(stockSql: string): string {
  const aggregate = /(CAST\(pw\.value AS TEXT\)\s*\))(\s*\))/g;
  const matches = stockSql.match(aggregate)?.length ?? 0;
  if (matches !== 1) {
    throw new SubagentGraphError(
      ErrorCode.Internal,
      `DeltaHistorySqliteSaver: the stock SqliteSaver's getTuple query has ${matches} pending-writes aggregates where 1 was expected; @langchain/langgraph-checkpoint-sqlite changed, update checkpoints/sqlite-saver.ts for it`,
    );
  }
  return stockSql.replace(aggregate, "$1 ORDER BY pw.task_path, pw.task_id, pw.idx$2");
}

/**
 * The stock `SqliteSaver` (`@langchain/langgraph-checkpoint-sqlite` 1.0.4) with two changes for
 * `DeltaChannel`s (channels stored as per-step writes plus periodic snapshots, rebuilt on read):
 *
 * **One query per read.** `getDeltaChannelHistory` reads a channel's history with a recursive
 * CTE up the parent chain of the requested checkpoint, joined with the writes of the requested
 * channels, stopping at each channel's nearest stored value (its snapshot, or a value written
 * before the channel became a delta channel). The base class answers the same with one
 * `getTuple` per ancestor: a read costs as many queries as steps since the last snapshot, each
 * deserializing a whole checkpoint and its writes. The result is the base class's walk over
 * this saver, exactly: same writes in the same order, same seeds, only the requested
 * checkpoint's own ancestors (a fork reads its branch).
 *
 * **Writes in the order they were applied.** Tasks of one superstep (parallel tool calls,
 * parallel subagents) write the same channel; live execution applies their writes by task
 * path, and a rebuilt channel must replay them in that order or it differs from the run's
 * (two tool results swap places). The stock saver drops the task path `putWrites` is given and
 * lists writes by task id. This saver stores it (`writes.task_path`, added by `setup`; rows
 * written before have `''`, which sorts first, as upstream specifies for writes without a path)
 * and orders `getTuple`'s pending writes and the delta history by `(task_path, task_id, idx)`.
 * (`list` keeps the stock order: nothing replays writes from it.)
 *
 * It falls back to the base walk for more than {@link MAX_DELTA_CHANNELS} channels at once and
 * for checkpoints stored by a serializer other than JSON, whose blobs SQL cannot look into.
 *
 * Everything else is the stock saver's, and the added column has a default, so databases
 * written by either class are read and written by both.
 *
 * @example
 * const saver = DeltaHistorySqliteSaver.fromConnString("./data/checkpoints.sqlite");
 * const graph = new StateGraph(new StateSchema({ messages: MessagesDeltaValue }))
 *   // …
 *   .compile({ checkpointer: saver });
 */
export class DeltaHistorySqliteSaver extends SqliteSaver {
  /** Prepared statements by channel count and whether a checkpoint id was given. */
  private readonly historyStatements = new Map<string, Database.Statement>();

  /** A saver on the SQLite file (or `:memory:`) at `path`; its tables are created on first use. */
  static override fromConnString(path: string): DeltaHistorySqliteSaver {
    return new DeltaHistorySqliteSaver(new Database(path));
  }

  /** The stock tables plus `writes.task_path`; the stock `getTuple` query with ordered writes. */
  protected override setup(): void {
    if (this.isSetup) return;
    super.setup();
    this.addTaskPathColumn();
    this.withCheckpoint = this.db.prepare(orderPendingWrites(this.withCheckpoint.source));
    this.withoutCheckpoint = this.db.prepare(orderPendingWrites(this.withoutCheckpoint.source));
  }

  private addTaskPathColumn(): void {
    const hasColumn = () =>
      (this.db.prepare("PRAGMA table_info(writes)").all() as { name: string }[]).some(
        (column) => column.name === "task_path",
      );
    if (hasColumn()) return;
    try {
      this.db.exec("ALTER TABLE writes ADD COLUMN task_path TEXT NOT NULL DEFAULT ''");
    } catch (error) {
      // Another process sharing the file added it between the check and the ALTER.
      if (!hasColumn()) throw error;
    }
  }

  /**
   * The stock `putWrites` (same keys, same replace-or-ignore rule: special writes such as
   * errors and interrupts replace, others keep the first) that also stores `taskPath`, the sort
   * key live execution applied the task's writes by.
   */
  override async putWrites(
    config: RunnableConfig,
    writes: PendingWrite[],
    taskId: string,
    taskPath = "",
  ): Promise<void> {
    this.setup();
    const { thread_id, checkpoint_ns, checkpoint_id } = config.configurable ?? {};
    if (!thread_id || !checkpoint_id) {
      throw new SubagentGraphError(
        ErrorCode.Internal,
        `DeltaHistorySqliteSaver.putWrites: the config needs configurable.thread_id and configurable.checkpoint_id (got thread_id ${String(thread_id)}, checkpoint_id ${String(checkpoint_id)})`,
      );
    }
    const allSpecial = writes.every(([channel]) => channel in WRITES_IDX_MAP);
    const statement = this.db.prepare(
      `INSERT ${allSpecial ? "OR REPLACE" : "OR IGNORE"} INTO writes
        (thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, value)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    const rows = await Promise.all(
      writes.map(async ([channel, value], idx) => {
        const [type, serialized] = await this.serde.dumpsTyped(value);
        return [
          thread_id,
          checkpoint_ns ?? "",
          checkpoint_id,
          taskId,
          taskPath,
          WRITES_IDX_MAP[channel] ?? idx,
          channel,
          type,
          serialized,
        ];
      }),
    );
    this.db.transaction(() => {
      for (const row of rows) statement.run(...row);
    })();
  }

  override async getDeltaChannelHistory(
    options: DeltaHistoryRequest,
  ): Promise<Record<string, DeltaChannelHistory>> {
    const { config, channels } = options;
    if (channels.length === 0) return {};
    const requested = requestedChannels(channels);
    if (requested.length > MAX_DELTA_CHANNELS) return super.getDeltaChannelHistory(options);
    this.setup();
    const checkpointId: unknown = config.configurable?.checkpoint_id;
    const byId = typeof checkpointId === "string" && checkpointId !== "";
    const params: Record<string, unknown> = {
      thread: config.configurable?.thread_id ?? null,
      ns: config.configurable?.checkpoint_ns ?? "",
    };
    if (byId) params.id = checkpointId;
    for (const { name, bit } of requested) params[`c${bit}`] = name;
    const rows = this.historyStatement(requested.length, byId).all(params) as HistoryRow[];
    if (rows.some((row) => row.kind === 1 && row.mask === null)) {
      return super.getDeltaChannelHistory(options);
    }
    return this.assemble(rows, channels, requested);
  }

  private historyStatement(channelCount: number, byId: boolean): Database.Statement {
    const key = `${channelCount}:${byId}`;
    let statement = this.historyStatements.get(key);
    if (statement === undefined) {
      statement = this.db.prepare(historySql(channelCount, byId));
      this.historyStatements.set(key, statement);
    }
    return statement;
  }

  private async assemble(
    rows: HistoryRow[],
    channels: string[],
    requested: RequestedChannel[],
  ): Promise<Record<string, DeltaChannelHistory>> {
    const history = new DeltaHistoryBuilder(channels);
    for (const row of rows) {
      if (row.kind === 0) {
        if (row.task_id === null || row.channel === null) continue;
        // As the stock `getTuple` deserializes a write.
        const value: unknown = await this.serde.loadsTyped(row.type ?? "json", row.value ?? "");
        history.addWrite([row.task_id, row.channel, value]);
      } else if (row.mask !== null && row.value !== null) {
        const checkpoint = (await this.serde.loadsTyped(
          row.type ?? "json",
          row.value,
        )) as Checkpoint;
        for (const name of channelsInMask(row.mask, requested)) {
          history.setSeed(name, checkpoint.channel_values[name]);
        }
      }
    }
    return history.build();
  }
}
