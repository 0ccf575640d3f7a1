import { readFileSync } from "node:fs";
import type { AIMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { ErrorCode } from "../../errors.js";
import {
  RECORDING_VERSION,
  ReplayModel,
  type ReplayOptions,
  type ThreadRecording,
} from "../../models/replay.js";
import { ScriptedChatModel } from "../../models/scripted.js";
import type { Runtime } from "../../runtime.js";
import { replayThread, rerecordThread } from "../../testing.js";
import { recordThread } from "../../threads/recording.js";
import {
  mainAgentPayload,
  makeRuntime,
  type RuntimeFixture,
  type SaverKindUnderTest,
  subagentPayload,
} from "../support/runtime-fixture.js";
import { ScriptedHarness } from "../support/scripted-harness.js";

/** The tools of the scenario: each notes what it ran with, so a test sees what ran. */
function scenarioTools(log: string[]) {
  const noting = (name: string) =>
    tool(
      async ({ text }: { text: string }) => {
        log.push(`${name}:${text}`);
        return `${name}d: ${text}`;
      },
      { name, description: `${name} a text`, schema: z.object({ text: z.string().min(1) }) },
    );
  return [noting("note"), noting("stamp")];
}

/** `interrupt_on` of the main agent "boss" and of its subagent "writer". */
interface Gates {
  boss: Record<string, unknown>;
  writer: Record<string, unknown>;
}

/** The gates the scenario was recorded with. */
const RECORDED_GATES: Gates = {
  boss: { note: { allowed_decisions: ["approve", "edit", "reject"] } },
  writer: { note: true },
};

/** Alice's agents: "writer" (tool note) and "boss" (tools note, stamp; may call writer). */
async function declareAgents(runtime: Runtime, uid: string, gates: Gates = RECORDED_GATES) {
  await runtime.agents.create(
    uid,
    subagentPayload("writer", "scripted:writer", { tools: ["note"], interrupt_on: gates.writer }),
  );
  await runtime.agents.create(
    uid,
    mainAgentPayload("boss", "scripted:main", ["writer"], {
      tools: ["note", "stamp"],
      interrupt_on: gates.boss,
    }),
  );
}

const INPUT = "write the notes";

/** This scenario's recording, kept as a sample of a recording with pauses. */
const FIXTURE = new URL("../fixtures/recorded-approvals.json", import.meta.url);

/**
 * Checkpoint replay of threads that paused for approval (README "Approvals → replay tests"): the
 * recording holds each pause's request and answer, a replay pauses at the same calls and resumes
 * with the recorded answers, and a gate dropped or added fails it naming the tool. On one saver
 * (the pauses are read from the saver's pending writes).
 */
export function runReplayApprovalsSuite(saver: SaverKindUnderTest): void {
  describe(`replay of a thread that paused for approval, on the ${saver} saver`, () => {
    const harness = new ScriptedHarness(saver);
    const extra: RuntimeFixture[] = [];
    afterEach(async () => {
      await harness.dispose();
      for (const fixture of extra.splice(0)) await fixture.dispose();
    });

    /**
     * Runs the scenario with scripted models on a recording runtime, answering its three pauses
     * (boss's note: edit; writer's first note: reject; writer's second note: approve), and
     * records it.
     */
    async function recordScenario(on: ScriptedHarness = harness) {
      const log: string[] = [];
      const main = on.model("main", [
        {
          reply: {
            toolCalls: [
              { name: "note", args: { text: "m1" } },
              { name: "stamp", args: { text: "s1" } },
            ],
          },
        },
        {
          reply: {
            toolCalls: [
              { name: "task", args: { subagent_type: "writer", description: "write a note" } },
            ],
          },
        },
        { reply: { text: "all noted" } },
      ]);
      const writer = on.model("writer", [
        { reply: { toolCalls: [{ name: "note", args: { text: "w1" } }] } },
        {
          expect: (call) => expect(call.messages.at(-1)?.content).toBe("not that one"),
          reply: { toolCalls: [{ name: "note", args: { text: "w2" } }] },
        },
        { reply: { text: "wrote w2" } },
      ]);
      const runtime = await on.setup(
        { "scripted:main": main, "scripted:writer": writer },
        { tools: scenarioTools(log), runtime: { recordModelRequests: true } },
      );
      await declareAgents(runtime, "alice");

      const answers = [
        {
          decisions: [
            { type: "edit", editedAction: { name: "note", args: { text: "m1-edited" } } },
          ],
        },
        { decisions: [{ type: "reject", message: "not that one" }] },
        { decisions: [{ type: "approve" }] },
      ];
      const paused: string[][] = [];
      let result = await runtime.run({ uid: "alice", agent: "boss", threadId: "t1", input: INPUT });
      for (const resume of answers) {
        paused.push(
          result.interrupts.map(
            (p) =>
              `${p.value.subagent?.subagent_type ?? "boss"}: ${p.value.actionRequests.map((a) => a.name).join(", ")}`,
          ),
        );
        result = await runtime.run({ uid: "alice", threadId: "t1", command: { resume } });
      }
      expect(paused).toEqual([["boss: note"], ["writer: note"], ["writer: note"]]);
      expect(result.interrupts).toEqual([]);
      expect(result.output).toBe("all noted");
      on.assertScriptsComplete();
      const recording = await recordThread(runtime, "alice", "t1");
      return { recording, log: [...log], result };
    }

    /** A fresh runtime on this saver whose every agent is the replay, with the agents of `gates`. */
    async function replaying(
      recording: ThreadRecording,
      options: { gates?: Gates; replay?: ReplayOptions; record?: boolean } = {},
    ) {
      const log: string[] = [];
      const replay = new ReplayModel(recording, options.replay);
      const fixture = await makeRuntime({
        saver,
        tools: scenarioTools(log),
        // The specs the agents name; modelFor serves the replay to all of them.
        models: { "scripted:main": replay, "scripted:writer": replay },
        runtime: { modelFor: () => replay, recordModelRequests: options.record ?? false },
      });
      extra.push(fixture);
      await declareAgents(fixture.runtime, "alice", options.gates);
      return { replay, runtime: fixture.runtime, log };
    }

    let shared: ThreadRecording | undefined;
    /** The scenario recorded once, for the tests that only replay it (a recording is data). */
    async function sharedRecording(): Promise<ThreadRecording> {
      if (!shared) {
        const own = new ScriptedHarness(saver);
        try {
          shared = (await recordScenario(own)).recording;
        } finally {
          await own.dispose();
        }
      }
      return structuredClone(shared);
    }

    async function failure(promise: Promise<unknown>) {
      try {
        await promise;
      } catch (error) {
        return error as { code?: string; message: string };
      }
      throw new Error("expected the replay to fail");
    }

    it("records each pause with its request and the answer, on the call that waited", async () => {
      const { recording } = await recordScenario();

      expect(recording.version).toBe(RECORDING_VERSION);
      const pauses = [
        ...recording.calls.map((call, index) => ["boss", index + 1, call.approval] as const),
        ...(recording.children[0]?.calls ?? []).map(
          (call, index) => ["writer", index + 1, call.approval] as const,
        ),
      ].flatMap(([agent, call, approval]) =>
        approval
          ? [
              {
                agent,
                call,
                tools: approval.request.actionRequests.map((a) => [a.name, a.args]),
                allowed: approval.request.reviewConfigs.map((c) => c.allowedDecisions),
                subagent: approval.request.subagent,
                resume: approval.resume,
              },
            ]
          : [],
      );
      expect(pauses).toEqual([
        {
          agent: "boss",
          call: 1,
          tools: [["note", { text: "m1" }]],
          allowed: [["approve", "edit", "reject"]],
          subagent: undefined,
          resume: {
            decisions: [
              { type: "edit", editedAction: { name: "note", args: { text: "m1-edited" } } },
            ],
          },
        },
        {
          agent: "writer",
          call: 1,
          tools: [["note", { text: "w1" }]],
          allowed: [["approve", "edit", "reject"]],
          subagent: { subagent_type: "writer", description: "write a note" },
          resume: { decisions: [{ type: "reject", message: "not that one" }] },
        },
        {
          agent: "writer",
          call: 2,
          tools: [["note", { text: "w2" }]],
          allowed: [["approve", "edit", "reject"]],
          subagent: { subagent_type: "writer", description: "write a note" },
          resume: { decisions: [{ type: "approve" }] },
        },
      ]);
      // The response as the model gave it: the person's edit is the recorded answer, not the
      // model's call (the thread's message now holds the edited arguments).
      const first = recording.calls[0]?.response.data as { tool_calls?: { args: unknown }[] };
      expect(first.tool_calls?.map((call) => call.args)).toEqual([{ text: "m1" }, { text: "s1" }]);
    });

    it("refuses to record a thread that still waits for approval, saying how to finish it", async () => {
      const main = harness.model("main", [
        { reply: { toolCalls: [{ name: "note", args: { text: "m1" } }] } },
        {
          reply: {
            toolCalls: [
              { name: "task", args: { subagent_type: "writer", description: "write a note" } },
            ],
          },
        },
      ]);
      const writer = harness.model("writer", [
        { reply: { toolCalls: [{ name: "note", args: { text: "w1" } }] } },
      ]);
      const runtime = await harness.setup(
        { "scripted:main": main, "scripted:writer": writer },
        { tools: scenarioTools([]), runtime: { recordModelRequests: true } },
      );
      await declareAgents(runtime, "alice");
      await runtime.run({ uid: "alice", agent: "boss", threadId: "t1", input: INPUT });

      const refusal = (waitsFor: string) =>
        expect.objectContaining({
          code: ErrorCode.Validation,
          field: "threadId",
          message: expect.stringContaining(
            `agent "boss" waits for approval of ${waitsFor}, and a recording holds each pause with the answer it got: resume the thread (command.resume)`,
          ),
        });
      await expect(recordThread(runtime, "alice", "t1")).rejects.toEqual(refusal("note"));
      // Paused in its subagent: the parent thread waits on the child's request.
      const child = await runtime.run({
        uid: "alice",
        threadId: "t1",
        command: { resume: { decisions: [{ type: "approve" }] } },
      });
      expect(child.interrupts[0]?.value.subagent?.subagent_type).toBe("writer");
      await expect(recordThread(runtime, "alice", "t1")).rejects.toEqual(refusal("writer: note"));
    });

    it("replays: pauses where the recording paused, resumes with the recorded answers, ends as recorded", async () => {
      const { recording, log: recordedLog, result: recorded } = await recordScenario();
      const { replay, runtime, log } = await replaying(recording, { record: true });

      const result = await replayThread(runtime, replay, { uid: "alice", threadId: "again" });

      expect(result.output).toBe(recorded.output);
      // The recorded answers, not approvals: the edited note ran, the rejected one did not.
      expect(log).toEqual(recordedLog);
      expect(log).toEqual(["stamp:s1", "note:m1-edited", "note:w2"]);
      const toolCalls = (messages: typeof result.messages) =>
        messages.flatMap((m) => ((m as AIMessage).tool_calls ?? []).map((c) => [c.name, c.args]));
      expect(toolCalls(result.messages)).toEqual(toolCalls(recorded.messages));
      const withoutIds = (value: unknown) =>
        JSON.parse(JSON.stringify(value, (key, v) => (key === "id" ? undefined : v)));
      expect(withoutIds(await recordThread(runtime, "alice", "again"))).toEqual(
        withoutIds(recording),
      );
    });

    // What a replay checks does not depend on the saver (it happens in the model, between runs):
    // once is enough.
    if (saver !== "memory") return;

    it("replays the kept fixture (this scenario, recorded at version 3) strictly", async () => {
      const fixture = JSON.parse(readFileSync(FIXTURE, "utf8")) as ThreadRecording;
      expect(fixture.version).toBe(3);
      const { replay, runtime, log } = await replaying(fixture);

      const result = await replayThread(runtime, replay, { uid: "alice" });

      expect(result.output).toBe("all noted");
      expect(log).toEqual(["stamp:s1", "note:m1-edited", "note:w2"]);
    });

    it("two subagents paused at once: each request is answered with its own recorded answer", async () => {
      const first = (call: { messages: { content: unknown }[] }) =>
        String(call.messages[0]?.content);
      const noteStep = {
        reply: (call: { messages: { content: unknown }[] }) => ({
          toolCalls: [{ name: "note", args: { text: `${first(call)}-a` } }],
        }),
      };
      const answerStep = {
        reply: (call: { messages: { content: unknown }[] }) => ({ text: `done ${first(call)}` }),
      };
      const taskCall = (description: string) => ({
        name: "task",
        args: { subagent_type: "writer", description },
      });
      const main = harness.model("main", [
        { reply: { toolCalls: [taskCall("one"), taskCall("two")] } },
        { reply: { text: "both settled" } },
      ]);
      const writer = harness.model("writer", [noteStep, noteStep, answerStep, answerStep]);
      const recordedLog: string[] = [];
      const runtime = await harness.setup(
        { "scripted:main": main, "scripted:writer": writer },
        { tools: scenarioTools(recordedLog), runtime: { recordModelRequests: true } },
      );
      await declareAgents(runtime, "alice");
      const paused = await runtime.run({
        uid: "alice",
        agent: "boss",
        threadId: "t1",
        input: INPUT,
      });
      expect(paused.interrupts).toHaveLength(2);
      const answer = (description: string | undefined) =>
        description === "one"
          ? { decisions: [{ type: "approve" }] }
          : { decisions: [{ type: "reject", message: "not two" }] };
      const done = await runtime.run({
        uid: "alice",
        threadId: "t1",
        command: {
          resume: Object.fromEntries(
            paused.interrupts.map((p) => [p.id, answer(p.value.subagent?.description)]),
          ),
        },
      });
      expect(done.output).toBe("both settled");
      harness.assertScriptsComplete();
      const recording = await recordThread(runtime, "alice", "t1");
      expect(
        recording.children.map((child) => [child.description, child.calls[0]?.approval?.resume]),
      ).toEqual(
        expect.arrayContaining([
          ["one", answer("one")],
          ["two", answer("two")],
        ]),
      );

      const { replay, runtime: again, log } = await replaying(recording);
      const result = await replayThread(again, replay, { uid: "alice" });

      expect(result.output).toBe("both settled");
      expect(log).toEqual(recordedLog);
      expect(log).toEqual(["note:one-a"]);
    });

    it("fails naming the tool when the main agent no longer gates a call the recording paused on", async () => {
      const recording = await sharedRecording();
      const { replay, runtime, log } = await replaying(recording, {
        gates: { ...RECORDED_GATES, boss: {} },
      });

      const error = await failure(replayThread(runtime, replay, { uid: "alice" }));

      expect(error.code).toBe(ErrorCode.ScriptViolation);
      expect(error.message).toMatch(
        /^replay of agent "boss" call #1: the agent no longer gates note: the recording paused after this call for approval of it, the replay went on to call #2 without a pause\n\(if the change is intended: re-record the fixture with rerecordThread/,
      );
      // Ungated, the call ran as the model made it.
      expect(log).toContain("note:m1");
    });

    it("fails naming the subagent and the tool when a subagent no longer gates its call", async () => {
      const recording = await sharedRecording();
      const { replay, runtime } = await replaying(recording, {
        gates: { ...RECORDED_GATES, writer: {} },
      });

      const error = await failure(replayThread(runtime, replay, { uid: "alice" }));

      // The child's failure is contained (the parent goes on), so its violation is named first.
      expect(error.code).toBe(ErrorCode.ScriptViolation);
      expect(error.message).toMatch(
        /^replay of subagent "writer" \(task "write a note"\) call #1: the agent no longer gates note: the recording paused after this call/,
      );
    });

    it("fails naming the tool when the agent gates a call the recording did not pause on", async () => {
      const recording = await sharedRecording();
      const { replay, runtime } = await replaying(recording, {
        gates: { ...RECORDED_GATES, boss: { ...RECORDED_GATES.boss, task: true } },
      });

      const error = await failure(replayThread(runtime, replay, { uid: "alice" }));

      expect(error.code).toBe(ErrorCode.ScriptViolation);
      expect(error.message).toMatch(
        /^replay of agent "boss" call #2: the agent now gates task \(the run paused for approval of it\), where the recording went on without a pause\n\(if the change is intended: re-record the fixture with rerecordThread.*or relax with \{ match: \{ approvals: false \} \}/,
      );
    });

    it("fails naming both tools when the agent gates another tool of the call than recorded", async () => {
      const recording = await sharedRecording();
      const { replay, runtime } = await replaying(recording, {
        gates: { ...RECORDED_GATES, boss: { stamp: true } },
      });

      const error = await failure(replayThread(runtime, replay, { uid: "alice" }));

      expect(error.code).toBe(ErrorCode.ScriptViolation);
      expect(error.message).toContain(
        'replay of agent "boss" call #1: the request for approval differs from the recording (which paused for note): the agent no longer gates note; the agent now gates stamp',
      );
    });

    it("fails when a gated tool's allowed decisions changed", async () => {
      const recording = await sharedRecording();
      const { replay, runtime } = await replaying(recording, {
        gates: { ...RECORDED_GATES, boss: { note: { allowed_decisions: ["approve", "reject"] } } },
      });

      const error = await failure(replayThread(runtime, replay, { uid: "alice" }));

      expect(error.message).toContain(
        "the decisions allowed for note changed: recorded approve, edit, reject, now approve, reject",
      );
    });

    it("{ match: { approvals: false } } lets an intended gate change pass; rerecordThread takes it in", async () => {
      const recording = await sharedRecording();
      const gates = { ...RECORDED_GATES, boss: { stamp: true } };
      const unused = new ScriptedChatModel("unused", []);
      // The boss's note now runs unedited, so what its model is sent next changes too.
      const relaxed = await replaying(recording, {
        gates,
        replay: { match: { approvals: false, messages: false } },
      });
      const result = await replayThread(relaxed.runtime, relaxed.replay, { uid: "alice" });
      expect(result.output).toBe("all noted");
      // Not answered as recorded any more: stamp was approved, note ran unedited.
      expect(relaxed.log.sort()).toEqual(["note:m1", "note:w2", "stamp:s1"]);

      const updated = await rerecordThread(recording, {
        uid: "alice",
        setup: (runtime, uid) => declareAgents(runtime, uid, gates),
        runtime: {
          tools: scenarioTools([]),
          // The specs the agents name, never called: the re-recording serves the recording.
          models: { "scripted:main": unused, "scripted:writer": unused },
          dataDir: "/tmp/replay-approvals-unused",
          env: {},
        },
      });
      expect(updated.calls[0]?.approval?.request.actionRequests.map((a) => a.name)).toEqual([
        "stamp",
      ]);
      expect(updated.calls[0]?.approval?.resume).toEqual({ decisions: [{ type: "approve" }] });
      const strict = await replaying(updated, { gates });
      await expect(
        replayThread(strict.runtime, strict.replay, { uid: "alice" }),
      ).resolves.toMatchObject({ output: "all noted" });
      const unchanged = await replaying(updated);
      expect(
        (await failure(replayThread(unchanged.runtime, unchanged.replay, { uid: "alice" })))
          .message,
      ).toContain("the agent no longer gates stamp; the agent now gates note");
    });

    it("assertComplete fails when a recorded pause was never answered (resume not called)", async () => {
      const recording = await sharedRecording();
      const { replay, runtime } = await replaying(recording);
      const paused = await runtime.run({
        uid: "alice",
        agent: "boss",
        threadId: "t",
        input: INPUT,
      });
      expect(paused.interrupts).toHaveLength(1);

      expect(() => replay.assertComplete()).toThrow(
        expect.objectContaining({
          code: ErrorCode.ScriptViolation,
          message: expect.stringContaining(
            'replay ended without the pauses for approval the recording holds after agent "boss" call #1 (note)',
          ),
        }),
      );
    });
  });
}
