import type { RunnableConfig } from "@langchain/core/runnables";
import {
  BaseCheckpointSaver,
  type ChannelVersions,
  type Checkpoint,
  type CheckpointListOptions,
  type CheckpointMetadata,
  type CheckpointTuple,
  type PendingWrite,
} from "@langchain/langgraph-checkpoint";

type DeltaHistoryOptions = Parameters<BaseCheckpointSaver["getDeltaChannelHistory"]>[0];
type DeltaHistory = Awaited<ReturnType<BaseCheckpointSaver["getDeltaChannelHistory"]>>;

/**
 * A saver that forwards every call to `inner`, a saver someone else made and keeps (a LangGraph
 * server's own). It exists to be extended: a subclass changes what is written and read (see
 * `SendCompactingSaverView` in `send-compacting-savers.ts`) while `inner` keeps its storage, its
 * serializer, its versions and its delta read. `getDeltaChannelHistory` goes to `inner`'s own
 * (a `MemorySaver` reads its maps directly), not to the base class's walk over this saver's
 * `getTuple`.
 */
export class DelegatingSaver extends BaseCheckpointSaver {
  constructor(readonly inner: BaseCheckpointSaver) {
    super(inner.serde);
  }

  getTuple(config: RunnableConfig): Promise<CheckpointTuple | undefined> {
    return this.inner.getTuple(config);
  }

  async *list(
    config: RunnableConfig,
    options?: CheckpointListOptions,
  ): AsyncGenerator<CheckpointTuple> {
    yield* this.inner.list(config, options);
  }

  put(
    config: RunnableConfig,
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
    newVersions: ChannelVersions,
  ): Promise<RunnableConfig> {
    return this.inner.put(config, checkpoint, metadata, newVersions);
  }

  putWrites(
    config: RunnableConfig,
    writes: PendingWrite[],
    taskId: string,
    taskPath?: string,
  ): Promise<void> {
    return this.inner.putWrites(config, writes, taskId, taskPath);
  }

  deleteThread(threadId: string): Promise<void> {
    return this.inner.deleteThread(threadId);
  }

  override getDeltaChannelHistory(options: DeltaHistoryOptions): Promise<DeltaHistory> {
    return this.inner.getDeltaChannelHistory(options);
  }

  override getNextVersion(current: number | undefined): number {
    return this.inner.getNextVersion(current);
  }
}
