import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { ToolMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { ErrorCode } from "../../errors.js";
import type { ScriptStep } from "../../models/scripted.js";
import type { RunEvent } from "../../runs/events.js";
import { FILE_TOOL_NAMES } from "../../sandbox/tools/file-tools.js";
import {
  mainAgentPayload,
  type SaverKindUnderTest,
  subagentPayload,
} from "../support/runtime-fixture.js";
import { ScriptedHarness } from "../support/scripted-harness.js";
import { until } from "../support/until.js";

const taskCall = (subagent_type: string, description: string, tools?: string[]) => ({
  name: "task",
  args: { description, subagent_type, ...(tools ? { tools } : {}) },
});

/** A registered tool whose handler counts its calls (a spy on a real side effect). */
function spyTool(name: string) {
  const calls: unknown[] = [];
  const registered = tool(
    async (input: { text?: string | undefined }) => {
      calls.push(input);
      return `${name} did it`;
    },
    { name, description: `the ${name} tool`, schema: z.object({ text: z.string().optional() }) },
  );
  return { tool: registered, calls };
}

const lastToolMessages = (messages: readonly unknown[], count: number) =>
  messages.slice(-count) as ToolMessage[];

/** The bounded, guarded execution of subagents (rounds, tools, cancel, timeouts, config). */
export function runDispatchControlsSuite(saver: SaverKindUnderTest): void {
  describe(`dispatch controls on the ${saver} saver`, () => {
    const harness = new ScriptedHarness(saver);
    afterEach(() => harness.dispose());
    const model = (name: string, steps: ScriptStep[]) => harness.model(name, steps);
    const setup = (...args: Parameters<ScriptedHarness["setup"]>) => harness.setup(...args);
    const delegatingBoss = (...args: Parameters<ScriptedHarness["delegatingBoss"]>) =>
      harness.delegatingBoss(...args);
    const assertScriptsComplete = () => harness.assertScriptsComplete();

    describe("rounds", () => {
      it("stops a child after max_rounds model calls and answers with its last text", async () => {
        const lookup = spyTool("lookup");
        const main = model("main", [
          { reply: { toolCalls: [taskCall("digger", "dig")] } },
          {
            expect: (call) => expect(call.messages.at(-1)?.content).toBe("still digging"),
            reply: { text: "ok" },
          },
        ]);
        const child = model("digger", [
          { reply: { text: "first look", toolCalls: [{ name: "lookup", args: {} }] } },
          { reply: { text: "still digging", toolCalls: [{ name: "lookup", args: {} }] } },
        ]);
        const runtime = await setup(
          { "scripted:main": main, "scripted:digger": child },
          { tools: [lookup.tool] },
        );
        await runtime.agents.create(
          "alice",
          subagentPayload("digger", "scripted:digger", { max_rounds: 2 }),
        );
        await runtime.agents.create("alice", mainAgentPayload("boss", "scripted:main", ["digger"]));

        const result = await runtime.run({ uid: "alice", agent: "boss", input: "go" });

        expect(result.subagentRuns[0]).toMatchObject({
          status: "completed",
          rounds: 2,
          max_rounds_reached: true,
        });
        // The last round's tool calls still ran; no third model call was made.
        expect(lookup.calls).toHaveLength(2);
        assertScriptsComplete();
      });

      it("with max_rounds = 1 and an all-tool-call round, answers with empty text", async () => {
        const lookup = spyTool("lookup");
        const main = model("main", [
          { reply: { toolCalls: [taskCall("digger", "dig")] } },
          {
            expect: (call) => {
              const [result] = lastToolMessages(call.messages, 1);
              expect(result?.content).toBe("");
              expect(result?.status).toBe("success");
            },
            reply: { text: "nothing came back" },
          },
        ]);
        const child = model("digger", [{ reply: { toolCalls: [{ name: "lookup", args: {} }] } }]);
        const runtime = await setup(
          { "scripted:main": main, "scripted:digger": child },
          // The process-wide default applies when the subagent sets no max_rounds.
          { tools: [lookup.tool], limits: { max_rounds: 1 } },
        );
        await runtime.agents.create("alice", subagentPayload("digger", "scripted:digger"));
        await runtime.agents.create("alice", mainAgentPayload("boss", "scripted:main", ["digger"]));

        const result = await runtime.run({ uid: "alice", agent: "boss", input: "go" });

        expect(result.subagentRuns[0]).toMatchObject({
          status: "completed",
          rounds: 1,
          max_rounds_reached: true,
          result_preview: "",
        });
        expect(lookup.calls).toHaveLength(1);
        assertScriptsComplete();
      });
    });

    describe("tool allow-set", () => {
      it("offers a child its tools minus the never-allowed ones; mcp_ tools stay", async () => {
        const names = [
          "alpha",
          "mcp_fs_read",
          "call_plugin_api",
          "send_message",
          "run_command",
          "list_my_tasks",
          "create_subtask",
          "inject_task",
          "ask_user",
        ];
        const main = model("main", [
          { reply: { toolCalls: [taskCall("worker", "work")] } },
          { reply: { text: "ok" } },
        ]);
        const child = model("worker", [{ reply: { text: "done" } }]);
        const runtime = await setup(
          { "scripted:main": main, "scripted:worker": child },
          { tools: names.map((name) => spyTool(name).tool) },
        );
        await runtime.agents.create("alice", subagentPayload("worker", "scripted:worker"));
        await runtime.agents.create("alice", mainAgentPayload("boss", "scripted:main", ["worker"]));

        await runtime.run({ uid: "alice", agent: "boss", input: "go" });

        expect(child.calls[0]?.tools.sort()).toEqual(
          ["alpha", "current_time", ...FILE_TOOL_NAMES, "mcp_fs_read"].sort(),
        );
        assertScriptsComplete();
      });

      it("narrows a call to the listed tools, offering the child only their schemas", async () => {
        const main = model("main", [
          { reply: { toolCalls: [taskCall("worker", "work", ["alpha"])] } },
          { reply: { text: "ok" } },
        ]);
        const child = model("worker", [{ reply: { text: "done" } }]);
        const runtime = await setup(
          { "scripted:main": main, "scripted:worker": child },
          { tools: [spyTool("alpha").tool, spyTool("beta").tool] },
        );
        await runtime.agents.create("alice", subagentPayload("worker", "scripted:worker"));
        await runtime.agents.create("alice", mainAgentPayload("boss", "scripted:main", ["worker"]));

        await runtime.run({ uid: "alice", agent: "boss", input: "go" });

        expect(child.calls[0]?.tools).toEqual(["alpha"]);
        assertScriptsComplete();
      });

      it("refuses the whole call when tools names anything outside the set", async () => {
        const main = model("main", [
          { reply: { toolCalls: [taskCall("worker", "work", ["alpha", "ghost", "task"])] } },
          {
            expect: (call) => {
              const [result] = lastToolMessages(call.messages, 1);
              expect(result?.status).toBe("error");
              expect(result?.content).toContain(
                'refused: tools "ghost", "task" are not in the allowed set of subagent "worker"',
              );
              expect(result?.content).toContain(
                "choose from: alpha, current_time, edit_file, glob, grep, ls, read_file, write_file, or omit tools",
              );
            },
            reply: { text: "ok" },
          },
        ]);
        const child = model("worker", []);
        const runtime = await setup(
          { "scripted:main": main, "scripted:worker": child },
          { tools: [spyTool("alpha").tool] },
        );
        await runtime.agents.create("alice", subagentPayload("worker", "scripted:worker"));
        await runtime.agents.create("alice", mainAgentPayload("boss", "scripted:main", ["worker"]));

        const result = await runtime.run({ uid: "alice", agent: "boss", input: "go" });

        expect(child.calls).toHaveLength(0);
        expect(result.subagentRuns[0]).toMatchObject({ status: "failed", child_thread_id: "" });
        assertScriptsComplete();
      });

      it("guards execution: a call outside the set never reaches the tool's handler", async () => {
        const send = spyTool("send_message");
        const beta = spyTool("beta");
        const alpha = spyTool("alpha");
        const main = model("main", [
          { reply: { toolCalls: [taskCall("worker", "work", ["alpha"])] } },
          { reply: { text: "ok" } },
        ]);
        const child = model("worker", [
          {
            reply: {
              toolCalls: [
                { name: "send_message", args: { text: "leak" } },
                { name: "beta", args: {} },
                { name: "alpha", args: {} },
              ],
            },
          },
          {
            expect: (call) => {
              const results = lastToolMessages(call.messages, 3);
              expect(results.map((result) => result.content)).toEqual([
                "tool not in allowed set: send_message",
                "tool not in allowed set: beta",
                "alpha did it",
              ]);
            },
            reply: { text: "done" },
          },
        ]);
        const runtime = await setup(
          { "scripted:main": main, "scripted:worker": child },
          { tools: [send.tool, beta.tool, alpha.tool] },
        );
        await runtime.agents.create("alice", subagentPayload("worker", "scripted:worker"));
        await runtime.agents.create("alice", mainAgentPayload("boss", "scripted:main", ["worker"]));

        await runtime.run({ uid: "alice", agent: "boss", input: "go" });

        expect(send.calls).toHaveLength(0);
        expect(beta.calls).toHaveLength(0);
        expect(alpha.calls).toHaveLength(1);
        assertScriptsComplete();
      });

      it("answers a hallucinated call of a child that has no tools at all", async () => {
        const main = model("main", [
          { reply: { toolCalls: [taskCall("bare", "work")] } },
          {
            expect: (call) => expect(call.messages.at(-1)?.content).toBe("recovered"),
            reply: { text: "ok" },
          },
        ]);
        const child = model("bare", [
          { reply: { toolCalls: [{ name: "send_message", args: {} }] } },
          {
            expect: (call) =>
              expect(call.messages.at(-1)?.content).toBe("tool not in allowed set: send_message"),
            reply: { text: "recovered" },
          },
        ]);
        const runtime = await setup({ "scripted:main": main, "scripted:bare": child });
        await runtime.agents.create(
          "alice",
          subagentPayload("bare", "scripted:bare", { tools: [] }),
        );
        await runtime.agents.create("alice", mainAgentPayload("boss", "scripted:main", ["bare"]));

        await runtime.run({ uid: "alice", agent: "boss", input: "go" });
        assertScriptsComplete();
      });
    });

    describe("general-purpose subagent", () => {
      it("uses the parent's model and tools (minus never-allowed) and a per-call prompt", async () => {
        const intent = "Summarise <b>this</b> & that";
        const alpha = spyTool("alpha");
        const main = model("main", [
          { reply: { toolCalls: [taskCall("general-purpose", intent)] } },
          {
            // The general-purpose child runs on the parent's model: its own prompt and tools.
            expect: (call) => {
              expect(call.system).toContain("<intent>");
              expect(call.system).not.toContain("You are boss, the main agent.");
              expect(call.tools).not.toContain("task");
            },
            reply: { toolCalls: [{ name: "alpha", args: {} }] },
          },
          {
            expect: (call) => expect(call.messages.at(-1)?.content).toBe("alpha did it"),
            reply: { text: "summary written" },
          },
          {
            expect: (call) => expect(call.messages.at(-1)?.content).toBe("summary written"),
            reply: { text: "final" },
          },
        ]);
        const runtime = await setup(
          { "scripted:main": main },
          { tools: [alpha.tool, spyTool("ask_user").tool] },
        );
        await runtime.agents.create(
          "alice",
          mainAgentPayload("boss", "scripted:main", ["general-purpose"], {
            tools: ["alpha", "ask_user"],
          }),
        );

        const result = await runtime.run({ uid: "alice", agent: "boss", input: "go" });

        const gpCall = main.calls[1];
        expect(gpCall?.tools).toEqual(["alpha"]);
        expect(gpCall?.system).toContain(
          "<intent>\nSummarise &lt;b&gt;this&lt;/b&gt; &amp; that\n</intent>",
        );
        expect(gpCall?.system).toContain("<tools>alpha</tools>");
        expect(gpCall?.messages.map((message) => message.content)).toEqual([intent]);
        expect(result.subagentRuns[0]).toMatchObject({
          subagent_type: "general-purpose",
          status: "completed",
          rounds: 2,
        });
        expect(main.calls[0]?.system).toContain("- general-purpose: ");
        assertScriptsComplete();
      });

      it("reserves the slug for the built-in", async () => {
        const runtime = await setup({});
        await expect(
          runtime.agents.create("alice", subagentPayload("general-purpose", "offline")),
        ).rejects.toMatchObject({ code: ErrorCode.Validation, field: "slug" });
      });
    });

    describe("cancellation", () => {
      it("stops the run and its running children and leaves the thread usable", async () => {
        const main = model("main", [
          { reply: { toolCalls: [taskCall("slow", "wait"), taskCall("quick", "now")] } },
          {
            expect: (call) => {
              const types = call.messages.map((message) => message.getType());
              expect(types).toEqual(["human", "ai", "tool", "tool", "human"]);
            },
            reply: { text: "fresh answer" },
          },
        ]);
        const slow = model("slow", [{ reply: { text: "never" }, delayMs: 30_000 }]);
        const quick = model("quick", [{ reply: { text: "quick result" } }]);
        const runtime = await setup({
          "scripted:main": main,
          "scripted:slow": slow,
          "scripted:quick": quick,
        });
        await runtime.agents.create("alice", subagentPayload("slow", "scripted:slow"));
        await runtime.agents.create("alice", subagentPayload("quick", "scripted:quick"));
        await runtime.agents.create(
          "alice",
          mainAgentPayload("boss", "scripted:main", ["slow", "quick"]),
        );

        const events: RunEvent[] = [];
        let runId = "";
        const consume = async () => {
          for await (const event of runtime.stream({
            uid: "alice",
            agent: "boss",
            threadId: "t-cancel",
            input: "go",
          })) {
            events.push(event);
            if (event.type === "run_started") runId = event.runId;
            if (event.type === "subagent_finished" && event.run.subagent_type === "quick") {
              // Cancel only once the slow child is inside its model call.
              await until(() => slow.calls.length > 0);
              expect(await runtime.cancel("bob", runId)).toBe(false);
              expect(await runtime.cancel("alice", runId)).toBe(true);
            }
          }
        };

        await expect(consume()).rejects.toMatchObject({ code: ErrorCode.Cancelled });

        // The slow child's model call was aborted, not left running.
        expect(slow.calls[0]?.finishedAt).toBeUndefined();
        const history = await runtime.history("alice", "t-cancel");
        const latest = history[0];
        expect(latest?.subagentRuns.map((run) => [run.subagent_type, run.status])).toEqual(
          expect.arrayContaining([["slow", "cancelled"]]),
        );
        const slowRun = latest?.subagentRuns.find((run) => run.subagent_type === "slow");
        expect(slowRun?.child_thread_id).toMatch(/^t-cancel_sub_slow_[0-9a-f]{8}$/);
        // Its start is the child's own (its first checkpoint), not the run's.
        const slowHistory = await runtime.childHistory("alice", slowRun?.child_thread_id ?? "");
        expect(slowRun?.started_at).toBe(slowHistory.at(-1)?.createdAt);
        // Every tool call of the cancelled turn is answered, so the next run works.
        const next = await runtime.run({
          uid: "alice",
          agent: "boss",
          threadId: "t-cancel",
          input: "again",
        });
        expect(next.output).toBe("fresh answer");
        assertScriptsComplete();
      });

      it("honours the run's AbortSignal the same way", async () => {
        const main = model("main", [{ reply: { toolCalls: [taskCall("slow", "wait")] } }]);
        const slow = model("slow", [{ reply: { text: "never" }, delayMs: 30_000 }]);
        const runtime = await setup({ "scripted:main": main, "scripted:slow": slow });
        await runtime.agents.create("alice", subagentPayload("slow", "scripted:slow"));
        await runtime.agents.create("alice", mainAgentPayload("boss", "scripted:main", ["slow"]));
        const controller = new AbortController();

        const running = runtime.run({
          uid: "alice",
          agent: "boss",
          threadId: "t-signal",
          input: "go",
          signal: controller.signal,
        });
        await until(() => slow.calls.length === 1);
        controller.abort();

        await expect(running).rejects.toMatchObject({ code: ErrorCode.Cancelled });
        const [latest] = await runtime.history("alice", "t-signal");
        expect(latest?.subagentRuns).toMatchObject([
          { subagent_type: "slow", status: "cancelled" },
        ]);
        expect(latest?.messages.at(-1)?.getType()).toBe("tool");
        assertScriptsComplete();
      });
    });

    it("a timed-out child is recorded timeout while its siblings and the parent carry on", async () => {
      const main = model("main", [
        { reply: { toolCalls: [taskCall("sleepy", "slow"), taskCall("steady", "fast")] } },
        {
          expect: (call) => {
            const [timedOut, done] = lastToolMessages(call.messages, 2);
            expect(timedOut?.content).toBe('subagent "sleepy" timed out after 1500 ms');
            expect(done?.content).toBe("steady result");
          },
          reply: { text: "partial" },
        },
      ]);
      const sleepy = model("sleepy", [{ reply: { text: "late" }, delayMs: 30_000 }]);
      const steady = model("steady", [{ reply: { text: "steady result" } }]);
      const runtime = await setup({
        "scripted:main": main,
        "scripted:sleepy": sleepy,
        "scripted:steady": steady,
      });
      await runtime.agents.create("alice", subagentPayload("sleepy", "scripted:sleepy"));
      await runtime.agents.create("alice", subagentPayload("steady", "scripted:steady"));
      await runtime.agents.create(
        "alice",
        mainAgentPayload("boss", "scripted:main", ["sleepy", "steady"], {
          // The steady siblings must finish within it on a loaded machine too; the sleepy
          // one would take 30 s.
          subagent_timeout_ms: 1500,
        }),
      );

      const result = await runtime.run({ uid: "alice", agent: "boss", input: "go" });

      expect(result.output).toBe("partial");
      expect(result.subagentRuns.map((run) => [run.subagent_type, run.status])).toEqual([
        ["sleepy", "timeout"],
        ["steady", "completed"],
      ]);
      assertScriptsComplete();
    });

    describe("live config", () => {
      it("re-reads the settings file between two dispatches of one process", async () => {
        const twoCalls = { reply: { toolCalls: [taskCall("one", "a"), taskCall("one", "b")] } };
        const main = model("main", [
          twoCalls,
          { reply: { text: "first" } },
          twoCalls,
          { reply: { text: "second" } },
        ]);
        const one = model("one", [{ reply: { text: "x" } }, { reply: { text: "y" } }]);
        const runtime = await setup({ "scripted:main": main, "scripted:one": one });
        const settings = join(harness.fixture?.dataDir ?? "", "settings.json");
        await runtime.agents.create("alice", subagentPayload("one", "scripted:one"));
        await runtime.agents.create("alice", mainAgentPayload("boss", "scripted:main", ["one"]));

        writeFileSync(settings, JSON.stringify({ subagent: { max_parallel_subagents: 1 } }));
        const first = await runtime.run({ uid: "alice", agent: "boss", input: "go" });
        writeFileSync(settings, JSON.stringify({ subagent: { max_parallel_subagents: 2 } }));
        const second = await runtime.run({ uid: "alice", agent: "boss", input: "go" });

        expect(first.subagentRuns.map((run) => run.status)).toEqual(["failed", "failed"]);
        expect(second.subagentRuns.map((run) => run.status)).toEqual(["completed", "completed"]);
        assertScriptsComplete();
      });

      it("applies an update of the calling agent to its next dispatch", async () => {
        const twoCalls = { reply: { toolCalls: [taskCall("one", "a"), taskCall("one", "b")] } };
        const main = model("main", [
          twoCalls,
          { reply: { text: "first" } },
          twoCalls,
          { reply: { text: "second" } },
        ]);
        const one = model("one", [{ reply: { text: "x" } }, { reply: { text: "y" } }]);
        const runtime = await setup({ "scripted:main": main, "scripted:one": one });
        await runtime.agents.create("alice", subagentPayload("one", "scripted:one"));
        const boss = await runtime.agents.create(
          "alice",
          mainAgentPayload("boss", "scripted:main", ["one"], { max_parallel_subagents: 1 }),
        );

        const first = await runtime.run({ uid: "alice", agent: "boss", input: "go" });
        await runtime.agents.update("alice", boss.id, {
          config_json: { context: { ...boss.config_json.context, max_parallel_subagents: 2 } },
        });
        const second = await runtime.run({ uid: "alice", agent: "boss", input: "go" });

        expect(first.subagentRuns.map((run) => run.status)).toEqual(["failed", "failed"]);
        expect(second.subagentRuns.map((run) => run.status)).toEqual(["completed", "completed"]);
        assertScriptsComplete();
      });

      it("removes the task tool entirely when delegation is switched off", async () => {
        const main = model("main", [
          {
            expect: (call) => {
              expect(call.tools).not.toContain("task");
              expect(call.system).not.toContain("`task` tool");
            },
            reply: { text: "on my own" },
          },
        ]);
        const runtime = await setup(
          { "scripted:main": main },
          { env: { SUBAGENT_ENABLED: "false" } },
        );
        await runtime.agents.create("alice", subagentPayload("one", "offline"));
        await runtime.agents.create("alice", mainAgentPayload("boss", "scripted:main", ["one"]));

        const result = await runtime.run({ uid: "alice", agent: "boss", input: "go" });

        expect(result.output).toBe("on my own");
        assertScriptsComplete();
      });

      it("ignores an invalid settings file with a warning naming it", async () => {
        const main = model("main", [
          { reply: { toolCalls: [taskCall("one", "a")] } },
          { reply: { text: "done" } },
        ]);
        const runtime = await setup({ "scripted:main": main });
        writeFileSync(
          join(harness.fixture?.dataDir ?? "", "settings.json"),
          JSON.stringify({ subagent: { max_rounds: 0 } }),
        );
        await runtime.agents.create("alice", subagentPayload("one", "offline"));
        await runtime.agents.create("alice", mainAgentPayload("boss", "scripted:main", ["one"]));

        const result = await runtime.run({ uid: "alice", agent: "boss", input: "go" });

        expect(result.subagentRuns[0]?.status).toBe("completed");
        expect(harness.fixture?.warnings.join("\n")).toMatch(
          /ignoring settings file .*settings\.json/,
        );
        expect(harness.fixture?.warnings.join("\n")).toContain("subagent.max_rounds");
        assertScriptsComplete();
      });
    });

    it("sums each child's usage into the run that dispatched it", async () => {
      const main = model("main", [
        { reply: { toolCalls: [taskCall("one", "a"), taskCall("two", "b")] } },
        { reply: { text: "first" } },
        { reply: { toolCalls: [taskCall("one", "c")] } },
        { reply: { text: "second" } },
      ]);
      const one = model("one", [{ reply: { text: "x" } }, { reply: { text: "y" } }]);
      const two = model("two", [
        { reply: { toolCalls: [{ name: "current_time", args: {} }] } },
        { reply: { text: "z" } },
      ]);
      const runtime = await setup({
        "scripted:main": main,
        "scripted:one": one,
        "scripted:two": two,
      });
      await runtime.agents.create("alice", subagentPayload("one", "scripted:one"));
      await runtime.agents.create("alice", subagentPayload("two", "scripted:two"));
      await runtime.agents.create(
        "alice",
        mainAgentPayload("boss", "scripted:main", ["one", "two"]),
      );

      const first = await runtime.run({
        uid: "alice",
        agent: "boss",
        threadId: "t-u",
        input: "go",
      });
      const second = await runtime.run({
        uid: "alice",
        agent: "boss",
        threadId: "t-u",
        input: "go",
      });

      // The scripted model reports 10 in / 5 out per call: one call for "one", two for "two".
      expect(first.subagentRuns.map((run) => run.usage.total_tokens)).toEqual([15, 30]);
      expect(first.subagentUsage).toEqual({
        input_tokens: 30,
        output_tokens: 15,
        total_tokens: 45,
      });
      expect(second.subagentRuns).toHaveLength(3);
      expect(second.subagentUsage).toEqual({
        input_tokens: 10,
        output_tokens: 5,
        total_tokens: 15,
      });
      assertScriptsComplete();
    });

    it("isolates failures: failing, timed-out and refused calls never stop a sibling", async () => {
      const main = model("main", [
        {
          reply: {
            toolCalls: [
              taskCall("broken", "a"),
              taskCall("sleepy", "b"),
              taskCall("steady", "c", ["nonexistent"]),
              taskCall("steady", "d"),
            ],
          },
        },
        {
          expect: (call) => {
            const results = lastToolMessages(call.messages, 4);
            expect(results.map((result) => result.status)).toEqual([
              "error",
              "error",
              "error",
              "success",
            ]);
          },
          reply: { text: "carried on" },
        },
      ]);
      const broken = model("broken", [{ reply: new Error("kaput") }]);
      const sleepy = model("sleepy", [{ reply: { text: "late" }, delayMs: 30_000 }]);
      const steady = model("steady", [{ reply: { text: "fine" } }]);
      const runtime = await setup({
        "scripted:main": main,
        "scripted:broken": broken,
        "scripted:sleepy": sleepy,
        "scripted:steady": steady,
      });
      for (const slug of ["broken", "sleepy", "steady"]) {
        await runtime.agents.create("alice", subagentPayload(slug, `scripted:${slug}`));
      }
      await runtime.agents.create(
        "alice",
        mainAgentPayload("boss", "scripted:main", ["broken", "sleepy", "steady"], {
          max_parallel_subagents: 4,
          // The steady siblings must finish within it on a loaded machine too; the sleepy
          // one would take 30 s.
          subagent_timeout_ms: 1500,
        }),
      );

      const result = await runtime.run({ uid: "alice", agent: "boss", input: "go" });

      expect(result.output).toBe("carried on");
      expect(result.subagentRuns.map((run) => [run.subagent_type, run.status])).toEqual([
        ["broken", "failed"],
        ["sleepy", "timeout"],
        ["steady", "failed"],
        ["steady", "completed"],
      ]);
      assertScriptsComplete();
    });

    it("keeps the rounds and usage of a child that failed part-way in its record", async () => {
      const { runtime } = await delegatingBoss(
        [{ reply: { toolCalls: [taskCall("flaky", "try")] } }, { reply: { text: "noted" } }],
        {
          flaky: [
            { reply: { toolCalls: [{ name: "current_time", args: {} }] } },
            { reply: new Error("second call broke") },
          ],
        },
      );

      const result = await runtime.run({ uid: "alice", agent: "boss", input: "go" });

      expect(result.subagentRuns[0]).toMatchObject({
        status: "failed",
        rounds: 1,
        error:
          'model "flaky" failed: second call broke; try again later, or check the model server and its key',
        usage: { input_tokens: 10, output_tokens: 5, total_tokens: 15 },
      });
      assertScriptsComplete();
    });

    it("rejects invalid limits and tools at the config boundary, naming the field", async () => {
      const runtime = await setup({});
      const cases: [Record<string, unknown>, string][] = [
        [{ max_rounds: 0 }, "config_json.context.max_rounds"],
        [{ max_result_chars: -5 }, "config_json.context.max_result_chars"],
        [{ max_parallel_subagents: 1.5 }, "config_json.context.max_parallel_subagents"],
        [{ subagent_timeout_ms: 0 }, "config_json.context.subagent_timeout_ms"],
        [{ tools: "alpha" }, "config_json.context.tools"],
      ];
      for (const [context, field] of cases) {
        await expect(
          runtime.agents.create("alice", { slug: "bad", name: "bad", config_json: { context } }),
        ).rejects.toMatchObject({ code: ErrorCode.Validation, field });
      }
      expect(await runtime.agents.list("alice", { include_subagents: true })).toEqual([]);
    });
  });
}
