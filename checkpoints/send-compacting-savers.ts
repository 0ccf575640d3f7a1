import type { RunnableConfig } from "@langchain/core/runnables";
import type {
  ChannelVersions,
  Checkpoint,
  CheckpointListOptions,
  CheckpointMetadata,
  CheckpointTuple,
  PendingWrite,
  SerializerProtocol,
} from "@langchain/langgraph-checkpoint";
import Database from "better-sqlite3";
import type pg from "pg";
import type { ChannelReducers } from "./delta-read.js";
import { ForkSafePostgresSaver, type ForkSafePostgresSaverOpenOptions } from "./postgres-saver.js";
import { DEFAULT_SEND_REF_REDUCERS, type SendRefStats, SendRefs } from "./send-refs.js";
import { DeltaHistorySqliteSaver } from "./sqlite-saver.js";

/** {@link DeltaHistorySqliteSaver} storing `Send` packets' state by reference ({@link SendRefs}). */
export class SendCompactingSqliteSaver extends DeltaHistorySqliteSaver {
  private readonly refs: SendRefs;

  constructor(db: Database.Database, reducers: ChannelReducers = DEFAULT_SEND_REF_REDUCERS) {
    super(db);
    this.refs = new SendRefs(
      {
        saver: this,
        rawGetTuple: (config) => super.getTuple(config),
        getTuple: (config) => this.getTuple(config),
      },
      reducers,
    );
  }

  static override fromConnString(
    path: string,
    reducers: ChannelReducers = DEFAULT_SEND_REF_REDUCERS,
  ): SendCompactingSqliteSaver {
    return new SendCompactingSqliteSaver(new Database(path), reducers);
  }

  get stats(): SendRefStats {
    return this.refs.stats;
  }

  /** See {@link SendRefs.threadSettled}. */
  threadSettled(threadId: string): Promise<void> {
    return this.refs.threadSettled(threadId);
  }

  override async putWrites(
    config: RunnableConfig,
    writes: PendingWrite[],
    taskId: string,
    taskPath = "",
  ): Promise<void> {
    const store = async () =>
      super.putWrites(
        config,
        await this.refs.compactWrites(config, writes, taskId),
        taskId,
        taskPath,
      );
    return this.refs.track("writes", SendRefs.key(config), store());
  }

  override async put(
    config: RunnableConfig,
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
  ): Promise<RunnableConfig> {
    const store = async () =>
      super.put(config, await this.refs.compactCheckpoint(config, checkpoint), metadata);
    return this.refs.track("put", SendRefs.key(config, checkpoint.id), store());
  }

  override async getTuple(config: RunnableConfig): Promise<CheckpointTuple | undefined> {
    const tuple = await super.getTuple(config);
    return tuple ? this.refs.rehydrate(tuple) : tuple;
  }

  override async *list(
    config: RunnableConfig,
    options?: CheckpointListOptions,
  ): AsyncGenerator<CheckpointTuple> {
    for await (const tuple of super.list(config, options)) yield await this.refs.rehydrate(tuple);
  }
}

/** {@link ForkSafePostgresSaver} storing `Send` packets' state by reference ({@link SendRefs}). */
export class SendCompactingPostgresSaver extends ForkSafePostgresSaver {
  private readonly refs: SendRefs;

  constructor(
    pool: pg.Pool,
    serde?: SerializerProtocol,
    options?: { schema?: string },
    reducers: ChannelReducers = DEFAULT_SEND_REF_REDUCERS,
  ) {
    super(pool, serde, options);
    this.refs = new SendRefs(
      {
        saver: this,
        rawGetTuple: (config) => super.getTuple(config),
        getTuple: (config) => this.getTuple(config),
      },
      reducers,
    );
  }

  /** As {@link ForkSafePostgresSaver.open}, building this class. */
  static override async open(
    url: string,
    options: ForkSafePostgresSaverOpenOptions = {},
    reducers: ChannelReducers = DEFAULT_SEND_REF_REDUCERS,
  ): Promise<SendCompactingPostgresSaver> {
    return ForkSafePostgresSaver.openWith(
      url,
      options,
      (pool, schema) => new SendCompactingPostgresSaver(pool, undefined, schema, reducers),
    );
  }

  get stats(): SendRefStats {
    return this.refs.stats;
  }

  /** See {@link SendRefs.threadSettled}. */
  threadSettled(threadId: string): Promise<void> {
    return this.refs.threadSettled(threadId);
  }

  override async putWrites(
    config: RunnableConfig,
    writes: PendingWrite[],
    taskId: string,
    taskPath = "",
  ): Promise<void> {
    const store = async () =>
      super.putWrites(
        config,
        await this.refs.compactWrites(config, writes, taskId),
        taskId,
        taskPath,
      );
    return this.refs.track("writes", SendRefs.key(config), store());
  }

  override async put(
    config: RunnableConfig,
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
    newVersions: ChannelVersions,
  ): Promise<RunnableConfig> {
    const store = async () =>
      super.put(
        config,
        await this.refs.compactCheckpoint(config, checkpoint),
        metadata,
        newVersions,
      );
    return this.refs.track("put", SendRefs.key(config, checkpoint.id), store());
  }

  override async getTuple(config: RunnableConfig): Promise<CheckpointTuple | undefined> {
    const tuple = await super.getTuple(config);
    return tuple ? this.refs.rehydrate(tuple) : tuple;
  }

  override async *list(
    config: RunnableConfig,
    options?: CheckpointListOptions,
  ): AsyncGenerator<CheckpointTuple> {
    for await (const tuple of super.list(config, options)) yield await this.refs.rehydrate(tuple);
  }
}
