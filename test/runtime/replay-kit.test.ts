import { readFileSync } from "node:fs";
import type { AIMessage } from "@langchain/core/messages";
import { afterEach, describe, expect, it } from "vitest";
import { seedDemo } from "../../agents/demo.js";
import { ErrorCode, SubagentGraphError } from "../../errors.js";
import {
  type AnyThreadRecording,
  RECORDING_VERSION,
  ReplayModel,
  type ReplayOptions,
  type ThreadRecording,
  type ThreadRecordingV1,
  type ThreadRecordingV2,
} from "../../models/replay.js";
import { createRuntime, type Runtime } from "../../runtime.js";
import { rerecordThread } from "../../testing.js";
import { recordThread } from "../../threads/recording.js";

const FIXTURE = new URL("../fixtures/recorded-thread.json", import.meta.url);
/** The sample as version 1 wrote it (responses only), kept to test reading old fixtures. */
const FIXTURE_V1 = new URL("../fixtures/historical/recorded-thread.v1.json", import.meta.url);
/** The sample as version 2 wrote it (requests, no approvals), kept to test reading old fixtures. */
const FIXTURE_V2 = new URL("../fixtures/historical/recorded-thread.v2.json", import.meta.url);

/** Options every runtime here shares: nothing from the machine's data dir or environment. */
const ISOLATED = { dataDir: "/tmp/replay-kit-unused", env: {} };

function loadRecording(): ThreadRecording {
  return JSON.parse(readFileSync(FIXTURE, "utf8")) as ThreadRecording;
}

function loadV1(): ThreadRecordingV1 {
  return JSON.parse(readFileSync(FIXTURE_V1, "utf8")) as ThreadRecordingV1;
}

/** The recording without message ids (they change on every run). */
function withoutIds(recording: unknown): unknown {
  return JSON.parse(JSON.stringify(recording, (key, value) => (key === "id" ? undefined : value)));
}

/**
 * The sample as the current version records it. The sample is a version 2 fixture; version 3
 * only added `approval` to calls that waited for one, and the sample has none, so the rest is
 * what a recording of the same thread holds now.
 */
function asCurrent(recording: ThreadRecording): ThreadRecording {
  return { ...recording, version: RECORDING_VERSION };
}

/** The tool calls (name and arguments) of the recorded main agent's responses. */
function recordedToolCalls(recording: ThreadRecording) {
  return recording.calls.flatMap(({ response }) =>
    ((response.data as { tool_calls?: { name: string; args: unknown }[] }).tool_calls ?? []).map(
      (call) => [call.name, call.args],
    ),
  );
}

/** Replaces fields of `slug`'s runtime config (`config_json.context`). */
async function updateContext(runtime: Runtime, slug: string, patch: Record<string, unknown>) {
  const record = await runtime.agents.get("demo", slug);
  await runtime.agents.update("demo", record.id, {
    config_json: { context: { ...record.config_json.context, ...patch } },
  });
}

type Change = (runtime: Runtime) => Promise<void>;

/** The four changes a replay must notice, applied to the demo agents the sample recorded. */
const CHANGES = {
  "the main agent's system prompt": (runtime: Runtime) =>
    updateContext(runtime, "assistant", {
      system_prompt: "You are a terse assistant who answers in one line.",
    }),
  "a subagent's system prompt": (runtime: Runtime) =>
    updateContext(runtime, "researcher", { system_prompt: "You are a hasty researcher." }),
  "a subagent's tools becoming []": (runtime: Runtime) =>
    updateContext(runtime, "researcher", { tools: [] }),
  "a subagent added to the allow-list": async (runtime: Runtime) => {
    await runtime.agents.create("demo", {
      slug: "writer",
      name: "Writer",
      description: "Turns notes into polished prose.",
      backend_id: "SubAgentBackend",
    });
    await updateContext(runtime, "assistant", { subagents: ["researcher", "reviewer", "writer"] });
  },
} satisfies Record<string, Change>;

describe("checkpoint replay kit (recordThread + ReplayModel)", () => {
  const runtimes: Runtime[] = [];
  afterEach(async () => {
    for (const runtime of runtimes.splice(0)) await runtime.close();
  });

  /** A runtime whose every agent is the replay of `recording`, with the demo agents. */
  async function replaying(
    recording: AnyThreadRecording,
    options: { replay?: ReplayOptions; change?: Change; record?: boolean } = {},
  ) {
    const replay = new ReplayModel(recording, options.replay);
    const runtime = await createRuntime({
      ...ISOLATED,
      checkpointer: "memory",
      database: ":memory:",
      modelFor: () => replay,
      recordModelRequests: options.record ?? false,
    });
    runtimes.push(runtime);
    await seedDemo(runtime, "demo");
    await options.change?.(runtime);
    return { replay, runtime };
  }

  /**
   * Replays every turn of `recording` as a replay test does, stopping at a run that fails; the
   * run's error and what `assertComplete()` then throws.
   */
  async function replayTurns(
    recording: AnyThreadRecording,
    options: { replay?: ReplayOptions; change?: Change } = {},
  ) {
    const { replay, runtime } = await replaying(recording, options);
    let runError: unknown;
    let result: Awaited<ReturnType<Runtime["run"]>> | undefined;
    for (const input of recording.inputs) {
      try {
        result = await runtime.run({ uid: "demo", threadId: "replayed", input });
      } catch (error) {
        runError = error;
        break;
      }
    }
    let completeError: unknown;
    try {
      replay.assertComplete();
    } catch (error) {
      completeError = error;
    }
    return { runError, completeError, result, runtime };
  }

  it("re-runs the recorded thread without a network: same tool calls, same dispatches, same answer", async () => {
    const recording = loadRecording();
    const { runError, completeError, result } = await replayTurns(recording);

    expect(runError).toBeUndefined();
    expect(completeError).toBeUndefined();
    const toolCalls = (result?.messages ?? [])
      .filter((message) => message.getType() === "ai")
      .flatMap((message) => ((message as AIMessage).tool_calls ?? []).map((c) => [c.name, c.args]));
    expect(toolCalls).toEqual(recordedToolCalls(recording));
    expect(result?.subagentRuns.map((run) => [run.subagent_type, run.status])).toEqual(
      recording.children.map((child) => [child.subagent_type, "completed"]),
    );
    expect(result?.output).toBe(recording.calls.at(-1)?.response.data.content);
  });

  it("round-trips: recording the replayed thread gives the same recording, requests included", async () => {
    const recording = loadRecording();
    const { runtime } = await replaying(recording, { record: true });
    for (const input of recording.inputs) {
      await runtime.run({ uid: "demo", threadId: "again", input });
    }
    const again = await recordThread(runtime, "demo", "again");
    expect(again.version).toBe(RECORDING_VERSION);
    expect(withoutIds(again)).toEqual(withoutIds(asCurrent(recording)));
  });

  it("records what each call was sent: the prompt without the subagent list, the list, tools with schema hashes, the messages", () => {
    const recording = loadRecording();
    const [first] = recording.calls;
    expect(first?.request.system_prompt).toMatch(/^You are a helpful assistant/);
    expect(first?.request.system_prompt).not.toContain("Subagents you can call");
    expect(first?.request.subagents.map((s) => s.slug)).toEqual(["researcher", "reviewer"]);
    expect(first?.request.tools.map((t) => t.name)).toContain("task");
    for (const tool of first?.request.tools ?? [])
      expect(tool.schema).toMatch(/^sha256:[0-9a-f]{12}$/);
    expect(first?.request.messages).toEqual([{ role: "human", text: recording.inputs[0] }]);
    const researcher = recording.children.find((child) => child.subagent_type === "researcher");
    expect(researcher?.calls[0]?.request.tools.map((t) => t.name)).not.toContain("task");
  });

  it("refuses to record a thread whose model calls were not noted (recordModelRequests off)", async () => {
    const recording = loadRecording();
    const { runtime } = await replaying(recording);
    await runtime.run({ uid: "demo", threadId: "unnoted", input: recording.inputs[0] ?? "" });

    await expect(recordThread(runtime, "demo", "unnoted")).rejects.toMatchObject({
      code: ErrorCode.Validation,
      field: "recordModelRequests",
      message: expect.stringContaining(
        'what model call #1 of agent "assistant" was sent is unknown',
      ),
    });
  });

  it("fails clearly when the graph asks for a call the recording does not hold", async () => {
    const recording = loadRecording();
    recording.calls.pop();
    const { runError, completeError } = await replayTurns(recording);

    const expected = 'agent "assistant" asked for model call #4, but the recording holds 3';
    expect(runError).toMatchObject({
      code: ErrorCode.ScriptViolation,
      message: expect.stringContaining(expected),
    });
    expect(completeError).toMatchObject({ message: expect.stringContaining(expected) });
  });

  it("fails a subagent whose task the recording does not hold, and names it first", async () => {
    const recording = loadRecording();
    const first = recording.children[0];
    if (first) first.description = "a task that was never recorded";
    const { runError, completeError, runtime } = await replayTurns(recording);

    const expected = 'the recording holds no run of "researcher"';
    // The parent's next call then differs too (it gets the failure as the tool result), but
    // what the run fails with names the first difference.
    expect(runError).toMatchObject({
      code: ErrorCode.ScriptViolation,
      message: expect.stringMatching(
        new RegExp(
          `^replay: ${expected}[\\s\\S]*\\(then: replay of agent "assistant" call #2: input message #3 \\(tool "task"\\) differs\\)$`,
        ),
      ),
    });
    expect(completeError).toMatchObject({ message: expect.stringContaining(expected) });
    const [head] = await runtime.history("demo", "replayed");
    const researcher = head?.subagentRuns.find((run) => run.subagent_type === "researcher");
    expect(researcher?.status).toBe("failed");
    expect(researcher?.error).toContain(expected);
  });

  describe("strict by default: a replay fails when what the graph sends changed", () => {
    it("the main agent's system prompt: the run and assertComplete fail with a diff", async () => {
      const { runError, completeError } = await replayTurns(loadRecording(), {
        change: CHANGES["the main agent's system prompt"],
      });

      const message = (runError as Error | undefined)?.message ?? "";
      expect(runError).toMatchObject({ code: ErrorCode.ScriptViolation });
      expect(message).toMatch(
        /^replay of agent "assistant" call #1: system prompt differs from the recording:\n {2}- "You are a helpful assistant who plans the work/,
      );
      expect(message).toContain('  + "You are a terse assistant who answers in one line."');
      expect(message).toContain("relax with { match: { systemPrompt: false } }");
      expect(message).toContain("rerecordThread(recording, { uid, setup })");
      expect(completeError).toMatchObject({ code: ErrorCode.ScriptViolation, message });
    });

    it("a subagent's system prompt: names the subagent and its task", async () => {
      const { runError, completeError } = await replayTurns(loadRecording(), {
        change: CHANGES["a subagent's system prompt"],
      });

      const headline =
        'replay of subagent "researcher" (task "Plan a weekend workshop on renewable energy for high-school…") call #1: system prompt differs from the recording:\n';
      const message = (runError as Error | undefined)?.message ?? "";
      expect(message.startsWith(headline)).toBe(true);
      expect(message).toContain(
        '  - "You are a careful researcher who gathers facts for one self-contained part of a larger request."',
      );
      expect(message).toContain('  + "You are a hasty researcher."');
      // Its failure then changes what the parent is sent: named, after the cause.
      expect(message).toMatch(
        /\n\(then: replay of agent "assistant" call #2: input message #3 \(tool "task"\) differs\)$/,
      );
      expect((completeError as Error | undefined)?.message).toContain(headline);
    });

    it("a subagent's tools becoming []: names the tools removed", async () => {
      const { runError, completeError } = await replayTurns(loadRecording(), {
        change: CHANGES["a subagent's tools becoming []"],
      });

      const removed =
        "tools differ: removed current_time, ls, read_file, write_file, edit_file, glob, grep";
      for (const error of [runError, completeError]) {
        const message = (error as Error | undefined)?.message ?? "";
        expect(
          message.startsWith(
            `replay of subagent "researcher" (task "Plan a weekend workshop on renewable energy for high-school…") call #1: ${removed}\n`,
          ),
        ).toBe(true);
        // Without file tools the prompt loses its files section too, and says so after.
        expect(message).toContain("system prompt differs from the recording:\n  (from line 5)");
        expect(message).toContain('  - "Files (use ls, read_file');
        expect(message).toContain("relax with { match: { tools: false, systemPrompt: false } }");
      }
    });

    it("a subagent added to the allow-list: names it", async () => {
      const { runError, completeError } = await replayTurns(loadRecording(), {
        change: CHANGES["a subagent added to the allow-list"],
      });

      const expected =
        'replay of agent "assistant" call #1: subagents listed differ: added writer\n(if the change is intended: relax with { match: { subagents: false } }';
      expect((runError as Error | undefined)?.message).toContain(expected);
      expect((completeError as Error | undefined)?.message).toContain(expected);
    });

    it("assertComplete reports a subagent's difference even when the graph contained it and the run finished", async () => {
      // Not comparing the parent's messages, the parent never notices its child failed: only
      // the replay's own record of the child's call can turn the test red.
      const { runError, completeError, result } = await replayTurns(loadRecording(), {
        change: CHANGES["a subagent's system prompt"],
        replay: { match: { messages: false } },
      });

      expect(runError).toBeUndefined();
      expect(result?.subagentRuns.find((run) => run.subagent_type === "researcher")?.status).toBe(
        "failed",
      );
      expect(completeError).toMatchObject({
        code: ErrorCode.ScriptViolation,
        message: expect.stringMatching(
          /^replay of subagent "researcher" \(task "[^"]*"\) call #1: system prompt differs/,
        ),
      });
    });
  });

  describe("relaxing the changed field lets an intentional change pass", () => {
    const cases: [keyof typeof CHANGES, ReplayOptions["match"]][] = [
      ["the main agent's system prompt", { systemPrompt: false }],
      ["a subagent's system prompt", { systemPrompt: false }],
      ["a subagent's tools becoming []", { tools: false, systemPrompt: false }],
      ["a subagent added to the allow-list", { subagents: false }],
    ];
    for (const [change, match] of cases) {
      it(`${change} with ${JSON.stringify(match)}`, async () => {
        const recording = loadRecording();
        const { runError, completeError, result } = await replayTurns(recording, {
          change: CHANGES[change],
          replay: { match },
        });

        expect(runError).toBeUndefined();
        expect(completeError).toBeUndefined();
        expect(result?.output).toBe(recording.calls.at(-1)?.response.data.content);
      });
    }

    it("relaxing another field does not hide the change", async () => {
      const { runError } = await replayTurns(loadRecording(), {
        change: CHANGES["the main agent's system prompt"],
        replay: { match: { tools: false, subagents: false, messages: false } },
      });

      expect((runError as Error | undefined)?.message).toContain("system prompt differs");
    });
  });

  describe("re-recording after an intentional change", () => {
    it("rerecordThread keeps the responses and takes what the changed agents send; the result replays strictly", async () => {
      const recording = loadRecording();
      const change = CHANGES["the main agent's system prompt"];
      const updated = await rerecordThread(recording, {
        uid: "demo",
        setup: async (runtime, uid) => {
          await seedDemo(runtime, uid);
          await change(runtime);
        },
        runtime: ISOLATED,
      });

      expect(updated.calls.map((call) => call.request.system_prompt.split("\n")[0])).toEqual(
        recording.calls.map(() => "You are a terse assistant who answers in one line."),
      );
      const responses = (r: ThreadRecording) =>
        withoutIds(
          [r.calls, ...r.children.map((child) => child.calls)].flat().map((c) => c.response),
        );
      expect(responses(updated)).toEqual(responses(recording));
      expect(withoutIds(updated.children)).toEqual(withoutIds(recording.children));

      const withChange = await replayTurns(updated, { change });
      expect(withChange.runError).toBeUndefined();
      expect(withChange.completeError).toBeUndefined();
      const withoutChange = await replayTurns(updated);
      expect((withoutChange.runError as Error | undefined)?.message).toContain(
        '- "You are a terse assistant who answers in one line."',
      );
    });

    it("rerecordThread says so when the recorded responses no longer fit the agents", async () => {
      const recording = loadRecording();
      recording.calls.pop();

      await expect(
        rerecordThread(recording, { uid: "demo", setup: seedDemo, runtime: ISOLATED }),
      ).rejects.toMatchObject({
        code: ErrorCode.ScriptViolation,
        message: expect.stringMatching(
          /^cannot re-record: the recorded responses no longer fit the agents \(.*asked for model call #4, but the recording holds 3/,
        ),
      });
    });
  });

  describe("recordings of another version", () => {
    it("a version 1 recording (responses only) is refused by a strict replay, saying how to update it", () => {
      let error: unknown;
      try {
        new ReplayModel(loadV1());
      } catch (caught) {
        error = caught;
      }
      expect(SubagentGraphError.isInstance(error)).toBe(true);
      expect(error).toMatchObject({
        code: ErrorCode.Validation,
        field: "version",
        message: expect.stringMatching(
          /^recording version 1 holds the model's responses but not what each call was sent .*rerecordThread\(recording, \{ uid, setup \}\)/,
        ),
      });
    });

    it("a version 1 recording is read with { match: false }, and rerecordThread upgrades it to the current sample", async () => {
      const v1 = loadV1();
      const unchecked = await replayTurns(v1, { replay: { match: false } });
      expect(unchecked.runError).toBeUndefined();
      expect(unchecked.completeError).toBeUndefined();

      const upgraded = await rerecordThread(v1, {
        uid: "demo",
        setup: seedDemo,
        runtime: ISOLATED,
      });
      expect(upgraded.version).toBe(RECORDING_VERSION);
      expect(withoutIds(upgraded)).toEqual(withoutIds(asCurrent(loadRecording())));
    });

    it("a version 2 recording (no approvals) replays strictly as it is", async () => {
      const v2 = JSON.parse(readFileSync(FIXTURE_V2, "utf8")) as ThreadRecordingV2;
      expect(v2.version).toBe(2);
      const { runError, completeError, result } = await replayTurns(v2);

      expect(runError).toBeUndefined();
      expect(completeError).toBeUndefined();
      expect(result?.output).toBe(v2.calls.at(-1)?.response.data.content);
    });

    it("an unknown version or a malformed recording is refused naming the field", () => {
      const future: ThreadRecording = JSON.parse(
        JSON.stringify({ ...loadRecording(), version: RECORDING_VERSION + 1 }),
      );
      expect(() => new ReplayModel(future)).toThrow(
        expect.objectContaining({
          code: ErrorCode.Validation,
          message: expect.stringContaining(
            `recording version ${RECORDING_VERSION + 1} is not one this subagent-graph reads (1 to ${RECORDING_VERSION})`,
          ),
        }),
      );
      const { calls: _calls, ...withoutCalls } = loadRecording();
      expect(() => new ReplayModel(withoutCalls as ThreadRecording)).toThrow(
        expect.objectContaining({
          code: ErrorCode.Validation,
          field: "calls",
          message: expect.stringContaining("the recording is malformed at calls"),
        }),
      );
    });
  });
});
