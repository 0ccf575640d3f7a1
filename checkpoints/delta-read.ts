import { DeltaChannel, type DeltaReducer } from "@langchain/langgraph";
import type { BaseCheckpointSaver, CheckpointTuple } from "@langchain/langgraph-checkpoint";

/** The batch reducers of the channels to read, by channel name. */
export type ChannelReducers = Record<string, DeltaReducer<unknown, unknown>>;

/**
 * The values of `reducers`' channels at `tuple`'s checkpoint, read straight from the saver (no
 * graph needed), whichever storage wrote them: a full value or a delta snapshot stored in the
 * checkpoint is used as it is; a delta channel stored as writes only is rebuilt from the nearest
 * snapshot and the writes since, the way LangGraph rebuilds it when it loads the checkpoint
 * (one `getDeltaChannelHistory` call for all of them). A channel never written is absent.
 */
export async function readChannelValues(
  saver: BaseCheckpointSaver,
  tuple: CheckpointTuple,
  reducers: ChannelReducers,
): Promise<Record<string, unknown>> {
  const { channel_values: stored, channel_versions: versions } = tuple.checkpoint;
  const values: Record<string, unknown> = {};
  const toReplay: string[] = [];
  for (const [name, reducer] of Object.entries(reducers)) {
    if (Object.hasOwn(stored, name)) {
      const channel = new DeltaChannel(reducer).fromCheckpoint(stored[name]);
      if (channel.isAvailable()) values[name] = channel.get();
    } else if (versions[name] !== undefined) {
      toReplay.push(name);
    }
  }
  if (toReplay.length === 0) return values;
  const histories = await saver.getDeltaChannelHistory({
    config: tuple.config,
    channels: toReplay,
  });
  for (const name of toReplay) {
    const history = histories[name];
    const reducer = reducers[name];
    if (!history || !reducer) continue;
    const channel = new DeltaChannel(reducer).fromCheckpoint(history.seed);
    channel.replayWrites(history.writes);
    if (channel.isAvailable()) values[name] = channel.get();
  }
  return values;
}
