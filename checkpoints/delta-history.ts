import {
  BaseCheckpointSaver,
  type CheckpointPendingWrite,
  type DeltaChannelHistory,
} from "@langchain/langgraph-checkpoint";

/**
 * Most channels one delta-history query walks for. The query keeps the set of channels still
 * looking for their snapshot as the bits of one signed 64-bit integer (SQLite `INTEGER`,
 * PostgreSQL `bigint`), so past this count the savers fall back to the generic walk. Graphs
 * have one or two delta channels (`messages`, maybe a log); 62 leaves the sign bit alone.
 */
export const MAX_DELTA_CHANNELS = 62;

/** What `getDeltaChannelHistory` is asked: a checkpoint (`config`) and the channels to rebuild. */
export type DeltaHistoryRequest = Parameters<BaseCheckpointSaver["getDeltaChannelHistory"]>[0];

/** A requested channel and its bit in the query's channel masks. */
export interface RequestedChannel {
  name: string;
  bit: number;
}

/**
 * The requested channels without repeats, each with its bit. A name asked for twice is walked
 * once; {@link assembleHistory} still answers it under its name.
 */
export function requestedChannels(channels: readonly string[]): RequestedChannel[] {
  return [...new Set(channels)].map((name, bit) => ({ name, bit }));
}

/** The names whose bits are set in `mask` (a decimal string: the mask may pass 2^53). */
export function channelsInMask(mask: string, requested: readonly RequestedChannel[]): string[] {
  const bits = BigInt(mask);
  return requested.filter(({ bit }) => (bits >> BigInt(bit)) & 1n).map(({ name }) => name);
}

/**
 * Collects what one query returned into the shape `getDeltaChannelHistory` answers: for every
 * name in `channels` (repeats included, as the base class does), its writes oldest first and its
 * seed when an ancestor stored one. `writes` must already be in replay order.
 */
export class DeltaHistoryBuilder {
  private readonly writes = new Map<string, CheckpointPendingWrite[]>();
  private readonly seeds = new Map<string, unknown>();

  constructor(private readonly channels: readonly string[]) {
    for (const name of channels) this.writes.set(name, []);
  }

  addWrite(write: CheckpointPendingWrite): void {
    this.writes.get(write[1])?.push(write);
  }

  setSeed(channel: string, value: unknown): void {
    this.seeds.set(channel, value);
  }

  build(): Record<string, DeltaChannelHistory> {
    const result: Record<string, DeltaChannelHistory> = {};
    for (const name of this.channels) {
      // A fresh array per name, as the base class returns one per requested name.
      const entry: DeltaChannelHistory = { writes: [...(this.writes.get(name) ?? [])] };
      if (this.seeds.has(name)) entry.seed = this.seeds.get(name);
      result[name] = entry;
    }
    return result;
  }
}

/**
 * The base class's generic walk (one `getTuple` per ancestor) on any saver, whatever it
 * overrides: what the one-query overrides are measured and tested against.
 */
export function genericDeltaChannelHistory(
  saver: BaseCheckpointSaver,
  options: DeltaHistoryRequest,
): Promise<Record<string, DeltaChannelHistory>> {
  return BaseCheckpointSaver.prototype.getDeltaChannelHistory.call(saver, options);
}
