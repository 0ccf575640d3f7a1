import { afterEach, describe, expect, it } from "vitest";
import { ErrorCode } from "../../errors.js";
import { ScriptedChatModel } from "../../models/scripted.js";
import { expectFailure } from "../agents/helpers.js";
import { mainAgent, openRunsKit, type RunsKit, rowCounts, subagent } from "./kit.js";

describe("createRunLifecycle prepare", () => {
  let kit: RunsKit | undefined;
  afterEach(async () => {
    await kit?.dispose();
    kit = undefined;
  });

  /** Nothing of a refused run may be left: no thread row, no run row, no lease, no hold. */
  async function expectNothingWritten(current: RunsKit, threadId: string) {
    expect(await rowCounts(current)).toEqual({ threads: 0, runs: 0 });
    expect(await current.store.runRows.lease(threadId)).toBeUndefined();
    expect(current.store.running.isBusy(threadId)).toBe(false);
  }

  it("a hosting runtime refuses to run (UNSUPPORTED) and writes nothing", async () => {
    kit = await openRunsKit({ hosted: true });
    await mainAgent(kit, "alice", "boss", "offline", { is_default: true });
    const error = await expectFailure(
      kit.lifecycle.prepare({ uid: "alice", threadId: "t1", input: "hi" }),
      ErrorCode.Unsupported,
    );
    expect(error.message).toContain('checkpointer: "host"');
    await expectNothingWritten(kit, "t1");
  });

  it("an unknown checkpoint is NOT_FOUND on checkpointId and writes nothing", async () => {
    kit = await openRunsKit();
    await mainAgent(kit, "alice", "boss", "offline", { is_default: true });
    const error = await expectFailure(
      kit.lifecycle.prepare({
        uid: "alice",
        threadId: "t1",
        checkpointId: "1f000000-0000-6000-8000-000000000000",
        input: "hi",
      }),
      ErrorCode.NotFound,
      "checkpointId",
    );
    expect(error.message).toContain('"t1"');
    await expectNothingWritten(kit, "t1");
  });

  it("nothing to run without input is VALIDATION on input and writes nothing", async () => {
    kit = await openRunsKit();
    await mainAgent(kit, "alice", "boss", "offline", { is_default: true });
    await expectFailure(
      kit.lifecycle.prepare({ uid: "alice", threadId: "t1" }),
      ErrorCode.Validation,
      "input",
    );
    await expectNothingWritten(kit, "t1");
  });

  it("a finished thread without input is refused too, leaving its rows as they were", async () => {
    const model = new ScriptedChatModel("main", [{ reply: { text: "done" } }]);
    kit = await openRunsKit({ models: { "scripted:main": model } });
    await mainAgent(kit, "alice", "boss", "scripted:main", { is_default: true });
    await kit.runApi.run({ uid: "alice", threadId: "t1", input: "hi", runId: "r1" });
    const before = await rowCounts(kit);
    expect(before).toEqual({ threads: 1, runs: 1 });

    await expectFailure(
      kit.lifecycle.prepare({ uid: "alice", threadId: "t1" }),
      ErrorCode.Validation,
      "input",
    );
    expect(await rowCounts(kit)).toEqual(before);
    expect(kit.store.running.isBusy("t1")).toBe(false);
    model.assertComplete();
  });

  it("refuses a subagent, a malformed thread id and another user's thread, writing nothing", async () => {
    kit = await openRunsKit();
    await mainAgent(kit, "alice", "boss", "offline", { is_default: true });
    await subagent(kit, "alice", "worker", "offline");
    await expectFailure(
      kit.lifecycle.prepare({ uid: "alice", agent: "worker", threadId: "t1", input: "hi" }),
      ErrorCode.AgentIsSubagent,
    );
    await expectFailure(
      kit.lifecycle.prepare({ uid: "alice", threadId: "bad id", input: "hi" }),
      ErrorCode.InvalidThreadId,
      "threadId",
    );
    await expectFailure(
      kit.lifecycle.prepare({ uid: "alice", threadId: "t1_sub_worker_0123abcd", input: "hi" }),
      ErrorCode.InvalidThreadId,
      "threadId",
    );
    await expectNothingWritten(kit, "t1");

    await mainAgent(kit, "bob", "bobs", "offline", { is_default: true });
    await kit.store.threads.claim("bob", "t-bob", "x");
    await expectFailure(
      kit.lifecycle.prepare({ uid: "alice", threadId: "t-bob", input: "hi" }),
      ErrorCode.NotFound,
    );
    expect(await rowCounts(kit)).toEqual({ threads: 1, runs: 0 });
    expect(kit.store.running.isBusy("t-bob")).toBe(false);
  });

  it("a prepared run holds its thread: a second prepare is THREAD_BUSY until it is released", async () => {
    kit = await openRunsKit();
    await mainAgent(kit, "alice", "boss", "offline", { is_default: true });
    const prepared = await kit.lifecycle.prepare({
      uid: "alice",
      threadId: "t1",
      input: "hi",
      runId: "r1",
      metadata: { origin: "unit" },
    });
    expect(prepared).toMatchObject({ threadId: "t1", runId: "r1", config: { runId: "r1" } });
    expect(kit.store.running.isBusy("t1")).toBe(true);
    expect((await kit.store.runRows.lease("t1"))?.run_id).toBe("r1");
    expect((await kit.runApi.runInfo("alice", "r1"))?.metadata).toEqual({ origin: "unit" });

    await expectFailure(
      kit.lifecycle.prepare({ uid: "alice", threadId: "t1", input: "again", runId: "r2" }),
      ErrorCode.ThreadBusy,
      "threadId",
    );
    expect(await kit.store.runRows.find("r2")).toBeUndefined();

    await prepared.release("interrupted");
    expect(kit.store.running.isBusy("t1")).toBe(false);
    expect(await kit.store.runRows.lease("t1")).toBeUndefined();
    expect((await kit.store.runRows.find("r1"))?.status).toBe("interrupted");
  });

  it("the caller's signal reaches the run's own signal only until the run is released", async () => {
    kit = await openRunsKit();
    await mainAgent(kit, "alice", "boss", "offline", { is_default: true });
    const caller = new AbortController();
    const prepared = await kit.lifecycle.prepare({
      uid: "alice",
      threadId: "t1",
      input: "hi",
      signal: caller.signal,
    });
    expect(prepared.config.signal.aborted).toBe(false);
    caller.abort(new Error("client went away"));
    expect(prepared.config.signal.aborted).toBe(true);
    expect((prepared.config.signal.reason as Error).message).toBe("client went away");
    await prepared.release("interrupted");

    // Released: the caller's signal is no longer forwarded.
    const late = new AbortController();
    const next = await kit.lifecycle.prepare({
      uid: "alice",
      threadId: "t1",
      input: "again",
      signal: late.signal,
    });
    await next.release("success");
    late.abort(new Error("too late"));
    expect(next.config.signal.aborted).toBe(false);

    // A signal aborted before the run starts aborts it at once.
    const gone = new AbortController();
    gone.abort(new Error("already gone"));
    const third = await kit.lifecycle.prepare({
      uid: "alice",
      threadId: "t1",
      input: "third",
      signal: gone.signal,
    });
    expect(third.config.signal.aborted).toBe(true);
    await third.release("interrupted");
  });
});
