/**
 * Test helpers for users of subagent-graph: a strict scripted chat model to drive agents and
 * subagents without a network, and checkpoint replay (record a thread's model responses, serve
 * them back with `ReplayModel`). Import from `subagent-graph/testing`.
 */

export type { RecordedChild, ThreadRecording } from "./models/replay.js";
export { RECORDING_VERSION, ReplayModel } from "./models/replay.js";
export type {
  ScriptedCall,
  ScriptedReply,
  ScriptedToolCall,
  ScriptStep,
} from "./models/scripted.js";
export { ScriptedChatModel } from "./models/scripted.js";
export type { RecordingSource } from "./runs/recording.js";
export { recordThread } from "./runs/recording.js";
