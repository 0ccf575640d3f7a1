import { readFileSync } from "node:fs";
import type { AIMessage } from "@langchain/core/messages";
import { afterEach, describe, expect, it } from "vitest";
import { seedDemo } from "../../agents/demo.js";
import { ErrorCode } from "../../errors.js";
import { ReplayModel, type ThreadRecording } from "../../models/replay.js";
import { recordThread } from "../../runs/recording.js";
import { createRuntime, type Runtime } from "../../runtime.js";
import { messageText } from "../../util/message-text.js";

const FIXTURE = new URL("../fixtures/recorded-thread.json", import.meta.url);

function loadRecording(): ThreadRecording {
  return JSON.parse(readFileSync(FIXTURE, "utf8")) as ThreadRecording;
}

/** The tool calls (name and arguments) of the recorded main agent's responses. */
function recordedToolCalls(recording: ThreadRecording) {
  return recording.responses.flatMap((response) =>
    ((response.data as { tool_calls?: { name: string; args: unknown }[] }).tool_calls ?? []).map(
      (call) => [call.name, call.args],
    ),
  );
}

describe("checkpoint replay kit (recordThread + ReplayModel)", () => {
  let runtime: Runtime | undefined;
  afterEach(async () => {
    await runtime?.close();
    runtime = undefined;
  });

  async function replaying(recording: ThreadRecording) {
    const replay = new ReplayModel(recording);
    runtime = await createRuntime({
      checkpointer: "memory",
      database: ":memory:",
      dataDir: "/tmp/replay-kit-unused",
      env: {},
      modelFor: () => replay,
    });
    await seedDemo(runtime, "demo");
    return { replay, runtime };
  }

  it("re-runs the recorded thread without a network: same tool calls, same dispatches, same answer", async () => {
    const recording = loadRecording();
    const { replay, runtime } = await replaying(recording);

    let result: Awaited<ReturnType<Runtime["run"]>> | undefined;
    for (const input of recording.inputs) {
      result = await runtime.run({ uid: "demo", threadId: "replayed", input });
    }

    const toolCalls = (result?.messages ?? [])
      .filter((message) => message.getType() === "ai")
      .flatMap((message) => ((message as AIMessage).tool_calls ?? []).map((c) => [c.name, c.args]));
    expect(toolCalls).toEqual(recordedToolCalls(recording));
    expect(result?.subagentRuns.map((run) => [run.subagent_type, run.status])).toEqual(
      recording.children.map((child) => [child.subagent_type, "completed"]),
    );
    const lastRecorded = recording.responses.at(-1)?.data.content;
    expect(result?.output).toBe(lastRecorded);
    replay.assertComplete();
  });

  it("round-trips: recording the replayed thread gives the same recording", async () => {
    const recording = loadRecording();
    const { runtime } = await replaying(recording);
    for (const input of recording.inputs) {
      await runtime.run({ uid: "demo", threadId: "again", input });
    }
    const again = await recordThread(runtime, "demo", "again");
    const strip = (r: ThreadRecording) =>
      JSON.parse(JSON.stringify(r, (key, value) => (key === "id" ? undefined : value)));
    expect(strip(again)).toEqual(strip(recording));
  });

  it("fails clearly when the graph asks for a call the recording does not hold", async () => {
    const recording = loadRecording();
    recording.responses.pop();
    const { replay, runtime } = await replaying(recording);
    await runtime.run({ uid: "demo", threadId: "short", input: recording.inputs[0] ?? "" });

    await expect(
      runtime.run({ uid: "demo", threadId: "short", input: recording.inputs[1] ?? "" }),
    ).rejects.toMatchObject({
      code: ErrorCode.ScriptViolation,
      message: expect.stringContaining(
        'agent "assistant" asked for model call #4, but the recording holds 3',
      ),
    });
    expect(() => replay.assertComplete()).not.toThrow();
  });

  it("fails a subagent whose task the recording does not hold, and reports unused responses", async () => {
    const recording = loadRecording();
    const first = recording.children[0];
    if (first) first.description = "a task that was never recorded";
    const { replay, runtime } = await replaying(recording);

    const result = await runtime.run({
      uid: "demo",
      threadId: "changed",
      input: recording.inputs[0] ?? "",
    });

    const researcher = result.subagentRuns.find((run) => run.subagent_type === "researcher");
    expect(researcher?.status).toBe("failed");
    expect(researcher?.error).toContain('the recording holds no run of "researcher"');
    expect(() => replay.assertComplete()).toThrow(/recorded responses unused/);
    expect(messageText(result.messages.at(-1) ?? result.messages[0] ?? ({} as never))).not.toBe("");
  });
});
