/**
 * Test helpers for users of subagent-graph: a strict scripted chat model to drive agents and
 * subagents without a network, and checkpoint replay (record a thread's model calls and its
 * pauses for approval, serve them back with `ReplayModel`, which fails when the graph now sends
 * the model something else or pauses elsewhere, run a recorded thread again with
 * `replayThread`, and update a recording after an intentional change with `rerecordThread`).
 * Import from `subagent-graph/testing`.
 */

import { ErrorCode, messageOf, SubagentGraphError } from "./errors.js";
import type { AnyThreadRecording, ThreadRecording } from "./models/recording-format.js";
import { ReplayModel } from "./models/replay.js";
import type { RunResult } from "./runs/events.js";
import { createRuntime, type Runtime, type RuntimeOptions } from "./runtime.js";
import { recordThread } from "./threads/recording.js";

export type {
  RecordedMessage,
  RecordedRequest,
  RecordedTool,
} from "./models/model-request.js";
export type {
  AnyThreadRecording,
  PendingRequest,
  RecordedApproval,
  RecordedApprovalRequest,
  RecordedCall,
  RecordedChild,
  ReplayMatch,
  ReplayOptions,
  ThreadRecording,
  ThreadRecordingV1,
  ThreadRecordingV2,
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
export type { RecordingSource } from "./threads/recording.js";
export { recordThread } from "./threads/recording.js";

/** Options of {@link replayThread}. */
export interface ReplayThreadOptions {
  /** The user who owns the agents and runs the thread. */
  uid: string;
  /** The thread to replay on (default `"replay"`); a fresh one, so the turns start from nothing. */
  threadId?: string;
}

/**
 * Runs a recorded thread again, turn by turn, on `runtime` (whose agents' model is `replay`):
 * each recorded input is sent to the recorded main agent, and each time the run pauses for
 * approval it is resumed with what the recording answered there (`replay.resume`, which first
 * checks the pause is the recorded one). Then checks the whole replay (`replay.assertComplete`).
 * Returns the last turn's result.
 *
 * @throws SubagentGraphError `SCRIPT_VIOLATION` at the first difference: a call that sends the
 *   model something else, a pause the recording does not hold (a tool gated since), a recorded
 *   pause that did not come (a gate dropped), or recorded responses left unused.
 *
 * @example
 * const replay = new ReplayModel(recorded);
 * const runtime = await createRuntime({ checkpointer: "memory", database: ":memory:", modelFor: () => replay });
 * await declareAgents(runtime, "alice");
 * const result = await replayThread(runtime, replay, { uid: "alice" });
 */
export async function replayThread(
  runtime: Runtime,
  replay: ReplayModel,
  options: ReplayThreadOptions,
): Promise<RunResult> {
  const { uid, threadId = "replay" } = options;
  const { agent, inputs } = replay.recorded;
  let result: RunResult | undefined;
  for (const input of inputs) {
    result = await runtime.run({ uid, agent, threadId, input });
    while (result.interrupts.length > 0) {
      result = await runtime.run({
        uid,
        threadId,
        command: { resume: replay.resume(result.interrupts) },
      });
    }
  }
  replay.assertComplete();
  if (!result) {
    throw new SubagentGraphError(
      ErrorCode.Validation,
      "the recording holds no inputs, so there is no turn to replay: record a thread that has at least one turn",
      { field: "inputs" },
    );
  }
  return result;
}

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
  recording: AnyThreadRecording,
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
 * recording in the current format (older versions are upgraded the same way). The responses
 * stay the recorded ones; to get new ones, record the thread again from a model. Pauses for
 * approval are recorded as they happen now: a pause the recording holds for the same tools gets
 * its recorded answer, a pause for a tool gated since is approved, and a gate dropped since
 * leaves no pause.
 *
 * @throws SubagentGraphError `SCRIPT_VIOLATION` when the recorded responses no longer fit the
 *   graph (it now makes more or fewer model calls), naming what happened.
 */
async function rerecord(
  recording: AnyThreadRecording,
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
      await replayThread(runtime, replay, { uid: options.uid, threadId: RERECORD_THREAD });
    } catch (error) {
      const reason = messageOf(error);
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
