import type { RunnableConfig } from "@langchain/core/runnables";
import type {
  BaseCheckpointSaver,
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
import { withStatementCache } from "../util/sqlite-statement-cache.js";
import { DelegatingSaver } from "./delegating-saver.js";
import type { ChannelReducers } from "./delta-read.js";
import { FreshThreads } from "./fresh-threads.js";
import { DeltaHistoryMemorySaver } from "./memory-saver.js";
import { ForkSafePostgresSaver, type ForkSafePostgresSaverOpenOptions } from "./postgres-saver.js";
import { DEFAULT_SEND_REF_REDUCERS, type SendRefStats, SendRefs } from "./send-refs.js";
import { DeltaHistorySqliteSaver } from "./sqlite-saver.js";

type Wrapped = "put" | "putWrites" | "getTuple" | "list";
/** A saver's public members, none abstract (the mixin calls them through `super`). */
interface ConcreteSaver
  extends Omit<{ [K in keyof BaseCheckpointSaver]: BaseCheckpointSaver[K] }, Wrapped> {
  put(...args: Parameters<BaseCheckpointSaver["put"]>): ReturnType<BaseCheckpointSaver["put"]>;
  putWrites(
    ...args: Parameters<BaseCheckpointSaver["putWrites"]>
  ): ReturnType<BaseCheckpointSaver["putWrites"]>;
  getTuple(
    ...args: Parameters<BaseCheckpointSaver["getTuple"]>
  ): ReturnType<BaseCheckpointSaver["getTuple"]>;
  list(...args: Parameters<BaseCheckpointSaver["list"]>): ReturnType<BaseCheckpointSaver["list"]>;
}
// biome-ignore lint/suspicious/noExplicitAny: a mixin's base constructor takes any arguments.
type SaverConstructor = new (...args: any[]) => ConcreteSaver;

/**
 * `Base` storing `Send` packets' state by reference ({@link SendRefs}): the overrides wrap the
 * base's own `putWrites`, `put`, `getTuple` and `list`, so each saver keeps its storage and its
 * delta read. A subclass gives its reducers with {@link useSendRefReducers} in its constructor.
 */
function withSendRefs<TBase extends SaverConstructor>(Base: TBase) {
  return class SendCompacting extends Base {
    /** The compaction; public only because a mixin's members cannot be private. */
    sendRefs: SendRefs = this.makeSendRefs(DEFAULT_SEND_REF_REDUCERS);
    /** Threads known to have no checkpoint yet: their newest is read without a round trip. */
    readonly freshThreads = new FreshThreads();

    /** Compacts (and rehydrates) the channels of `reducers` instead of the default `messages`. */
    useSendRefReducers(reducers: ChannelReducers): void {
      this.sendRefs = this.makeSendRefs(reducers);
    }

    makeSendRefs(reducers: ChannelReducers): SendRefs {
      return new SendRefs(
        {
          // The mixin's `this` is typed by `ConcreteSaver` (no abstract members, so `super` calls
          // type-check); every base it is applied to is a `BaseCheckpointSaver`.
          saver: this as unknown as BaseCheckpointSaver,
          rawGetTuple: (config) => Base.prototype.getTuple.call(this, config),
          getTuple: (config) => this.getTuple(config),
        },
        reducers,
      );
    }

    get stats(): SendRefStats {
      return this.sendRefs.stats;
    }

    /** See {@link SendRefs.threadSettled}. */
    threadSettled(threadId: string): Promise<void> {
      return this.sendRefs.threadSettled(threadId);
    }

    override async putWrites(
      config: RunnableConfig,
      writes: PendingWrite[],
      taskId: string,
      taskPath = "",
    ): Promise<void> {
      this.freshThreads.written(config);
      const store = async () =>
        super.putWrites(
          config,
          await this.sendRefs.compactWrites(config, writes, taskId),
          taskId,
          taskPath,
        );
      return this.sendRefs.track("writes", SendRefs.key(config), store());
    }

    override async put(
      config: RunnableConfig,
      checkpoint: Checkpoint,
      metadata: CheckpointMetadata,
      newVersions: ChannelVersions,
    ): Promise<RunnableConfig> {
      this.freshThreads.written(config);
      const store = async () =>
        super.put(
          config,
          await this.sendRefs.compactCheckpoint(config, checkpoint),
          metadata,
          newVersions,
        );
      return this.sendRefs.track("put", SendRefs.key(config, checkpoint.id), store());
    }

    override async getTuple(config: RunnableConfig): Promise<CheckpointTuple | undefined> {
      if (this.freshThreads.knownEmpty(config)) return undefined;
      const tuple = await super.getTuple(config);
      return tuple ? this.sendRefs.rehydrate(tuple) : tuple;
    }

    override async *list(
      config: RunnableConfig,
      options?: CheckpointListOptions,
    ): AsyncGenerator<CheckpointTuple> {
      for await (const tuple of super.list(config, options)) {
        yield await this.sendRefs.rehydrate(tuple);
      }
    }

    /**
     * {@link getTuple} for a reader of the pending writes' channels and interrupts only (see
     * `checkpoints/writes-reads.ts`): `Send` packets are left as stored, so a checkpoint whose
     * packets refer to its parent's writes costs no read of the parent.
     */
    async getTupleForWrites(config: RunnableConfig): Promise<CheckpointTuple | undefined> {
      if (this.freshThreads.knownEmpty(config)) return undefined;
      return super.getTuple(config);
    }

    /** {@link list} as {@link getTupleForWrites} reads one checkpoint. */
    listForWrites(
      config: RunnableConfig,
      options?: CheckpointListOptions,
    ): AsyncGenerator<CheckpointTuple> {
      return super.list(config, options);
    }
  };
}

/** {@link DeltaHistorySqliteSaver} storing `Send` packets' state by reference ({@link SendRefs}). */
export class SendCompactingSqliteSaver extends withSendRefs(DeltaHistorySqliteSaver) {
  constructor(db: Database.Database, reducers: ChannelReducers = DEFAULT_SEND_REF_REDUCERS) {
    // The stock saver prepares its statements anew on every `put` and `putWrites`.
    super(withStatementCache(db));
    this.useSendRefReducers(reducers);
  }

  static override fromConnString(
    path: string,
    reducers: ChannelReducers = DEFAULT_SEND_REF_REDUCERS,
  ): SendCompactingSqliteSaver {
    return new SendCompactingSqliteSaver(new Database(path), reducers);
  }
}

/** {@link ForkSafePostgresSaver} storing `Send` packets' state by reference ({@link SendRefs}). */
export class SendCompactingPostgresSaver extends withSendRefs(ForkSafePostgresSaver) {
  constructor(
    pool: pg.Pool,
    serde?: SerializerProtocol,
    options?: { schema?: string },
    reducers: ChannelReducers = DEFAULT_SEND_REF_REDUCERS,
  ) {
    super(pool, serde, options);
    this.useSendRefReducers(reducers);
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
}

/**
 * LangGraph's `MemorySaver` (with {@link DeltaHistoryMemorySaver}'s delta read) storing `Send`
 * packets' state by reference ({@link SendRefs}). With the packets inline the stored
 * checkpoints grew with the thread, so its bytes (and its reads, which parse ancestors) grew
 * with the square of the length.
 */
export class SendCompactingMemorySaver extends withSendRefs(DeltaHistoryMemorySaver) {
  constructor(reducers: ChannelReducers = DEFAULT_SEND_REF_REDUCERS) {
    super();
    this.useSendRefReducers(reducers);
  }
}

/**
 * A saver someone else owns (a LangGraph server's), seen through the `Send` packet compaction
 * ({@link SendRefs}): writes go to it compacted, reads come back rehydrated, and it keeps its own
 * storage and delta read. Get one with {@link sendCompactingView}.
 */
export class SendCompactingSaverView extends withSendRefs(DelegatingSaver) {
  constructor(inner: BaseCheckpointSaver, reducers: ChannelReducers = DEFAULT_SEND_REF_REDUCERS) {
    super(inner);
    this.useSendRefReducers(reducers);
  }
}

const views = new WeakMap<BaseCheckpointSaver, SendCompactingSaverView>();

/**
 * The one {@link SendCompactingSaverView} of `saver` (made on first use): every graph handed the
 * same saver must share one view, because a view remembers the packets of recent checkpoints
 * and the writes still in flight per thread. A saver that already compacts is returned as is.
 */
export function sendCompactingView(
  saver: BaseCheckpointSaver,
  reducers: ChannelReducers = DEFAULT_SEND_REF_REDUCERS,
): BaseCheckpointSaver {
  if (
    saver instanceof SendCompactingSaverView ||
    saver instanceof SendCompactingMemorySaver ||
    saver instanceof SendCompactingSqliteSaver ||
    saver instanceof SendCompactingPostgresSaver
  ) {
    return saver;
  }
  let view = views.get(saver);
  if (!view) {
    view = new SendCompactingSaverView(saver, reducers);
    views.set(saver, view);
  }
  return view;
}
