/**
 * Test helpers for users of subagent-graph: a strict scripted chat model to drive agents and
 * subagents without a network, and checkpoint replay (record a thread's model calls, serve them
 * back with `ReplayModel`, which fails when the graph now sends the model something else, and
 * update a recording after an intentional change with `rerecordThread`). Import from
 * `subagent-graph/testing`.
 */

import type { ThreadRecording, ThreadRecordingV1 } from "./models/recording-format.js";
import { type RerecordOptions, rerecordWith } from "./runs/rerecord.js";
import { createRuntime } from "./runtime.js";

export type {
  RecordedMessage,
  RecordedRequest,
  RecordedTool,
} from "./models/model-request.js";
export type {
  RecordedCall,
  RecordedChild,
  ReplayOptions,
  ThreadRecording,
  ThreadRecordingV1,
} from "./models/replay.js";
export { RECORDING_VERSION, ReplayModel } from "./models/replay.js";
export type { RequestMatch } from "./models/request-diff.js";
export type {
  ScriptedCall,
  ScriptedReply,
  ScriptedToolCall,
  ScriptStep,
} from "./models/scripted.js";
export { ScriptedChatModel } from "./models/scripted.js";
export type { RecordingSource } from "./runs/recording.js";
export { recordThread } from "./runs/recording.js";
export type { RerecordOptions } from "./runs/rerecord.js";

/**
 * Updates a recording after an intentional change (a prompt, a tool, the subagent list): its
 * responses are replayed through the agents `setup` declares now, in a fresh in-memory runtime,
 * and what each call is sent is recorded. Write the result over the fixture. Also upgrades a
 * version 1 recording. See {@link rerecordWith} for the errors.
 *
 * @example
 * const old = JSON.parse(readFileSync("fixtures/my-thread.json", "utf8")) as ThreadRecording;
 * const updated = await rerecordThread(old, { uid: "alice", setup: declareAgents });
 * writeFileSync("fixtures/my-thread.json", JSON.stringify(updated, null, 2));
 */
export function rerecordThread(
  recording: ThreadRecording | ThreadRecordingV1,
  options: RerecordOptions,
): Promise<ThreadRecording> {
  return rerecordWith(createRuntime, recording, options);
}
