import type { ToolMessage } from "@langchain/core/messages";
import { afterEach, describe, expect, it } from "vitest";
import type { ScriptStep } from "../../models/scripted.js";
import {
  mainAgentPayload,
  type SaverKindUnderTest,
  subagentPayload,
} from "../support/runtime-fixture.js";
import { ScriptedHarness } from "../support/scripted-harness.js";
import { expectOneRecordAndEventPair, streamRun } from "../support/task-calls.js";

const taskCall = (subagent_type: string, description: string, id: string) => ({
  name: "task",
  args: { description, subagent_type },
  id,
});

/** langchain's ending of a tool error it phrased itself: never in what we answer. */
const LANGCHAIN_SUFFIX = "Please fix your mistakes";

/**
 * Every point at which a `task` call can fail leaves exactly one record, one started/finished
 * event pair and one ToolMessage of ours (naming the subagent, the cause and the fix), while the
 * parent run goes on. Run once per saver.
 */
export function runDispatchFailuresSuite(saver: SaverKindUnderTest): void {
  describe(`task call failures on the ${saver} saver`, () => {
    const harness = new ScriptedHarness(saver);
    afterEach(() => harness.dispose());
    const model = (name: string, steps: ScriptStep[]) => harness.model(name, steps);

    /** The parent's second model call sees the task answer `content`, then answers `text`. */
    const goesOn = (id: string, content: string | RegExp, text = "went on"): ScriptStep => ({
      expect: (call) => {
        const answer = call.messages.find(
          (message) => message.getType() === "tool" && (message as ToolMessage).tool_call_id === id,
        ) as ToolMessage | undefined;
        expect(answer?.status).toBe("error");
        if (typeof content === "string") expect(answer?.content).toBe(content);
        else expect(answer?.content).toMatch(content);
        expect(String(answer?.content)).not.toContain(LANGCHAIN_SUFFIX);
      },
      reply: { text },
    });

    it("records a subagent deleted after the run began, without a child thread", async () => {
      const message =
        'subagent "researcher" is no longer available (deleted, or no longer shared with this user, since this run began), so it did not run: use one of "steady", or do the work without it';
      let researcherId = "";
      const main = model("main", [
        {
          // The main graph (and its allow-list) is built; the subagent goes before the call.
          hold: async () => {
            await harness.fixture?.runtime.agents.delete("alice", researcherId, { detach: true });
          },
          reply: { toolCalls: [taskCall("researcher", "dig", "call-gone")] },
        },
        goesOn("call-gone", message),
      ]);
      const runtime = await harness.setup({ "scripted:main": main });
      researcherId = (
        await runtime.agents.create("alice", subagentPayload("researcher", "offline"))
      ).id;
      await runtime.agents.create("alice", subagentPayload("steady", "offline"));
      await runtime.agents.create(
        "alice",
        mainAgentPayload("boss", "scripted:main", ["researcher", "steady"]),
      );

      const { events, result } = await streamRun(runtime, {
        uid: "alice",
        agent: "boss",
        input: "go",
      });

      expect(result.output).toBe("went on");
      const { run, toolMessage } = expectOneRecordAndEventPair(events, result, "call-gone");
      expect(run).toMatchObject({
        subagent_type: "researcher",
        status: "failed",
        child_thread_id: "",
        rounds: 0,
        error: message,
      });
      expect(toolMessage.content).toBe(message);
      harness.assertScriptsComplete();
    });

    it("records a subagent whose model cannot be built (openai:* without a key)", async () => {
      const message =
        'subagent "researcher" could not start (its context.model): model "openai:gpt-4o-mini" needs OPENAI_API_KEY (or OPENAI_BASE_URL for a local OpenAI-compatible server); set one, or use the model "offline"';
      const main = model("main", [
        {
          reply: {
            toolCalls: [
              taskCall("researcher", "dig", "call-nokey"),
              taskCall("steady", "work", "call-steady"),
            ],
          },
        },
        goesOn("call-nokey", message, "partial answer"),
      ]);
      const steady = model("steady", [{ reply: { text: "steady result" } }]);
      const runtime = await harness.setup({ "scripted:main": main, "scripted:steady": steady });
      await runtime.agents.create("alice", subagentPayload("researcher", "openai:gpt-4o-mini"));
      await runtime.agents.create("alice", subagentPayload("steady", "scripted:steady"));
      await runtime.agents.create(
        "alice",
        mainAgentPayload("boss", "scripted:main", ["researcher", "steady"]),
      );

      const { events, result } = await streamRun(runtime, {
        uid: "alice",
        agent: "boss",
        input: "go",
      });

      expect(result.output).toBe("partial answer");
      const { run, toolMessage } = expectOneRecordAndEventPair(events, result, "call-nokey");
      expect(run).toMatchObject({ status: "failed", child_thread_id: "", error: message });
      expect(toolMessage.content).toBe(message);
      // The sibling ran to the end.
      const sibling = expectOneRecordAndEventPair(events, result, "call-steady");
      expect(sibling.run).toMatchObject({ status: "completed", result_preview: "steady result" });
      harness.assertScriptsComplete();
    });

    it("records a subagent whose tools cannot be built (an unregistered tool)", async () => {
      const message =
        'subagent "researcher" could not start: agent "researcher" lists unknown tool(s) "crystal_ball" in context.tools; registered tools: current_time, edit_file, glob, grep, ls, read_file, write_file. Remove them or register the tools';
      const main = model("main", [
        { reply: { toolCalls: [taskCall("researcher", "dig", "call-tools")] } },
        goesOn("call-tools", message),
      ]);
      const runtime = await harness.setup({ "scripted:main": main });
      await runtime.agents.create(
        "alice",
        subagentPayload("researcher", "offline", { tools: ["crystal_ball"] }),
      );
      await runtime.agents.create(
        "alice",
        mainAgentPayload("boss", "scripted:main", ["researcher"]),
      );

      const { events, result } = await streamRun(runtime, {
        uid: "alice",
        agent: "boss",
        input: "go",
      });

      const { run } = expectOneRecordAndEventPair(events, result, "call-tools");
      expect(run).toMatchObject({ status: "failed", child_thread_id: "", error: message });
      harness.assertScriptsComplete();
    });

    it("gives a refused call its started/finished pair too, without a child thread", async () => {
      const main = model("main", [
        { reply: { toolCalls: [taskCall("nope", "x", "call-nope")] } },
        goesOn("call-nope", 'unknown subagent_type "nope": use one of "researcher"'),
      ]);
      const runtime = await harness.setup({ "scripted:main": main });
      await runtime.agents.create("alice", subagentPayload("researcher", "offline"));
      await runtime.agents.create(
        "alice",
        mainAgentPayload("boss", "scripted:main", ["researcher"]),
      );

      const { events, result } = await streamRun(runtime, {
        uid: "alice",
        agent: "boss",
        input: "go",
      });

      const { run } = expectOneRecordAndEventPair(events, result, "call-nope");
      expect(run).toMatchObject({ status: "failed", child_thread_id: "" });
      harness.assertScriptsComplete();
    });
  });
}
