import { afterEach, describe, expect, it, vi } from "vitest";
import { FreshThreads } from "../../checkpoints/fresh-threads.js";
import { DeltaHistoryMemorySaver } from "../../checkpoints/memory-saver.js";
import { SendCompactingMemorySaver } from "../../checkpoints/send-compacting-savers.js";
import { ScriptedHarness } from "../support/scripted-harness.js";

const config = (thread_id: string, extra: Record<string, unknown> = {}) => ({
  configurable: { thread_id, checkpoint_ns: "", ...extra },
});

describe("threads known to have no checkpoint", () => {
  it("are known empty until their first write or their end, for their newest checkpoint only", () => {
    const fresh = new FreshThreads();
    const end = fresh.expect("t1");
    expect(fresh.knownEmpty(config("t1"))).toBe(true);
    // A named checkpoint, another namespace or another thread is read as usual.
    expect(fresh.knownEmpty(config("t1", { checkpoint_id: "c1" }))).toBe(false);
    expect(fresh.knownEmpty(config("t1", { checkpoint_ns: "tools:1" }))).toBe(false);
    expect(fresh.knownEmpty(config("t2"))).toBe(false);
    end();
    expect(fresh.knownEmpty(config("t1"))).toBe(false);

    fresh.expect("t3");
    fresh.written(config("t3"));
    expect(fresh.knownEmpty(config("t3"))).toBe(false);
  });

  it("never hide a checkpoint the saver has written", async () => {
    const saver = new SendCompactingMemorySaver();
    const end = saver.freshThreads.expect("t1");
    expect(await saver.getTuple(config("t1"))).toBeUndefined();
    const checkpoint = {
      v: 4,
      id: "00000000-0000-0000-0000-000000000001",
      ts: new Date().toISOString(),
      channel_values: { x: 1 },
      channel_versions: { x: 1 },
      versions_seen: {},
    };
    await saver.put(
      config("t1"),
      checkpoint,
      { source: "input", step: -1, parents: {} },
      {
        x: 1,
      },
    );
    expect((await saver.getTuple(config("t1")))?.checkpoint.id).toBe(checkpoint.id);
    end();
  });
});

describe("a subagent's new child thread", () => {
  const harness = new ScriptedHarness("memory");
  afterEach(() => harness.dispose());

  it("is not read from storage before its first step on a run from new input", async () => {
    const { runtime } = await harness.delegatingBoss(
      [
        {
          reply: {
            toolCalls: [{ name: "task", args: { description: "dig", subagent_type: "digger" } }],
          },
        },
        { reply: { text: "done" } },
      ],
      { digger: [{ reply: { text: "found it" } }] },
    );
    const reads = vi.spyOn(DeltaHistoryMemorySaver.prototype, "getTuple");
    try {
      const result = await runtime.run({ uid: "alice", agent: "boss", input: "go" });
      expect(result.subagentRuns).toHaveLength(1);
      const childThread = result.subagentRuns[0]?.child_thread_id;
      const childReads = reads.mock.calls.filter(
        ([read]) => read.configurable?.thread_id === childThread,
      );
      // langchain's state merge and LangGraph's loop start found it empty without a read.
      expect(childReads).toEqual([]);
      // It was written all the same: its answer is there to read.
      const stored = await runtime.checkpointer.getTuple(config(childThread ?? ""));
      expect(stored?.metadata?.source).toBe("loop");
    } finally {
      reads.mockRestore();
    }
    harness.assertScriptsComplete();
  });
});
