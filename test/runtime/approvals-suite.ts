import type { ToolMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { ErrorCode } from "../../errors.js";
import type { ScriptStep } from "../../models/scripted.js";
import {
  mainAgentPayload,
  type SaverKindUnderTest,
  subagentPayload,
} from "../support/runtime-fixture.js";
import { ScriptedHarness } from "../support/scripted-harness.js";

const taskCall = (subagent_type: string, description: string) => ({
  name: "task",
  args: { description, subagent_type },
});

/** A tool that notes what it was asked, so a test counts its executions. */
function noteTool(log: string[]) {
  return tool(
    async ({ text }: { text: string }) => {
      log.push(text);
      return `noted: ${text}`;
    },
    {
      name: "note",
      description: "write a note",
      schema: z.object({ text: z.string().min(1) }),
    },
  );
}

async function rejection(promise: Promise<unknown>) {
  try {
    await promise;
  } catch (error) {
    return error as { code?: string; field?: string; message: string };
  }
  throw new Error("expected the call to be refused");
}

/** Approvals (README "Approvals"): pausing, resuming and refusing, on one saver. */
export function runApprovalsSuite(saver: SaverKindUnderTest): void {
  describe(`approvals on the ${saver} saver`, () => {
    const harness = new ScriptedHarness(saver);
    afterEach(() => harness.dispose());

    async function gatedMain(steps: ScriptStep[], gate: unknown = true, tools = ["note"]) {
      const log: string[] = [];
      const main = harness.model("main", steps);
      const runtime = await harness.setup({ "scripted:main": main }, { tools: [noteTool(log)] });
      await runtime.agents.create(
        "alice",
        mainAgentPayload("boss", "scripted:main", undefined, {
          tools,
          interrupt_on: { note: gate },
        }),
      );
      return { runtime, main, log };
    }

    /**
     * Alice's "boss" delegating to a "writer" subagent that gates `note` (all decisions), each
     * with its script; `mainExtra` goes into the boss's context.
     */
    async function gatedWriter(
      mainSteps: ScriptStep[],
      writerSteps: ScriptStep[],
      mainExtra: Record<string, unknown> = {},
    ) {
      const log: string[] = [];
      const main = harness.model("main", mainSteps);
      const writer = harness.model("writer", writerSteps);
      const runtime = await harness.setup(
        { "scripted:main": main, "scripted:writer": writer },
        { tools: [noteTool(log)] },
      );
      await runtime.agents.create(
        "alice",
        subagentPayload("writer", "scripted:writer", {
          tools: ["note"],
          interrupt_on: { note: true },
        }),
      );
      await runtime.agents.create(
        "alice",
        mainAgentPayload("boss", "scripted:main", ["writer"], mainExtra),
      );
      return { runtime, main, writer, log };
    }

    it("pauses a main agent's gated call before it runs, and approve runs it once", async () => {
      const { runtime, main, log } = await gatedMain([
        { reply: { toolCalls: [{ name: "note", args: { text: "hello" } }] } },
        {
          expect: (call) => expect(call.messages.at(-1)?.content).toBe("noted: hello"),
          reply: { text: "done" },
        },
      ]);

      const paused = await runtime.run({
        uid: "alice",
        agent: "boss",
        threadId: "t1",
        input: "go",
      });

      expect(log).toEqual([]);
      expect(paused.interrupts).toHaveLength(1);
      const [request] = paused.interrupts;
      expect(request?.value.actionRequests).toEqual([
        expect.objectContaining({ name: "note", args: { text: "hello" } }),
      ]);
      expect(request?.value.reviewConfigs[0]?.allowedDecisions).toEqual([
        "approve",
        "edit",
        "reject",
      ]);
      expect(request?.value.subagent).toBeUndefined();
      const info = await runtime.runInfo("alice", paused.runId);
      expect(info?.status).toBe("interrupted");
      expect(info?.status_reason).toContain("waiting for approval of note");
      expect(await runtime.threads.interrupts("alice", "t1")).toEqual(paused.interrupts);
      const state = await runtime.threads.state("alice", "t1");
      expect(state?.tasks.flatMap((task) => task.interrupts.map((i) => i.id))).toEqual([
        request?.id,
      ]);

      const done = await runtime.run({
        uid: "alice",
        threadId: "t1",
        command: { resume: { decisions: [{ type: "approve" }] } },
      });

      expect(done.output).toBe("done");
      expect(done.interrupts).toEqual([]);
      expect(log).toEqual(["hello"]);
      expect(main.calls).toHaveLength(2);
      expect((await runtime.runInfo("alice", done.runId))?.status).toBe("success");
      expect(await runtime.threads.interrupts("alice", "t1")).toEqual([]);
      harness.assertScriptsComplete();
    });

    it("reject answers the call with the reason and the model goes on; the tool never runs", async () => {
      const { runtime, log } = await gatedMain([
        { reply: { toolCalls: [{ name: "note", args: { text: "secret" } }] } },
        {
          expect: (call) => {
            const answer = call.messages.at(-1) as ToolMessage;
            expect(answer.getType()).toBe("tool");
            expect(answer.content).toBe("not this one");
          },
          reply: { text: "understood" },
        },
      ]);
      await runtime.run({ uid: "alice", agent: "boss", threadId: "t1", input: "go" });
      const done = await runtime.run({
        uid: "alice",
        threadId: "t1",
        command: { resume: { decisions: [{ type: "reject", message: "not this one" }] } },
      });
      expect(done.output).toBe("understood");
      expect(log).toEqual([]);
      harness.assertScriptsComplete();
    });

    it("a rejection among several calls of one turn leaves no call unanswered", async () => {
      const { runtime, log } = await gatedMain(
        [
          {
            reply: {
              toolCalls: [
                { name: "note", args: { text: "a" } },
                { name: "current_time", args: {} },
              ],
            },
          },
          {
            expect: (call) => {
              const calls = call.messages.flatMap(
                (m) => (m as { tool_calls?: { id?: string }[] }).tool_calls ?? [],
              );
              const answered = new Set(
                call.messages
                  .filter((m) => m.getType() === "tool")
                  .map((m) => (m as ToolMessage).tool_call_id),
              );
              expect(calls.filter((c) => !answered.has(c.id ?? ""))).toEqual([]);
            },
            reply: { text: "fine" },
          },
        ],
        true,
        ["note", "current_time"],
      );
      await runtime.run({ uid: "alice", agent: "boss", threadId: "t1", input: "go" });
      const done = await runtime.run({
        uid: "alice",
        threadId: "t1",
        command: { resume: { decisions: [{ type: "reject" }] } },
      });
      expect(done.output).toBe("fine");
      expect(log).toEqual([]);
      harness.assertScriptsComplete();
    });

    it("edit runs the call with the edited arguments, checked against the tool's schema first", async () => {
      const { runtime, log } = await gatedMain([
        { reply: { toolCalls: [{ name: "note", args: { text: "draft" } }] } },
        { reply: { text: "edited" } },
      ]);
      await runtime.run({ uid: "alice", agent: "boss", threadId: "t1", input: "go" });
      const bad = await rejection(
        runtime.run({
          uid: "alice",
          threadId: "t1",
          command: {
            resume: {
              decisions: [{ type: "edit", editedAction: { name: "note", args: { text: 3 } } }],
            },
          },
        }),
      );
      expect(bad.code).toBe(ErrorCode.Validation);
      expect(bad.field).toBe("command.resume.decisions.0.editedAction.args");
      expect(bad.message).toContain('tool "note"');
      expect(await runtime.threads.interrupts("alice", "t1")).toHaveLength(1);

      const done = await runtime.run({
        uid: "alice",
        threadId: "t1",
        command: {
          resume: {
            decisions: [{ type: "edit", editedAction: { name: "note", args: { text: "final" } } }],
          },
        },
      });
      expect(done.output).toBe("edited");
      expect(log).toEqual(["final"]);
      harness.assertScriptsComplete();
    });

    it("refuses bad resumes and new messages, naming the field, and the request stays resumable", async () => {
      const { runtime, log } = await gatedMain(
        [
          { reply: { toolCalls: [{ name: "note", args: { text: "x" } }] } },
          { reply: { text: "finally" } },
        ],
        { allowed_decisions: ["approve", "reject"] },
      );
      const approve = { resume: { decisions: [{ type: "approve" }] } };
      const unknown = await rejection(
        runtime.run({ uid: "alice", agent: "boss", threadId: "t0", command: approve }),
      );
      expect(unknown.code).toBe(ErrorCode.NotFound);
      await runtime.threads.create("alice", { threadId: "t0" });
      const nothing = await rejection(
        runtime.run({ uid: "alice", agent: "boss", threadId: "t0", command: approve }),
      );
      expect(nothing.code).toBe(ErrorCode.Validation);
      expect(nothing.field).toBe("command");

      const paused = await runtime.run({
        uid: "alice",
        agent: "boss",
        threadId: "t1",
        input: "go",
      });
      const id = paused.interrupts[0]?.id ?? "";
      const cases: [unknown, string][] = [
        [{ decisions: [] }, "command.resume.decisions"],
        [{ decisions: [{ type: "approve" }, { type: "approve" }] }, "command.resume.decisions"],
        [{ decisions: [{ type: "maybe" }] }, "command.resume.decisions.0.type"],
        [
          { decisions: [{ type: "edit", editedAction: { name: "note", args: { text: "y" } } }] },
          "command.resume.decisions.0.type",
        ],
        [{ decisions: [{ type: "reject", message: 7 }] }, "command.resume.decisions.0.message"],
        [
          { "0123456789abcdef0123456789abcdef": { decisions: [{ type: "approve" }] } },
          "command.resume.0123456789abcdef0123456789abcdef",
        ],
        ["yes", "command.resume"],
        [{}, "command.resume"],
      ];
      for (const [resume, field] of cases) {
        const refused = await rejection(
          runtime.run({ uid: "alice", threadId: "t1", command: { resume } }),
        );
        expect(refused.code, JSON.stringify(resume)).toBe(ErrorCode.Validation);
        expect(refused.field, JSON.stringify(resume)).toBe(field);
      }
      const newMessage = await rejection(
        runtime.run({ uid: "alice", threadId: "t1", input: "hi" }),
      );
      expect(newMessage.code).toBe(ErrorCode.AwaitingApproval);
      expect(newMessage.message).toContain(id);
      // Bob with an agent of his own: still nothing of Alice's thread.
      await runtime.agents.create("bob", mainAgentPayload("mine", "scripted:main", undefined));
      const otherUser = await rejection(
        runtime.run({ uid: "bob", agent: "mine", threadId: "t1", command: approve }),
      );
      expect(otherUser.code).toBe(ErrorCode.NotFound);
      expect(otherUser.field).toBe("thread_id");

      expect(await runtime.threads.interrupts("alice", "t1")).toEqual(paused.interrupts);
      const done = await runtime.run({
        uid: "alice",
        threadId: "t1",
        command: { resume: { [id]: { decisions: [{ type: "approve" }] } } },
      });
      expect(done.output).toBe("finally");
      expect(log).toEqual(["x"]);
      harness.assertScriptsComplete();
    });

    it("pauses one subagent of two in parallel; the other finishes; the resume runs nothing twice", async () => {
      const log: string[] = [];
      const main = harness.model("main", [
        {
          reply: {
            toolCalls: [taskCall("writer", "write a note"), taskCall("reader", "read something")],
          },
        },
        {
          expect: (call) => {
            const answers = call.messages
              .filter((m) => m.getType() === "tool")
              .map((m) => m.content);
            expect(answers).toEqual(["wrote it", "read it"]);
          },
          reply: { text: "both done" },
        },
      ]);
      const writer = harness.model("writer", [
        { reply: { toolCalls: [{ name: "note", args: { text: "from writer" } }] } },
        { reply: { text: "wrote it" } },
      ]);
      const reader = harness.model("reader", [{ reply: { text: "read it" } }]);
      const runtime = await harness.setup(
        { "scripted:main": main, "scripted:writer": writer, "scripted:reader": reader },
        { tools: [noteTool(log)] },
      );
      await runtime.agents.create(
        "alice",
        subagentPayload("writer", "scripted:writer", {
          tools: ["note"],
          interrupt_on: {
            note: { allowed_decisions: ["approve", "reject"], description: "a note" },
          },
        }),
      );
      await runtime.agents.create("alice", subagentPayload("reader", "scripted:reader"));
      await runtime.agents.create(
        "alice",
        mainAgentPayload("boss", "scripted:main", ["writer", "reader"]),
      );

      const events: string[] = [];
      let paused: Awaited<ReturnType<typeof runtime.run>> | undefined;
      for await (const event of runtime.stream({
        uid: "alice",
        agent: "boss",
        threadId: "t1",
        input: "go",
      })) {
        events.push(event.type);
        if (event.type === "run_finished") paused = event.result;
      }
      expect(events).toContain("subagent_waiting");
      expect(events).toContain("approval_requested");
      expect(paused?.interrupts).toHaveLength(1);
      const request = paused?.interrupts[0]?.value;
      expect(request?.actionRequests).toEqual([
        { name: "note", args: { text: "from writer" }, description: "a note" },
      ]);
      expect(request?.subagent).toMatchObject({
        subagent_type: "writer",
        description: "write a note",
      });
      expect(JSON.stringify(request)).not.toContain("You are writer");
      const records = Object.fromEntries(
        (paused?.subagentRuns ?? []).map((run) => [run.subagent_type, run.status]),
      );
      expect(records).toEqual({ writer: "waiting", reader: "completed" });
      expect(reader.calls).toHaveLength(1);
      expect(writer.calls).toHaveLength(1);
      expect(main.calls).toHaveLength(1);
      expect(log).toEqual([]);

      const done = await runtime.run({
        uid: "alice",
        threadId: "t1",
        command: { resume: { decisions: [{ type: "approve" }] } },
      });
      expect(done.output).toBe("both done");
      expect(log).toEqual(["from writer"]);
      expect(reader.calls).toHaveLength(1);
      expect(writer.calls).toHaveLength(2);
      expect(main.calls).toHaveLength(2);
      const writerRun = done.subagentRuns.find((run) => run.subagent_type === "writer");
      expect(writerRun?.status).toBe("completed");
      expect(writerRun?.child_thread_id).toBe(request?.subagent?.child_thread_id);
      // The resume's record holds the child it finished, though the call began in the first run.
      const resumed = await runtime.runInfo("alice", done.runId);
      expect(resumed?.subagent_runs.map((run) => [run.subagent_type, run.status])).toEqual([
        ["writer", "completed"],
      ]);
      const first = await runtime.runInfo("alice", paused?.runId ?? "");
      expect(first?.subagent_runs.map((run) => [run.subagent_type, run.status]).sort()).toEqual([
        ["reader", "completed"],
        ["writer", "waiting"],
      ]);
      harness.assertScriptsComplete();
    });

    it("answers two paused subagents with one resume map, and a child that asks twice", async () => {
      const noteOf = (suffix: string): ScriptStep => ({
        reply: (call) => ({
          toolCalls: [
            { name: "note", args: { text: `${String(call.messages[0]?.content)}-${suffix}` } },
          ],
        }),
      });
      const { runtime, main, writer, log } = await gatedWriter(
        [
          { reply: { toolCalls: [taskCall("writer", "one"), taskCall("writer", "two")] } },
          { reply: { text: "all done" } },
        ],
        [
          noteOf("a"),
          noteOf("a"),
          noteOf("b"),
          noteOf("b"),
          { reply: { text: "finished" } },
          { reply: { text: "finished" } },
        ],
      );

      const first = await runtime.run({ uid: "alice", agent: "boss", threadId: "t1", input: "go" });
      expect(first.interrupts).toHaveLength(2);
      const approveAll = (pending: typeof first.interrupts) =>
        Object.fromEntries(pending.map((p) => [p.id, { decisions: [{ type: "approve" }] }]));
      const second = await runtime.run({
        uid: "alice",
        threadId: "t1",
        command: { resume: approveAll(first.interrupts) },
      });
      expect(second.interrupts).toHaveLength(2);
      expect(second.interrupts.map((p) => p.id).sort()).not.toEqual(
        first.interrupts.map((p) => p.id).sort(),
      );
      expect(log.sort()).toEqual(["one-a", "two-a"]);
      const third = await runtime.run({
        uid: "alice",
        threadId: "t1",
        command: { resume: approveAll(second.interrupts) },
      });
      expect(third.output).toBe("all done");
      expect(log.sort()).toEqual(["one-a", "one-b", "two-a", "two-b"]);
      expect(main.calls).toHaveLength(2);
      expect(writer.calls).toHaveLength(6);
      harness.assertScriptsComplete();
    });

    /** One writer child with a 600 ms limit; each of its two model calls takes `delayMs`. */
    async function timedWriter(delayMs: number, waitMs: number) {
      const { runtime } = await gatedWriter(
        [{ reply: { toolCalls: [taskCall("writer", "write")] } }, { reply: { text: "ok" } }],
        [
          { reply: { toolCalls: [{ name: "note", args: { text: "x" } }] }, delayMs },
          { reply: { text: "written" }, delayMs },
        ],
        { subagent_timeout_ms: 600 },
      );
      await runtime.run({ uid: "alice", agent: "boss", threadId: "t1", input: "go" });
      await new Promise((resolve) => setTimeout(resolve, waitMs));
      const done = await runtime.run({
        uid: "alice",
        threadId: "t1",
        command: { resume: { decisions: [{ type: "approve" }] } },
      });
      return done.subagentRuns[0];
    }

    // Time limits do not depend on the saver (the checkpoints' times do not differ): one is enough.
    if (saver === "sqlite") {
      it("never counts the wait for a person against a subagent's time limit", async () => {
        const run = await timedWriter(0, 900);
        expect(run?.status).toBe("completed");
      });

      it("counts a subagent's running time before its pause against its limit", async () => {
        // 2 × 400 ms of running time, over the 600 ms limit though each part is under it.
        const run = await timedWriter(400, 0);
        expect(run?.status).toBe("timeout");
        expect(run?.error).toContain("600 ms");
      });
    }

    it("checks an edit of a subagent's call against that subagent's tool", async () => {
      const { runtime, log } = await gatedWriter(
        [{ reply: { toolCalls: [taskCall("writer", "write")] } }, { reply: { text: "ok" } }],
        [
          { reply: { toolCalls: [{ name: "note", args: { text: "draft" } }] } },
          { reply: { text: "written" } },
        ],
      );
      await runtime.run({ uid: "alice", agent: "boss", threadId: "t1", input: "go" });
      const edit = (args: unknown) => ({
        resume: { decisions: [{ type: "edit", editedAction: { name: "note", args } }] },
      });
      const refused = await rejection(
        runtime.run({ uid: "alice", threadId: "t1", command: edit({ text: "" }) }),
      );
      expect(refused.field).toBe("command.resume.decisions.0.editedAction.args");
      expect(refused.message).toContain("text");
      const done = await runtime.run({
        uid: "alice",
        threadId: "t1",
        command: edit({ text: "final" }),
      });
      expect(done.output).toBe("ok");
      expect(log).toEqual(["final"]);
      harness.assertScriptsComplete();
    });

    it("gates task itself: approve a delegation before the child starts, or edit it", async () => {
      const main = harness.model("main", [
        { reply: { toolCalls: [taskCall("reader", "read A")] } },
        { reply: { text: "ok" } },
      ]);
      const reader = harness.model("reader", [
        {
          expect: (call) => expect(call.messages[0]?.content).toBe("read B"),
          reply: { text: "read B" },
        },
      ]);
      const runtime = await harness.setup({ "scripted:main": main, "scripted:reader": reader });
      await runtime.agents.create("alice", subagentPayload("reader", "scripted:reader"));
      await runtime.agents.create(
        "alice",
        mainAgentPayload("boss", "scripted:main", ["reader"], { interrupt_on: { task: true } }),
      );
      const paused = await runtime.run({
        uid: "alice",
        agent: "boss",
        threadId: "t1",
        input: "go",
      });
      expect(paused.interrupts[0]?.value.actionRequests[0]).toMatchObject({
        name: "task",
        args: { subagent_type: "reader", description: "read A" },
      });
      expect(reader.calls).toHaveLength(0);
      const done = await runtime.run({
        uid: "alice",
        threadId: "t1",
        command: {
          resume: {
            decisions: [
              {
                type: "edit",
                editedAction: {
                  name: "task",
                  args: { subagent_type: "reader", description: "read B" },
                },
              },
            ],
          },
        },
      });
      expect(done.output).toBe("ok");
      harness.assertScriptsComplete();
    });
  });
}
