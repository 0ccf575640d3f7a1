/**
 * Test helpers for users of subagent-graph: a strict scripted chat model to drive agents and
 * subagents without a network, and checkpoint replay (record a thread's model calls, serve them
 * back with `ReplayModel`, which fails when the graph now sends the model something else, and
 * update a recording after an intentional change with `rerecordThread`). Import from
 * `subagent-graph/testing`.
 */

import { ErrorCode, SubagentGraphError } from "./errors.js";
import type { ThreadRecording, ThreadRecordingV1 } from "./models/recording-format.js";
import { ReplayModel } from "./models/replay.js";
import { recordThread } from "./runs/recording.js";
import { createRuntime, type Runtime, type RuntimeOptions } from "./runtime.js";

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

/**
 * Updates a recording after an intentional change (a prompt, a tool, the subagent list): its
 * responses are replayed through the agents `setup` declares now, in a fresh in-memory runtime,
 * and what each call is sent is recorded. Write the result over the fixture. Also upgrades a
 * version 1 recording. See {@link rerecord} for the errors.
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
  return rerecord(recording, options);
}

/** Options of `rerecordThread`. */
export interface RerecordOptions {
  /** The user who owns the agents and runs the thread. */
  uid: string;
  /**
   * Declares the agents, as they are now, in the fresh runtime: the same function the replay
   * test calls (e.g. `declareAgents` of the README), so both see the same agents.
   */
  setup(runtime: Runtime, uid: string): Promise<unknown>;
  /**
   * Further options of the runtime the replay runs in (`tools`, `models`, `dataDir` for skills
   * and MCP, `env`, …). The store and the saver are fresh in-memory ones, and the model is the
   * recording's.
   */
  runtime?: Omit<RuntimeOptions, "checkpointer" | "database" | "modelFor" | "recordModelRequests">;
}

/** The thread the re-recording runs on, in its own in-memory runtime. */
const RERECORD_THREAD = "rerecord";

/**
 * Updates a recording after an intentional change: replays its responses (comparing nothing)
 * through the agents `setup` declares now, recording what each call is sent, and returns the
 * recording in the current format (a version 1 recording is upgraded the same way). The
 * responses stay the recorded ones; to get new ones, record the thread again from a model.
 *
 * @throws SubagentGraphError `SCRIPT_VIOLATION` when the recorded responses no longer fit the
 *   graph (it now makes more or fewer model calls), naming what happened.
 */
async function rerecord(
  recording: ThreadRecording | ThreadRecordingV1,
  options: RerecordOptions,
): Promise<ThreadRecording> {
  const replay = new ReplayModel(recording, { match: false });
  const runtime = await createRuntime({
    ...options.runtime,
    checkpointer: "memory",
    database: ":memory:",
    modelFor: () => replay,
    recordModelRequests: true,
  });
  try {
    await options.setup(runtime, options.uid);
    try {
      for (const input of recording.inputs) {
        await runtime.run({
          uid: options.uid,
          agent: recording.agent,
          threadId: RERECORD_THREAD,
          input,
        });
      }
      replay.assertComplete();
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      throw new SubagentGraphError(
        ErrorCode.ScriptViolation,
        `cannot re-record: the recorded responses no longer fit the agents (${reason}); the change alters how many model calls a turn makes, so record the thread again from a model with recordThread`,
        { cause: error },
      );
    }
    return await recordThread(runtime, options.uid, RERECORD_THREAD);
  } finally {
    await runtime.close();
  }
}
