import { afterEach, describe, expect, it } from "vitest";
import { ErrorCode } from "../../errors.js";
import type { ScriptStep } from "../../models/scripted.js";
import type { ThreadCheckpoint } from "../../threads/thread-state.js";
import { messageText } from "../../util/message-text.js";
import { mainAgentPayload, type SaverKindUnderTest } from "../support/runtime-fixture.js";
import { ScriptedHarness } from "../support/scripted-harness.js";

const taskCall = (subagent_type: string, description: string) => ({
  name: "task",
  args: { description, subagent_type },
});

/** The oldest checkpoint holding only the user's message: before the model's first turn. */
function beforeFirstTurn(history: readonly ThreadCheckpoint[]): ThreadCheckpoint {
  const found = [...history].reverse().find((checkpoint) => checkpoint.messages.length === 1);
  if (!found) throw new Error("no checkpoint with just the input message");
  return found;
}

/** The newest checkpoint whose last message is a tool result: after the tools, before the model. */
function afterToolResults(history: readonly ThreadCheckpoint[]): ThreadCheckpoint {
  const found = history.find((checkpoint) => checkpoint.messages.at(-1)?.getType() === "tool");
  if (!found) throw new Error("no checkpoint ending in a tool result");
  return found;
}

/** Replay and fork semantics of parent threads and their children, run once per saver. */
export function runReplaySuite(saver: SaverKindUnderTest): void {
  describe(`replay and fork on the ${saver} saver`, () => {
    const harness = new ScriptedHarness(saver);
    afterEach(() => harness.dispose());

    it("replays from before a task call on new child threads, leaving the old ones readable", async () => {
      const { runtime } = await harness.delegatingBoss(
        [
          { reply: { toolCalls: [taskCall("researcher", "find facts")] } },
          { reply: { text: "first answer" } },
          // The replay: the model decides again, so the call is a new one.
          { reply: { toolCalls: [taskCall("researcher", "find facts")] } },
          { reply: { text: "second answer" } },
        ],
        { researcher: [{ reply: { text: "facts v1" } }, { reply: { text: "facts v2" } }] },
      );
      const first = await runtime.run({
        uid: "alice",
        agent: "boss",
        threadId: "t-replay",
        input: "go",
      });
      const oldChild = first.subagentRuns[0]?.child_thread_id ?? "";
      const start = beforeFirstTurn(await runtime.history("alice", "t-replay"));

      const replayed = await runtime.run({
        uid: "alice",
        threadId: "t-replay",
        checkpointId: start.checkpointId,
      });

      expect(replayed.output).toBe("second answer");
      const newChild = replayed.subagentRuns.at(-1)?.child_thread_id ?? "";
      expect(newChild).toMatch(/^t-replay_sub_researcher_[0-9a-f]{8}$/);
      expect(newChild).not.toBe(oldChild);
      expect(replayed.subagentUsage).toBeDefined();
      // The old branch's child is intact and still readable through the parent's history.
      const old = await runtime.childThread("alice", oldChild);
      expect(old.messages.map(messageText)).toEqual(["find facts", "facts v1"]);
      const oldHistory = await runtime.childHistory("alice", oldChild);
      expect(oldHistory[0]?.messages.map(messageText)).toEqual(["find facts", "facts v1"]);
      const fresh = await runtime.childThread("alice", newChild);
      expect(fresh.messages.map(messageText)).toEqual(["find facts", "facts v2"]);
      // Both branches are in the parent's history.
      const outputs = (await runtime.history("alice", "t-replay")).map((c) =>
        messageText(c.messages.at(-1) ?? c.messages[0] ?? ({} as never)),
      );
      expect(outputs).toContain("first answer");
      expect(outputs).toContain("second answer");
      harness.assertScriptsComplete();
    });

    it("replays from after the tool results without running any child again", async () => {
      const { runtime } = await harness.delegatingBoss(
        [
          { reply: { toolCalls: [taskCall("researcher", "find facts")] } },
          { reply: { text: "first answer" } },
          {
            expect: (call) => {
              // The model sees the recorded tool result, not a new one.
              expect(messageText(call.messages.at(-1) ?? ({} as never))).toBe("facts v1");
            },
            reply: { text: "answer again" },
          },
        ],
        // One step only: a second child run would fail the strict script.
        { researcher: [{ reply: { text: "facts v1" } }] },
      );
      await runtime.run({ uid: "alice", agent: "boss", threadId: "t-after", input: "go" });
      const point = afterToolResults(await runtime.history("alice", "t-after"));

      const replayed = await runtime.run({
        uid: "alice",
        threadId: "t-after",
        checkpointId: point.checkpointId,
      });

      expect(replayed.output).toBe("answer again");
      expect(replayed.subagentUsage.total_tokens).toBe(0);
      harness.assertScriptsComplete();
    });

    it("forks with an edited message, and the model sees the edit", async () => {
      const main = harness.model("main", [
        { reply: { text: "cats are great" } },
        {
          expect: (call) => {
            expect(call.messages.map(messageText)).toEqual(["tell me about dogs"]);
          },
          reply: { text: "dogs are great" },
        },
      ] satisfies ScriptStep[]);
      const runtime = await harness.setup({ "scripted:main": main });
      await runtime.agents.create("alice", mainAgentPayload("boss", "scripted:main", undefined));
      await runtime.run({
        uid: "alice",
        agent: "boss",
        threadId: "t-fork",
        input: "tell me about cats",
      });
      const start = beforeFirstTurn(await runtime.history("alice", "t-fork"));
      const question = start.messages[0];

      const fork = await runtime.threads.fork("alice", "t-fork", {
        checkpointId: start.checkpointId,
        values: {
          messages: [{ type: "human", content: "tell me about dogs", id: question?.id }],
        },
      });
      const result = await runtime.run({
        uid: "alice",
        threadId: "t-fork",
        checkpointId: fork.checkpointId,
      });

      expect(result.output).toBe("dogs are great");
      expect(result.messages.map(messageText)).toEqual(["tell me about dogs", "dogs are great"]);
      // The original branch is still in the history.
      const all = (await runtime.history("alice", "t-fork")).flatMap((c) =>
        c.messages.map(messageText),
      );
      expect(all).toContain("cats are great");
      harness.assertScriptsComplete();
    });

    it("refuses a run with nothing to do, an unknown checkpoint, and another user's child history", async () => {
      const { runtime } = await harness.delegatingBoss(
        [
          { reply: { toolCalls: [taskCall("researcher", "find facts")] } },
          { reply: { text: "done" } },
        ],
        { researcher: [{ reply: { text: "facts" } }] },
      );
      const result = await runtime.run({
        uid: "alice",
        agent: "boss",
        threadId: "t-done",
        input: "go",
      });

      await expect(runtime.run({ uid: "alice", threadId: "t-done" })).rejects.toMatchObject({
        code: ErrorCode.Validation,
        field: "input",
      });
      await expect(
        runtime.run({
          uid: "alice",
          threadId: "t-done",
          checkpointId: "1f000000-0000-6000-8000-000000000000",
        }),
      ).rejects.toMatchObject({ code: ErrorCode.NotFound, field: "checkpointId" });
      await expect(
        runtime.threads.fork("alice", "t-done", {
          checkpointId: "1f000000-0000-6000-8000-000000000000",
          values: {},
        }),
      ).rejects.toMatchObject({ code: ErrorCode.NotFound });
      const child = result.subagentRuns[0]?.child_thread_id ?? "";
      await expect(runtime.childHistory("bob", child)).rejects.toMatchObject({
        code: ErrorCode.NotFound,
      });
      harness.assertScriptsComplete();
    });
  });
}
