import type { RunnableConfig } from "@langchain/core/runnables";
import type {
  BaseCheckpointSaver,
  CheckpointListOptions,
  CheckpointTuple,
} from "@langchain/langgraph-checkpoint";

/** A saver that reads checkpoints for their pending writes alone (`send-compacting-savers.ts`). */
interface WritesReader {
  getTupleForWrites(config: RunnableConfig): Promise<CheckpointTuple | undefined>;
  listForWrites(
    config: RunnableConfig,
    options?: CheckpointListOptions,
  ): AsyncGenerator<CheckpointTuple>;
}

function writesReaderOf(saver: BaseCheckpointSaver): WritesReader | undefined {
  const reader = saver as Partial<WritesReader>;
  return typeof reader.getTupleForWrites === "function" &&
    typeof reader.listForWrites === "function"
    ? (reader as WritesReader)
    : undefined;
}

/**
 * `saver.getTuple` for a caller that reads only the tuple's metadata, timestamps and pending
 * writes' channels and interrupts (never a `Send` packet's state): on our savers, a checkpoint
 * whose packets refer to their parent's writes is returned without reading the parent.
 */
export function getTupleForWrites(
  saver: BaseCheckpointSaver,
  config: RunnableConfig,
): Promise<CheckpointTuple | undefined> {
  return writesReaderOf(saver)?.getTupleForWrites(config) ?? saver.getTuple(config);
}

/** `saver.list` for such a caller, as {@link getTupleForWrites} reads one checkpoint. */
export function listForWrites(
  saver: BaseCheckpointSaver,
  config: RunnableConfig,
  options?: CheckpointListOptions,
): AsyncGenerator<CheckpointTuple> {
  return writesReaderOf(saver)?.listForWrites(config, options) ?? saver.list(config, options);
}
