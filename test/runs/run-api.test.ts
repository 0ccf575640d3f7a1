import { afterEach, describe, expect, it } from "vitest";
import { ErrorCode } from "../../errors.js";
import { ScriptedChatModel } from "../../models/scripted.js";
import type { RunEvent } from "../../runs/events.js";
import type { ProcessIdentity } from "../../util/process-identity.js";
import { expectFailure } from "../agents/helpers.js";
import { mainAgent, openRunsKit, type RunsKit } from "./kit.js";

/** A process of another machine: its pid means nothing here, its lease says it lives. */
const ELSEWHERE: ProcessIdentity = {
  instanceId: "remote-instance",
  host: "worker-7",
  pid: 31337,
  pidScope: "linux:another-boot:pid:[4026531836]",
  pidStart: "12345",
};

/** Waits until `check` holds (10 ms polls, 5 s at most). */
async function until(check: () => boolean): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error("timed out waiting");
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** A model whose one call waits for its run's signal to abort; `signal` is the one it got. */
function heldModel() {
  const seen: { signal: AbortSignal | undefined; called: boolean } = {
    signal: undefined,
    called: false,
  };
  const model = new ScriptedChatModel("held", [
    {
      reply: { text: "never" },
      hold: async (_call, signal) => {
        seen.signal = signal;
        seen.called = true;
        await new Promise((resolve) => signal?.addEventListener("abort", resolve));
      },
    },
  ]);
  return { model, seen };
}

describe("createRunApi", () => {
  let kit: RunsKit | undefined;
  afterEach(async () => {
    await kit?.dispose();
    kit = undefined;
  });

  it("run: claims the thread for the agent, answers, records success and frees the thread", async () => {
    const model = new ScriptedChatModel("main", [{ reply: { text: "hello alice" } }]);
    kit = await openRunsKit({ models: { "scripted:main": model } });
    const boss = await mainAgent(kit, "alice", "boss", "scripted:main", { is_default: true });

    const result = await kit.runApi.run({ uid: "alice", threadId: "t1", input: "hi", runId: "r1" });

    expect(result).toMatchObject({ threadId: "t1", runId: "r1", output: "hello alice" });
    expect(result.messages.map((message) => message.getType())).toEqual(["human", "ai"]);
    expect((await kit.store.threads.get("alice", "t1"))?.agent_id).toBe(boss.id);
    expect(kit.store.running.isBusy("t1")).toBe(false);
    expect(await kit.store.runRows.lease("t1")).toBeUndefined();
    expect(await kit.runApi.runInfo("alice", "r1")).toMatchObject({
      run_id: "r1",
      thread_id: "t1",
      status: "success",
      agent_id: boss.id,
    });
    // Bob sees neither the run nor its thread's runs.
    expect(await kit.runApi.runInfo("bob", "r1")).toBeUndefined();
    await expectFailure(kit.runApi.listRuns("bob", "t1"), ErrorCode.NotFound);
    expect((await kit.runApi.listRuns("alice", "t1")).map((info) => info.run_id)).toEqual(["r1"]);
    model.assertComplete();
  });

  it("stream: run_started first, run_finished last, with the same thread and run", async () => {
    const model = new ScriptedChatModel("main", [{ reply: { text: "streamed" } }]);
    kit = await openRunsKit({ models: { "scripted:main": model } });
    await mainAgent(kit, "alice", "boss", "scripted:main", { is_default: true });

    const events: RunEvent[] = [];
    for await (const event of kit.runApi.stream({ uid: "alice", input: "hi", runId: "r9" })) {
      events.push(event);
    }

    const first = events[0];
    const last = events.at(-1);
    if (first?.type !== "run_started" || last?.type !== "run_finished") {
      throw new Error(`unexpected events ${JSON.stringify(events.map((event) => event.type))}`);
    }
    expect(first).toMatchObject({ runId: "r9", agent: "boss" });
    expect(last.result).toMatchObject({
      runId: "r9",
      threadId: first.threadId,
      output: "streamed",
    });
    expect(kit.store.running.isBusy(first.threadId)).toBe(false);
    expect((await kit.runApi.runInfo("alice", "r9"))?.status).toBe("success");
    model.assertComplete();
  });

  describe("cancel", () => {
    it("aborts a run of this process at once; the run ends RUN_CANCELLED and frees the thread", async () => {
      const { model, seen } = heldModel();
      kit = await openRunsKit({ models: { "scripted:main": model } });
      await mainAgent(kit, "alice", "boss", "scripted:main", { is_default: true });
      const running = kit.runApi
        .run({ uid: "alice", threadId: "t1", input: "wait", runId: "r1" })
        .catch((error: unknown) => error);
      await until(() => seen.called);
      expect(kit.store.running.isBusy("t1")).toBe(true);

      // Another user's cancel touches nothing.
      expect(await kit.runApi.cancel("bob", "r1")).toBe(false);
      expect(seen.signal?.aborted).toBe(false);
      expect(await kit.store.runRows.cancelRequested("r1")).toBe(false);

      expect(await kit.runApi.cancel("alice", "r1")).toBe(true);
      // At once: the model's signal has fired before any heartbeat could read a row.
      expect(seen.signal?.aborted).toBe(true);

      expect(await running).toMatchObject({ code: ErrorCode.Cancelled });
      expect(kit.store.running.isBusy("t1")).toBe(false);
      expect((await kit.runApi.runInfo("alice", "r1"))?.status).toBe("interrupted");
      // Nothing left to cancel.
      expect(await kit.runApi.cancel("alice", "r1")).toBe(false);
      model.assertComplete();
    });

    it("flags a running row of another process through its RunRepository row", async () => {
      kit = await openRunsKit();
      const { runRows } = kit.store;
      // Written as a process on another machine writes its run: a row and a live lease.
      await runRows.start({
        runId: "remote-run",
        threadId: "t-remote",
        uid: "alice",
        agentId: "agent-1",
        runner: ELSEWHERE,
      });
      expect(await runRows.acquireThread("t-remote", "remote-run", 60_000)).toBe(true);

      expect(await kit.runApi.cancel("bob", "remote-run")).toBe(false);
      expect(await runRows.cancelRequested("remote-run")).toBe(false);
      expect(await kit.runApi.cancel("alice", "no-such-run")).toBe(false);

      expect(await kit.runApi.cancel("alice", "remote-run")).toBe(true);
      expect(await runRows.cancelRequested("remote-run")).toBe(true);
      // The row is that process's to end: it stays running until its heartbeat reads the flag.
      expect((await runRows.find("remote-run"))?.status).toBe("running");
      // Its runInfo still shows it running (its lease is live, so it is not judged dead).
      expect((await kit.runApi.runInfo("alice", "remote-run"))?.status).toBe("running");

      // A run that has ended cannot be cancelled.
      await runRows.end("remote-run", "t-remote", "success");
      expect(await kit.runApi.cancel("alice", "remote-run")).toBe(false);
    });

    it("is refused once the runtime is closed", async () => {
      kit = await openRunsKit();
      kit.close();
      await expectFailure(kit.runApi.cancel("alice", "r1"), ErrorCode.Closed);
      await expectFailure(kit.runApi.runInfo("alice", "r1"), ErrorCode.Closed);
    });
  });
});
