import type { AIMessage, ToolMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { parseChildThreadId } from "../../checkpoints/child-thread-id.js";
import { ErrorCode } from "../../errors.js";
import { FILES_PROMPT_SECTION } from "../../middleware/file-scope.js";
import type { ScriptStep } from "../../models/scripted.js";
import type { RunEvent } from "../../runs/events.js";
import { FILE_TOOL_NAMES } from "../../sandbox/tools/file-tools.js";
import { readThreadState } from "../../threads/thread-state.js";
import {
  mainAgentPayload,
  type RuntimeFixture,
  type SaverKindUnderTest,
  subagentPayload,
} from "../support/runtime-fixture.js";
import { ScriptedHarness } from "../support/scripted-harness.js";
import { expectOneRecordAndEventPair, streamRun } from "../support/task-calls.js";

const taskCall = (subagent_type: string, description: string, id?: string) => ({
  name: "task",
  args: { description, subagent_type },
  ...(id ? { id } : {}),
});

/** The runtime's task dispatch behaviour, run once per saver. */
export function runTaskDispatchSuite(saver: SaverKindUnderTest): void {
  describe(`task dispatch on the ${saver} saver`, () => {
    const harness = new ScriptedHarness(saver);
    afterEach(() => harness.dispose());
    const model = (name: string, steps: ScriptStep[]) => harness.model(name, steps);
    const setup = (...args: Parameters<ScriptedHarness["setup"]>) => harness.setup(...args);
    const delegatingBoss = (...args: Parameters<ScriptedHarness["delegatingBoss"]>) =>
      harness.delegatingBoss(...args);
    const assertScriptsComplete = () => harness.assertScriptsComplete();

    describe("mounting the task middleware", () => {
      const cases: [string, string[] | undefined, (uid: string) => Promise<void>][] = [
        ["subagents unset", undefined, async () => {}],
        ["subagents empty", [], async () => {}],
        [
          "subagents naming only another user's private subagent and a chat agent",
          ["secret", "helper"],
          async () => {
            const runtime = harness.fixture?.runtime;
            await runtime?.agents.create("bob", subagentPayload("secret", "offline"));
            await runtime?.agents.create("alice", mainAgentPayload("helper", "offline", undefined));
          },
        ],
      ];
      for (const [label, subagents, arrange] of cases) {
        it(`is absent when ${label}`, async () => {
          const main = model("main", [{ reply: { text: "plain answer" } }]);
          const runtime = await setup({ "scripted:main": main });
          await arrange("alice");
          await runtime.agents.create(
            "alice",
            mainAgentPayload("boss", "scripted:main", subagents),
          );

          const result = await runtime.run({ uid: "alice", agent: "boss", input: "hi" });

          expect(result.output).toBe("plain answer");
          expect(main.calls[0]?.tools).not.toContain("task");
          expect(main.calls[0]?.system).not.toContain("`task` tool");
          expect(main.calls[0]?.system).toContain("You are boss, the main agent.");
          expect(result.subagentRuns).toEqual([]);
          assertScriptsComplete();
        });
      }

      it("is present with exactly the visible subagents listed in the system message", async () => {
        const main = model("main", [{ reply: { text: "ok" } }]);
        const runtime = await setup({ "scripted:main": main });
        await runtime.agents.create("alice", subagentPayload("researcher", "offline"));
        await runtime.agents.create("bob", subagentPayload("spy", "offline"));
        await runtime.agents.create(
          "alice",
          mainAgentPayload("boss", "scripted:main", ["researcher", "spy", "missing"]),
        );

        await runtime.run({ uid: "alice", agent: "boss", input: "hi" });

        const call = main.calls[0];
        expect(call?.tools).toContain("task");
        expect(call?.system).toContain("- researcher: the researcher subagent");
        expect(call?.system).not.toContain("spy");
        expect(call?.system).not.toContain("missing");
        expect(harness.fixture?.warnings.join("\n")).toContain('"spy", "missing"');
        assertScriptsComplete();
      });
    });

    it("runs the child on its own thread and returns only its final text", async () => {
      const main = model("main", [
        { reply: { toolCalls: [taskCall("researcher", "Find the capital of France")] } },
        {
          expect: (call) => {
            const result = call.messages.at(-1) as ToolMessage;
            expect(result.getType()).toBe("tool");
            expect(result.content).toBe("Paris is the capital.");
          },
          reply: { text: "The answer is Paris." },
        },
      ]);
      const child = model("child", [
        { reply: { toolCalls: [{ name: "lookup", args: { q: "France" } }] } },
        { reply: { text: "Paris is the capital." } },
      ]);
      const lookup = tool(async ({ q }: { q: string }) => `facts about ${q}`, {
        name: "lookup",
        description: "look something up",
        schema: z.object({ q: z.string() }),
      });
      const runtime = await setup(
        { "scripted:main": main, "scripted:child": child },
        { tools: [lookup] },
      );
      await runtime.agents.create("alice", subagentPayload("researcher", "scripted:child"));
      await runtime.agents.create(
        "alice",
        mainAgentPayload("boss", "scripted:main", ["researcher"], { tools: [] }),
      );

      const result = await runtime.run({
        uid: "alice",
        agent: "boss",
        threadId: "t-main",
        input: "What is the capital of France?",
      });

      expect(result.output).toBe("The answer is Paris.");
      const [run] = result.subagentRuns;
      expect(result.subagentRuns).toHaveLength(1);
      expect(run).toMatchObject({
        subagent_type: "researcher",
        description: "Find the capital of France",
        status: "completed",
        rounds: 2,
        max_rounds_reached: false,
        result_preview: "Paris is the capital.",
        error: null,
        artifacts: [],
        usage: { input_tokens: 20, output_tokens: 10, total_tokens: 30 },
      });
      expect(run?.child_thread_id).toMatch(/^t-main_sub_researcher_[0-9a-f]{8}$/);
      expect(parseChildThreadId(run?.child_thread_id ?? "")?.parentThreadId).toBe("t-main");

      // The parent never sees the child's intermediate steps.
      const parentTypes = result.messages.map((message) => message.getType());
      expect(parentTypes).toEqual(["human", "ai", "tool", "ai"]);
      expect(JSON.stringify(result.messages)).not.toContain("facts about France");
      const toolMessage = result.messages[2] as ToolMessage;
      expect(toolMessage.artifact).toMatchObject({ id: run?.id, status: "completed" });

      // The child's checkpoints live on the child thread, with its whole conversation.
      const saverInstance = runtime.checkpointer;
      const childState = await readThreadState(saverInstance, run?.child_thread_id ?? "");
      expect(childState.messages.map((message) => message.getType())).toEqual([
        "human",
        "ai",
        "tool",
        "ai",
      ]);
      expect(childState.messages[0]?.content).toBe("Find the capital of France");
      expect(childState.messages[2]?.content).toBe("facts about France");
      const parentState = await readThreadState(saverInstance, "t-main");
      expect(parentState.messages).toHaveLength(4);

      const view = await runtime.childThread("alice", run?.child_thread_id ?? "");
      expect(view.messages).toHaveLength(4);
      expect(view.run?.id).toBe(run?.id);
      assertScriptsComplete();
    });

    it("uses the subagent's own model, prompt and tools, never offering it task", async () => {
      const main = model("main", [
        { reply: { toolCalls: [taskCall("researcher", "do research")] } },
        { reply: { text: "done" } },
      ]);
      const child = model("child", [{ reply: { text: "researched" } }]);
      const parentOnly = tool(async () => "parent", {
        name: "parent_only",
        description: "only the parent has it",
        schema: z.object({}),
      });
      const childOnly = tool(async () => "child", {
        name: "child_only",
        description: "only the child has it",
        schema: z.object({}),
      });
      const runtime = await setup(
        { "scripted:main": main, "scripted:child": child },
        { tools: [parentOnly, childOnly] },
      );
      await runtime.agents.create(
        "alice",
        subagentPayload("researcher", "scripted:child", { tools: ["child_only"] }),
      );
      await runtime.agents.create(
        "alice",
        mainAgentPayload("boss", "scripted:main", ["researcher"], { tools: ["parent_only"] }),
      );

      await runtime.run({ uid: "alice", agent: "boss", input: "go" });

      expect(main.calls[0]?.tools.sort()).toEqual(["parent_only", "task"]);
      expect(child.calls).toHaveLength(1);
      expect(child.calls[0]?.tools).toEqual(["child_only"]);
      expect(child.calls[0]?.system).toBe("You are researcher.");
      expect(child.calls[0]?.messages.map((m) => m.content)).toEqual(["do research"]);
      assertScriptsComplete();
    });

    it("never offers task or other forbidden tools to a subagent with default tools", async () => {
      const main = model("main", [
        { reply: { toolCalls: [taskCall("researcher", "x")] } },
        { reply: { text: "done" } },
      ]);
      const child = model("child", [{ reply: { text: "fine" } }]);
      const askUser = tool(async () => "yes", {
        name: "ask_user",
        description: "ask the user",
        schema: z.object({}),
      });
      const runtime = await setup(
        { "scripted:main": main, "scripted:child": child },
        { tools: [askUser] },
      );
      await runtime.agents.create("alice", subagentPayload("researcher", "scripted:child"));
      await runtime.agents.create(
        "alice",
        mainAgentPayload("boss", "scripted:main", ["researcher"]),
      );

      await runtime.run({ uid: "alice", agent: "boss", input: "go" });

      expect(main.calls[0]?.tools.sort()).toEqual(
        ["ask_user", "current_time", ...FILE_TOOL_NAMES, "task"].sort(),
      );
      expect(child.calls[0]?.tools.sort()).toEqual(["current_time", ...FILE_TOOL_NAMES].sort());
      assertScriptsComplete();
    });

    it("runs two task calls of one turn concurrently", async () => {
      const { runtime, children } = await delegatingBoss(
        [
          { reply: { toolCalls: [taskCall("slow-a", "first"), taskCall("slow-b", "second")] } },
          { reply: { text: "both done" } },
        ],
        {
          "slow-a": [{ reply: { text: "A" }, delayMs: 300 }],
          "slow-b": [{ reply: { text: "B" }, delayMs: 300 }],
        },
      );
      const childA = children["slow-a"];
      const childB = children["slow-b"];

      const result = await runtime.run({ uid: "alice", agent: "boss", input: "go" });

      const a = childA?.calls[0];
      const b = childB?.calls[0];
      // Overlap: each started before the other finished.
      expect(a?.startedAt).toBeLessThan(b?.finishedAt ?? 0);
      expect(b?.startedAt).toBeLessThan(a?.finishedAt ?? 0);
      expect(result.subagentRuns.map((run) => [run.subagent_type, run.status])).toEqual([
        ["slow-a", "completed"],
        ["slow-b", "completed"],
      ]);
      assertScriptsComplete();
    });

    it("refuses an unknown or invisible subagent_type with the allowed slugs only", async () => {
      const main = model("main", [
        { reply: { toolCalls: [taskCall("secret", "steal"), taskCall("nope", "x")] } },
        {
          expect: (call) => {
            const results = call.messages.slice(-2) as ToolMessage[];
            for (const result of results) {
              expect(result.status).toBe("error");
              expect(result.content).toContain('use one of "researcher"');
              expect(result.content).not.toContain("bob");
            }
            expect(results[0]?.content).toContain('unknown subagent_type "secret"');
          },
          reply: { text: "could not delegate" },
        },
      ]);
      const bobsModel = model("bob", []);
      const runtime = await setup({ "scripted:main": main, "scripted:bob": bobsModel });
      await runtime.agents.create("bob", subagentPayload("secret", "scripted:bob"));
      await runtime.agents.create("alice", subagentPayload("researcher", "offline"));
      await runtime.agents.create(
        "alice",
        mainAgentPayload("boss", "scripted:main", ["researcher", "secret"]),
      );

      const result = await runtime.run({ uid: "alice", agent: "boss", input: "go" });

      expect(result.output).toBe("could not delegate");
      expect(bobsModel.calls).toHaveLength(0);
      // Each refused call still gets its own record, without a child thread.
      expect(
        result.subagentRuns.map((run) => [run.subagent_type, run.status, run.child_thread_id]),
      ).toEqual([
        ["secret", "failed", ""],
        ["nope", "failed", ""],
      ]);
      expect(result.subagentRuns[0]?.error).toContain('unknown subagent_type "secret"');
      const listed = await runtime.agents.list("alice", { include_subagents: true });
      expect(listed.map((agent) => agent.slug).sort()).toEqual(["boss", "researcher"]);
      assertScriptsComplete();
    });

    it("contains a failing child: failed record, error message, siblings and parent go on", async () => {
      // What the model-call guard makes of the scripted model's error (MODEL_FAILED).
      const brokenModel =
        'model "broken" failed: model exploded; try again later, or check the model server and its key';
      const main = model("main", [
        {
          reply: {
            toolCalls: [
              taskCall("broken", "explode", "c-broken"),
              taskCall("steady", "work", "c-steady"),
            ],
          },
        },
        {
          expect: (call) => {
            const [failed, succeeded] = call.messages.slice(-2) as ToolMessage[];
            expect(failed?.status).toBe("error");
            expect(failed?.content).toBe(`subagent "broken" failed: ${brokenModel}`);
            expect(succeeded?.content).toBe("steady result");
          },
          reply: { text: "partial answer" },
        },
      ]);
      const broken = model("broken", [{ reply: new Error("model exploded") }]);
      // A tool that throws fails nothing but its call: the child's model reads the error.
      const steady = model("steady", [
        { reply: { toolCalls: [{ name: "lookup", args: {} }] }, delayMs: 50 },
        {
          expect: (call) => {
            const answer = call.messages.at(-1) as ToolMessage;
            expect(answer.status).toBe("error");
            expect(answer.content).toBe('tool "lookup" failed: lookup service down');
          },
          reply: { text: "steady result" },
        },
      ]);
      const lookup = tool(
        async () => {
          throw new Error("lookup service down");
        },
        { name: "lookup", description: "look something up", schema: z.object({}) },
      );
      const runtime = await setup(
        {
          "scripted:main": main,
          "scripted:broken": broken,
          "scripted:steady": steady,
        },
        { tools: [lookup] },
      );
      await runtime.agents.create("alice", subagentPayload("broken", "scripted:broken"));
      await runtime.agents.create("alice", subagentPayload("steady", "scripted:steady"));
      await runtime.agents.create(
        "alice",
        mainAgentPayload("boss", "scripted:main", ["broken", "steady"]),
      );

      const { events, result } = await streamRun(runtime, {
        uid: "alice",
        agent: "boss",
        threadId: "t-fail",
        input: "go",
      });

      expect(result.output).toBe("partial answer");
      expect(result.subagentRuns.map((run) => [run.subagent_type, run.status, run.error])).toEqual([
        ["broken", "failed", brokenModel],
        ["steady", "completed", null],
      ]);
      // Each call: one record, one started/finished pair, one ToolMessage.
      const failed = expectOneRecordAndEventPair(events, result, "c-broken").run;
      expect(failed).toMatchObject({ rounds: 0 });
      expect(expectOneRecordAndEventPair(events, result, "c-steady").run.rounds).toBe(2);
      // The failed child's thread exists, holding the task it was given.
      expect(failed.child_thread_id).toMatch(/^t-fail_sub_broken_[0-9a-f]{8}$/);
      const child = await runtime.childThread("alice", failed.child_thread_id);
      expect(child.messages.map((message) => message.content)).toEqual(["explode"]);
      assertScriptsComplete();
    });

    it("records a child that exceeds the caller's subagent_timeout_ms as timeout", async () => {
      const { runtime, children } = await delegatingBoss(
        [
          { reply: { toolCalls: [taskCall("sleepy", "take your time")] } },
          {
            expect: (call) => {
              const result = call.messages.at(-1) as ToolMessage;
              expect(result.status).toBe("error");
              expect(result.content).toBe('subagent "sleepy" timed out after 1500 ms');
            },
            reply: { text: "gave up waiting" },
          },
        ],
        { sleepy: [{ reply: { text: "too late" }, delayMs: 30_000 }] },
        // Long enough for the child's first model call to start on a loaded machine (the
        // script step must be consumed), far shorter than the 30 s the call would take.
        { subagent_timeout_ms: 1500 },
      );

      const result = await runtime.run({ uid: "alice", agent: "boss", input: "go" });

      expect(result.output).toBe("gave up waiting");
      expect(result.subagentRuns[0]).toMatchObject({ status: "timeout", rounds: 0 });
      // The child's model call was aborted, not left running.
      expect(children.sleepy?.calls[0]?.finishedAt).toBeUndefined();
      assertScriptsComplete();
    });

    it("cuts a long answer at the caller's max_result_chars with a visible marker", async () => {
      const long = "é".repeat(30);
      const { runtime } = await delegatingBoss(
        [
          { reply: { toolCalls: [taskCall("verbose", "talk")] } },
          {
            expect: (call) => {
              const result = call.messages.at(-1) as ToolMessage;
              expect(String(result.content)).toMatch(
                /^é{10}\n…\[truncated: 20 of 30 characters omitted; the full answer is in child thread .+_sub_verbose_[0-9a-f]{8}\]$/,
              );
            },
            reply: { text: "ok" },
          },
        ],
        { verbose: [{ reply: { text: long } }] },
        { max_result_chars: 10 },
      );

      const result = await runtime.run({ uid: "alice", agent: "boss", input: "go" });

      const child = await runtime.childThread(
        "alice",
        result.subagentRuns[0]?.child_thread_id ?? "",
      );
      expect(child.messages.at(-1)?.content).toBe(long);
      assertScriptsComplete();
    });

    it("refuses every task call of a turn over max_parallel_subagents, before any child runs", async () => {
      const { runtime, children } = await delegatingBoss(
        [
          {
            reply: {
              toolCalls: [taskCall("one", "a"), taskCall("two", "b"), taskCall("one", "c")],
            },
          },
          {
            expect: (call) => {
              const results = call.messages.slice(-3) as ToolMessage[];
              expect(results.map((result) => result.status)).toEqual(["error", "error", "error"]);
              for (const result of results) {
                expect(result.content).toContain(
                  "this turn made 3 task calls but at most 2 may run at once (max_parallel_subagents)",
                );
              }
            },
            reply: { text: "too many" },
          },
        ],
        { one: [], two: [] },
        { max_parallel_subagents: 2 },
      );

      const result = await runtime.run({ uid: "alice", agent: "boss", input: "go" });

      expect(result.output).toBe("too many");
      expect(children.one?.calls).toHaveLength(0);
      expect(children.two?.calls).toHaveLength(0);
      expect(
        result.subagentRuns.map((run) => [run.status, run.rounds, run.child_thread_id]),
      ).toEqual([
        ["failed", 0, ""],
        ["failed", 0, ""],
        ["failed", 0, ""],
      ]);
      assertScriptsComplete();
    });

    it("re-reads process-wide limits on every dispatch, without a restart", async () => {
      let cap = 1;
      const main = model("main", [
        { reply: { toolCalls: [taskCall("one", "a"), taskCall("one", "b")] } },
        { reply: { text: "refused" } },
        { reply: { toolCalls: [taskCall("one", "a"), taskCall("one", "b")] } },
        { reply: { text: "ran" } },
      ]);
      const one = model("one", [{ reply: { text: "x" } }, { reply: { text: "y" } }]);
      const runtime = await setup(
        { "scripted:main": main, "scripted:one": one },
        { limits: () => ({ max_parallel_subagents: cap }) },
      );
      await runtime.agents.create("alice", subagentPayload("one", "scripted:one"));
      await runtime.agents.create("alice", mainAgentPayload("boss", "scripted:main", ["one"]));

      const first = await runtime.run({ uid: "alice", agent: "boss", input: "go" });
      cap = 2;
      const second = await runtime.run({ uid: "alice", agent: "boss", input: "go" });

      expect(first.subagentRuns.map((run) => run.error)).toEqual([
        expect.stringContaining("at most 1 may run at once"),
        expect.stringContaining("at most 1 may run at once"),
      ]);
      expect(second.subagentRuns.map((run) => run.status)).toEqual(["completed", "completed"]);
      assertScriptsComplete();
    });

    it("sees an updated agent on the next run without a restart", async () => {
      const main = model("main", [{ reply: { text: "one" } }, { reply: { text: "two" } }]);
      const runtime = await setup({ "scripted:main": main });
      const boss = await runtime.agents.create(
        "alice",
        mainAgentPayload("boss", "scripted:main", undefined),
      );
      await runtime.run({ uid: "alice", agent: "boss", input: "first" });
      await runtime.agents.update("alice", boss.id, {
        config_json: { context: { model: "scripted:main", system_prompt: "Updated prompt." } },
      });
      await runtime.run({ uid: "alice", agent: "boss", input: "second" });

      expect(main.calls[0]?.system).toBe(
        `You are boss, the main agent.\n\n${FILES_PROMPT_SECTION}`,
      );
      expect(main.calls[1]?.system).toBe(`Updated prompt.\n\n${FILES_PROMPT_SECTION}`);
      assertScriptsComplete();
    });

    it("keeps threads and child threads private to their owner", async () => {
      const main = model("main", [
        { reply: { toolCalls: [taskCall("researcher", "x")] } },
        { reply: { text: "done" } },
      ]);
      const runtime = await setup({ "scripted:main": main });
      await runtime.agents.create("alice", subagentPayload("researcher", "offline"));
      await runtime.agents.create(
        "alice",
        mainAgentPayload("boss", "scripted:main", ["researcher"]),
      );
      const result = await runtime.run({ uid: "alice", agent: "boss", input: "go" });
      const childId = result.subagentRuns[0]?.child_thread_id ?? "";

      await expect(runtime.childThread("bob", childId)).rejects.toMatchObject({
        code: ErrorCode.NotFound,
      });
      await expect(runtime.history("bob", result.threadId)).rejects.toMatchObject({
        code: ErrorCode.NotFound,
      });
      await expect(
        runtime.childThread("alice", `${result.threadId}_sub_researcher_00000000`),
      ).rejects.toMatchObject({ code: ErrorCode.NotFound });
      // Bob cannot adopt Alice's thread id, nor a child thread id.
      await bobAgent(runtime);
      await expect(
        runtime.run({ uid: "bob", agent: "own", threadId: result.threadId, input: "x" }),
      ).rejects.toMatchObject({ code: ErrorCode.NotFound });
      await expect(
        runtime.run({ uid: "bob", agent: "own", threadId: childId, input: "x" }),
      ).rejects.toMatchObject({ code: ErrorCode.InvalidThreadId });
      expect((await runtime.history("alice", result.threadId)).length).toBeGreaterThan(2);
      assertScriptsComplete();
    });

    it("refuses to run a subagent as a main agent", async () => {
      const runtime = await setup({});
      await runtime.agents.create("alice", subagentPayload("researcher", "offline"));
      await expect(
        runtime.run({ uid: "alice", agent: "researcher", input: "x" }),
      ).rejects.toMatchObject({ code: ErrorCode.AgentIsSubagent });
    });

    it("streams subagent events tagged with the child thread id", async () => {
      const main = model("main", [
        { reply: { toolCalls: [taskCall("researcher", "dig")] } },
        { reply: { text: "final words" } },
      ]);
      const child = model("child", [{ reply: { text: "child words" } }]);
      const runtime = await setup({ "scripted:main": main, "scripted:child": child });
      await runtime.agents.create("alice", subagentPayload("researcher", "scripted:child"));
      await runtime.agents.create(
        "alice",
        mainAgentPayload("boss", "scripted:main", ["researcher"]),
      );

      const events: RunEvent[] = [];
      for await (const event of runtime.stream({ uid: "alice", agent: "boss", input: "go" })) {
        events.push(event);
      }

      const types = events.map((event) => event.type);
      expect(types[0]).toBe("run_started");
      expect(types.at(-1)).toBe("run_finished");
      const started = events.find((event) => event.type === "subagent_started");
      const finished = events.find((event) => event.type === "subagent_finished");
      expect(started).toMatchObject({ subagent_type: "researcher", description: "dig" });
      const childThreadId = started?.type === "subagent_started" ? started.child_thread_id : "";
      expect(finished).toMatchObject({
        run: { child_thread_id: childThreadId, status: "completed" },
      });
      expect(types.indexOf("subagent_started")).toBeLessThan(types.indexOf("subagent_finished"));

      const childMessages = events.filter(
        (event) => event.type === "assistant_message" && event.childThreadId === childThreadId,
      );
      expect(childMessages).toMatchObject([{ text: "child words" }]);
      const mainMessages = events.filter(
        (event) => event.type === "assistant_message" && event.childThreadId === undefined,
      );
      expect(
        mainMessages.map((event) => (event.type === "assistant_message" ? event.text : "")),
      ).toEqual(["", "final words"]);
      const last = events.at(-1);
      expect(last?.type === "run_finished" && last.result.output).toBe("final words");
      assertScriptsComplete();
    });

    it("delegates end to end with the offline model", async () => {
      const runtime = await setup({});
      await runtime.agents.create("alice", subagentPayload("researcher", "offline"));
      await runtime.agents.create("alice", subagentPayload("reviewer", "offline"));
      await runtime.agents.create(
        "alice",
        mainAgentPayload("boss", "offline", ["researcher", "reviewer"]),
      );

      const result = await runtime.run({ uid: "alice", agent: "boss", input: "Plan a garden" });

      expect(result.subagentRuns.map((run) => [run.subagent_type, run.status])).toEqual([
        ["researcher", "completed"],
        ["reviewer", "completed"],
      ]);
      expect(result.output).toMatch(/^\[offline model\] Here is what my subagents found/);
      expect(result.output).toContain("You are researcher.");
      expect(result.output).toContain("You are reviewer.");
      const firstTurn = result.messages[1] as AIMessage;
      expect(firstTurn.tool_calls?.map((call) => call.args.subagent_type)).toEqual([
        "researcher",
        "reviewer",
      ]);
    });
  });
}

async function bobAgent(runtime: RuntimeFixture["runtime"]) {
  await runtime.agents.create("bob", mainAgentPayload("own", "offline", undefined));
}
