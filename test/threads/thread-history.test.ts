import { AIMessage, HumanMessage } from "@langchain/core/messages";
import type { RunnableConfig } from "@langchain/core/runnables";
import { type BaseCheckpointSaver, emptyCheckpoint } from "@langchain/langgraph-checkpoint";
import { afterEach, describe, expect, it } from "vitest";
import { makeChildThreadId } from "../../checkpoints/child-thread-id.js";
import { ErrorCode } from "../../errors.js";
import type { SubagentRun } from "../../middleware/subagent-runs.js";
import { ScriptedChatModel } from "../../models/scripted.js";
import { expectFailure } from "../agents/helpers.js";
import { mainAgent, openRunsKit, type RunsKit, subagent } from "../runs/kit.js";

const CHILD = makeChildThreadId({
  parentThreadId: "t1",
  slug: "worker",
  toolCallId: "call-1",
  aiMessageId: "ai-1",
});

/** The parent's record of the `task` call that made `childThreadId`. */
function recordOf(childThreadId: string): SubagentRun {
  return {
    id: "call-1",
    subagent_type: "worker",
    child_thread_id: childThreadId,
    description: "look it up",
    status: "completed",
    rounds: 1,
    max_rounds_reached: false,
    started_at: "2026-01-01T00:00:00.000Z",
    finished_at: "2026-01-01T00:00:01.000Z",
    result_preview: "found it",
    error: null,
    artifacts: [],
    usage: { input_tokens: 1, output_tokens: 1, total_tokens: 2 },
  };
}

/**
 * Writes a checkpoint of `threadId` holding `values` after `parent` (the config the previous
 * put returned), as a run's step would; returns the new checkpoint's config.
 */
async function putCheckpoint(
  saver: BaseCheckpointSaver,
  threadId: string,
  values: { messages?: unknown[]; subagent_runs?: SubagentRun[] },
  parent?: RunnableConfig,
): Promise<RunnableConfig> {
  const checkpoint = emptyCheckpoint();
  checkpoint.channel_values = { ...values };
  return saver.put(
    parent ?? { configurable: { thread_id: threadId, checkpoint_ns: "" } },
    checkpoint,
    { source: "loop", step: 0, parents: {} },
    {},
  );
}

describe("createThreadHistoryApi", () => {
  let kit: RunsKit | undefined;
  afterEach(async () => {
    await kit?.dispose();
    kit = undefined;
  });

  /** Alice's thread t1 whose latest checkpoint records CHILD, and CHILD's own checkpoint. */
  async function aliceWithChild(): Promise<RunsKit> {
    const current = await openRunsKit();
    await current.store.threads.claim("alice", "t1", "agent-1");
    await putCheckpoint(current.saver, "t1", {
      messages: [new HumanMessage("hi")],
      subagent_runs: [recordOf(CHILD)],
    });
    await putCheckpoint(current.saver, CHILD, {
      messages: [new HumanMessage("look it up"), new AIMessage("found it")],
    });
    return current;
  }

  it("reads a child thread the caller's parent thread records in its latest checkpoint", async () => {
    kit = await aliceWithChild();
    const view = await kit.history.childThread("alice", CHILD);
    expect(view).toMatchObject({
      threadId: CHILD,
      parentThreadId: "t1",
      subagentType: "worker",
      run: { id: "call-1", child_thread_id: CHILD },
    });
    expect(view.messages.map((message) => message.content)).toEqual(["look it up", "found it"]);
    const history = await kit.history.childHistory("alice", CHILD);
    expect(history).toHaveLength(1);
    expect(history[0]?.messages).toHaveLength(2);
  });

  it("reads a child only an older checkpoint of the parent records (a later fork dropped it)", async () => {
    kit = await openRunsKit();
    await kit.store.threads.claim("alice", "t1", "agent-1");
    const first = await putCheckpoint(kit.saver, "t1", { subagent_runs: [recordOf(CHILD)] });
    await putCheckpoint(kit.saver, "t1", { subagent_runs: [] }, first);
    await putCheckpoint(kit.saver, CHILD, { messages: [new AIMessage("old answer")] });

    const view = await kit.history.childThread("alice", CHILD);
    expect(view.run?.child_thread_id).toBe(CHILD);
    expect(view.messages.map((message) => message.content)).toEqual(["old answer"]);
    expect(await kit.history.childHistory("alice", CHILD)).toHaveLength(1);
  });

  it("reads a running child through the task call in its parent's messages (run: null)", async () => {
    kit = await openRunsKit();
    await kit.store.threads.claim("alice", "t1", "agent-1");
    // The step that called the child is stored; no record yet (a call is recorded as it ends).
    await putCheckpoint(kit.saver, "t1", {
      messages: [
        new HumanMessage("hi"),
        new AIMessage({
          id: "ai-1",
          content: "",
          tool_calls: [{ id: "call-1", name: "task", args: { subagent_type: "worker" } }],
        }),
      ],
    });
    await putCheckpoint(kit.saver, CHILD, { messages: [new HumanMessage("look it up")] });
    const view = await kit.history.childThread("alice", CHILD);
    expect(view.run).toBeNull();
    expect(view.subagentType).toBe("worker");
    expect(view.messages.map((message) => message.content)).toEqual(["look it up"]);
    expect(await kit.history.childHistory("alice", CHILD)).toHaveLength(1);
    // Only that call's child: another call id, another user, or another slug is not found.
    const otherCall = makeChildThreadId({
      parentThreadId: "t1",
      slug: "worker",
      toolCallId: "call-2",
      aiMessageId: "ai-1",
    });
    await expectFailure(kit.history.childThread("alice", otherCall), ErrorCode.NotFound);
    await expectFailure(kit.history.childThread("bob", CHILD), ErrorCode.NotFound);
    const otherSlug = makeChildThreadId({
      parentThreadId: "t1",
      slug: "other",
      toolCallId: "call-1",
      aiMessageId: "ai-1",
    });
    await expectFailure(kit.history.childThread("alice", otherSlug), ErrorCode.NotFound);
  });

  it("is NOT_FOUND on childThreadId for another user, whatever the child's checkpoints", async () => {
    kit = await aliceWithChild();
    await expectFailure(kit.history.childThread("bob", CHILD), ErrorCode.NotFound, "childThreadId");
    await expectFailure(
      kit.history.childHistory("bob", CHILD),
      ErrorCode.NotFound,
      "childThreadId",
    );
  });

  it("is NOT_FOUND when the caller's parent thread does not record that child", async () => {
    kit = await aliceWithChild();
    // Same parent and slug, another call: checkpoints exist, no record of it does.
    const unrecorded = makeChildThreadId({
      parentThreadId: "t1",
      slug: "worker",
      toolCallId: "call-2",
      aiMessageId: "ai-2",
    });
    await putCheckpoint(kit.saver, unrecorded, { messages: [new AIMessage("stray")] });
    await expectFailure(
      kit.history.childThread("alice", unrecorded),
      ErrorCode.NotFound,
      "childThreadId",
    );
    await expectFailure(
      kit.history.childHistory("alice", unrecorded),
      ErrorCode.NotFound,
      "childThreadId",
    );
    // A parent thread without any checkpoint records nothing either.
    await kit.store.threads.claim("alice", "t2", "agent-1");
    const ofEmpty = makeChildThreadId({
      parentThreadId: "t2",
      slug: "worker",
      toolCallId: "call-1",
      aiMessageId: "ai-1",
    });
    await expectFailure(kit.history.childThread("alice", ofEmpty), ErrorCode.NotFound);
  });

  it("is NOT_FOUND for a malformed child id, or once the parent thread is being deleted", async () => {
    kit = await aliceWithChild();
    for (const malformed of [
      "t1",
      "",
      "t1_sub_Worker_0123abcd",
      "t1_sub_worker_xyz",
      `${CHILD}x`,
    ]) {
      await expectFailure(
        kit.history.childThread("alice", malformed),
        ErrorCode.NotFound,
        "childThreadId",
      );
    }
    expect((await kit.history.childThread("alice", CHILD)).threadId).toBe(CHILD);
    await kit.store.threads.beginDeletion("alice", "t1");
    await expectFailure(
      kit.history.childThread("alice", CHILD),
      ErrorCode.NotFound,
      "childThreadId",
    );
  });

  it("history: the owner's checkpoints newest first; another user NOT_FOUND", async () => {
    kit = await openRunsKit();
    await kit.store.threads.claim("alice", "t1", "agent-1");
    const first = await putCheckpoint(kit.saver, "t1", { messages: [new HumanMessage("one")] });
    await putCheckpoint(
      kit.saver,
      "t1",
      { messages: [new HumanMessage("one"), new AIMessage("two")] },
      first,
    );
    const history = await kit.history.history("alice", "t1");
    expect(history.map((checkpoint) => checkpoint.messages.length)).toEqual([2, 1]);
    expect(history[0]?.parentCheckpointId).toBe(history[1]?.checkpointId);
    await expectFailure(kit.history.history("bob", "t1"), ErrorCode.NotFound);
  });

  it("refuses every read once the runtime is closed", async () => {
    kit = await aliceWithChild();
    kit.close();
    await expectFailure(kit.history.childThread("alice", CHILD), ErrorCode.Closed);
    await expectFailure(kit.history.childHistory("alice", CHILD), ErrorCode.Closed);
    await expectFailure(kit.history.history("alice", "t1"), ErrorCode.Closed);
  });

  it("reads the child thread a real task call made, through its parent's run", async () => {
    const main = new ScriptedChatModel("main", [
      {
        reply: {
          toolCalls: [{ name: "task", args: { description: "look", subagent_type: "worker" } }],
        },
      },
      { reply: { text: "all done" } },
    ]);
    const worker = new ScriptedChatModel("worker", [{ reply: { text: "worker answer" } }]);
    kit = await openRunsKit({ models: { "scripted:main": main, "scripted:worker": worker } });
    await subagent(kit, "alice", "worker", "scripted:worker");
    await mainAgent(kit, "alice", "boss", "scripted:main", {
      is_default: true,
      subagents: ["worker"],
    });
    const result = await kit.runApi.run({ uid: "alice", threadId: "t1", input: "go" });
    const childThreadId = result.subagentRuns[0]?.child_thread_id ?? "";
    expect(childThreadId.startsWith("t1_sub_worker_")).toBe(true);

    const view = await kit.history.childThread("alice", childThreadId);
    expect(view.parentThreadId).toBe("t1");
    expect(view.subagentType).toBe("worker");
    expect(view.messages.at(-1)?.content).toBe("worker answer");
    await expectFailure(kit.history.childThread("bob", childThreadId), ErrorCode.NotFound);
    main.assertComplete();
    worker.assertComplete();
  });
});
