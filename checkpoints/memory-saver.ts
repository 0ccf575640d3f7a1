import {
  type Checkpoint,
  type CheckpointPendingWrite,
  type DeltaChannelHistory,
  getCheckpointId,
  MemorySaver,
} from "@langchain/langgraph-checkpoint";
import { DeltaHistoryBuilder, type DeltaHistoryRequest } from "./delta-history.js";

/**
 * LangGraph's `MemorySaver` with a delta read that parses only the checkpoints it needs.
 *
 * The stock `getDeltaChannelHistory` deserializes every ancestor it walks, whole. A thread's
 * delta channels snapshot at different checkpoints (`messages` is written ~4 times a turn,
 * `subagent_runs` once), so the walk for the channel whose snapshot is furthest back also parses
 * every snapshot of the others on the way: at turn 200 of the checkpoint bench a read parsed
 * three copies of the conversation instead of one, and reads were most of a turn. Here a
 * checkpoint is parsed at most once to learn which channels it stores (remembered by its stored
 * bytes, which a re-put replaces), and again only when it seeds a requested channel. The answer
 * is the stock walk's, write for write (test/checkpoints/delta-history.test.ts).
 */
export class DeltaHistoryMemorySaver extends MemorySaver {
  /** The channels each stored checkpoint holds a value of, by its serialized bytes. */
  private readonly storedChannels = new WeakMap<Uint8Array, ReadonlySet<string>>();

  override async getDeltaChannelHistory(
    options: DeltaHistoryRequest,
  ): Promise<Record<string, DeltaChannelHistory>> {
    const { config, channels } = options;
    if (channels.length === 0) return {};
    const threadId = config.configurable?.thread_id;
    const checkpointNs: string = config.configurable?.checkpoint_ns ?? "";
    if (typeof threadId !== "string" || !Object.hasOwn(this.storage, threadId)) {
      // Nothing stored (or a key the stock saver refuses): let it answer or throw as it does.
      return super.getDeltaChannelHistory(options);
    }
    const namespace = this.storage[threadId]?.[checkpointNs] ?? {};
    const target = getCheckpointId(config) || Object.keys(namespace).sort().reverse()[0];
    const builder = new DeltaHistoryBuilder(channels);
    const remaining = new Set(channels);
    // Writes per channel newest first, as the walk meets them; reversed once at the end.
    const newestFirst = new Map<string, CheckpointPendingWrite[]>();
    let current = target === undefined ? undefined : namespace[target]?.[2];
    while (current !== undefined && remaining.size > 0) {
      const entry = namespace[current];
      if (entry === undefined) break;
      const seeded = await this.seedsIn(entry[0], remaining);
      const ordered = this._orderedWrites(threadId, checkpointNs, current);
      for (const [, , [taskId, channel, value]] of ordered.reverse()) {
        if (!remaining.has(channel)) continue;
        const list = newestFirst.get(channel) ?? [];
        list.push([taskId, channel, await this.serde.loadsTyped("json", value)]);
        newestFirst.set(channel, list);
      }
      for (const [channel, value] of seeded) {
        builder.setSeed(channel, value);
        remaining.delete(channel);
      }
      current = entry[2];
    }
    for (const list of newestFirst.values())
      for (const write of list.reverse()) builder.addWrite(write);
    return builder.build();
  }

  /** The values `serialized` (a stored checkpoint) holds of `wanted` channels; parsed only if it holds one. */
  private async seedsIn(
    serialized: Uint8Array,
    wanted: ReadonlySet<string>,
  ): Promise<Map<string, unknown>> {
    const known = this.storedChannels.get(serialized);
    if (known && ![...wanted].some((channel) => known.has(channel))) return new Map();
    const checkpoint: Checkpoint = await this.serde.loadsTyped("json", serialized);
    const values = checkpoint.channel_values ?? {};
    const held = new Set(
      Object.keys(values).filter(
        (channel) => (values as Record<string, unknown>)[channel] !== undefined,
      ),
    );
    this.storedChannels.set(serialized, held);
    return new Map(
      [...wanted]
        .filter((channel) => held.has(channel))
        .map((channel) => [channel, values[channel]]),
    );
  }
}
