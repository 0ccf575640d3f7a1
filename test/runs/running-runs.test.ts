import { describe, expect, it } from "vitest";
import { ErrorCode } from "../../errors.js";
import { type RunningRun, RunningRuns } from "../../runs/running-runs.js";
import { expectFailure } from "../agents/helpers.js";

function run(runId: string, threadId: string, uid = "alice"): RunningRun {
  return { runId, uid, threadId, controller: new AbortController() };
}

describe("RunningRuns", () => {
  it("refuses a second run on a held thread with THREAD_BUSY naming it, recording nothing", async () => {
    const running = new RunningRuns();
    const first = run("r1", "t1");
    running.claim(first);
    const second = run("r2", "t1");

    const error = await expectFailure(
      () => running.claim(second),
      ErrorCode.ThreadBusy,
      "threadId",
    );
    expect(error.message).toContain('"t1"');

    // The refused run was not recorded: it cannot be cancelled, and releasing it frees nothing.
    expect(running.cancel("alice", "r2")).toBe(false);
    expect(second.controller.signal.aborted).toBe(false);
    running.release("r2");
    expect(running.isBusy("t1")).toBe(true);
    // The first run is still the one holding the thread.
    expect(running.cancel("alice", "r1")).toBe(true);
    expect(first.controller.signal.aborted).toBe(true);
  });

  it("holds only the claimed thread, and release frees it for the next run", () => {
    const running = new RunningRuns();
    expect(running.isBusy("t1")).toBe(false);
    running.claim(run("r1", "t1"));
    expect(running.isBusy("t1")).toBe(true);
    expect(running.isBusy("t2")).toBe(false);
    running.claim(run("r2", "t2"));

    running.release("r1");
    expect(running.isBusy("t1")).toBe(false);
    expect(running.isBusy("t2")).toBe(true);
    running.claim(run("r3", "t1"));
    expect(running.isBusy("t1")).toBe(true);
  });

  it("release is idempotent and never frees a thread another run now holds", () => {
    const running = new RunningRuns();
    running.claim(run("r1", "t1"));
    running.release("r1");
    running.release("r1");
    running.release("never-claimed");
    expect(running.isBusy("t1")).toBe(false);

    running.claim(run("r2", "t1"));
    // A late second release of the old run leaves the new run's hold alone.
    running.release("r1");
    expect(running.isBusy("t1")).toBe(true);
    expect(running.cancel("alice", "r1")).toBe(false);
  });

  it("cancels only for the owner, aborting the controller with a reason naming the run", () => {
    const running = new RunningRuns();
    const mine = run("r1", "t1", "alice");
    running.claim(mine);

    expect(running.cancel("bob", "r1")).toBe(false);
    expect(mine.controller.signal.aborted).toBe(false);
    expect(running.cancel("alice", "unknown-run")).toBe(false);
    expect(mine.controller.signal.aborted).toBe(false);

    expect(running.cancel("alice", "r1")).toBe(true);
    expect(mine.controller.signal.aborted).toBe(true);
    const reason = mine.controller.signal.reason as unknown;
    expect(reason).toBeInstanceOf(Error);
    expect((reason as Error).message).toContain("r1");
    // Cancelling does not release: the run releases itself once it has stopped.
    expect(running.isBusy("t1")).toBe(true);

    running.release("r1");
    expect(running.cancel("alice", "r1")).toBe(false);
  });

  it("abortAll aborts every run with the reason, whoever owns it", () => {
    const running = new RunningRuns();
    const runs = [run("r1", "t1", "alice"), run("r2", "t2", "bob"), run("r3", "t3", "alice")];
    for (const each of runs) running.claim(each);
    running.release("r3");

    running.abortAll("runtime closed");

    for (const each of runs.slice(0, 2)) {
      expect(each.controller.signal.aborted).toBe(true);
      expect((each.controller.signal.reason as Error).message).toBe("runtime closed");
    }
    // A released run is no longer this process's to abort.
    expect(runs[2]?.controller.signal.aborted).toBe(false);
  });
});
