import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type BaseCheckpointSaver, emptyCheckpoint } from "@langchain/langgraph-checkpoint";
import { afterEach, describe, expect, it } from "vitest";
import { ErrorCode } from "../../errors.js";
import { createRuntime, type Runtime } from "../../runtime.js";
import { expectFailure } from "../agents/helpers.js";
import {
  mainAgentPayload,
  type SaverKindUnderTest,
  subagentPayload,
} from "../support/runtime-fixture.js";
import { ScriptedHarness } from "../support/scripted-harness.js";

const OUTPUTS = "/home/gem/user-data/outputs";
const call = (name: string, args: Record<string, unknown>) => ({ name, args });

/** Writes an empty checkpoint for `threadId` in namespace `ns`, as a run's first step would. */
async function putCheckpoint(saver: BaseCheckpointSaver, threadId: string, ns = "") {
  await saver.put(
    { configurable: { thread_id: threadId, checkpoint_ns: ns } },
    emptyCheckpoint(),
    { source: "input", step: -1, parents: {} },
    {},
  );
}

async function hasCheckpoint(saver: BaseCheckpointSaver, threadId: string, ns = "") {
  return (
    (await saver.getTuple({ configurable: { thread_id: threadId, checkpoint_ns: ns } })) !==
    undefined
  );
}

/**
 * `saver` whose `deleteThread` fails once for each id of `failing` (a process dying half-way
 * through a deletion), and is the saver itself for everything else.
 */
function failingOnce(saver: BaseCheckpointSaver, failing: string[]): BaseCheckpointSaver {
  const left = new Set(failing);
  return new Proxy(saver, {
    get(target, property, receiver) {
      if (property !== "deleteThread") return Reflect.get(target, property, receiver);
      return async (threadId: string) => {
        if (left.delete(threadId)) throw new Error(`disk unplugged while deleting ${threadId}`);
        return target.deleteThread(threadId);
      };
    },
  });
}

/** Deleting threads through the runtime (`runtime.threads.delete`), per saver. */
export function runThreadDeleteSuite(saver: SaverKindUnderTest): void {
  describe(`thread deletion on the ${saver} saver`, () => {
    const harness = new ScriptedHarness(saver);
    const cleanups: (() => Promise<void>)[] = [];
    afterEach(async () => {
      for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
      await harness.dispose();
    });

    it("removes the thread's checkpoints, its children's, its files and its runs, and nothing else", async () => {
      const main = harness.model("main", [
        {
          reply: {
            toolCalls: [call("task", { description: "summarise", subagent_type: "worker" })],
          },
        },
        { reply: { text: "summary ready" } },
      ]);
      const worker = harness.model("worker", [
        {
          reply: {
            toolCalls: [call("write_file", { path: `${OUTPUTS}/summary.md`, content: "tides\n" })],
          },
        },
        { reply: { text: "written" } },
      ]);
      const runtime = await harness.setup({ "scripted:main": main, "scripted:worker": worker });
      const dataDir = harness.fixture?.dataDir ?? "";
      const checkpoints = runtime.checkpointer;
      await runtime.skills.installFiles({
        "SKILL.md": "---\nname: notes\ndescription: How to take notes.\n---\nWrite it down.\n",
      });
      await runtime.agents.create(
        "alice",
        subagentPayload("worker", "scripted:worker", { skills: ["notes"] }),
      );
      await runtime.agents.create("alice", mainAgentPayload("boss", "scripted:main", ["worker"]));
      await runtime.files.upload("alice", "t1", "brief.txt", "the moon", { agent: "boss" });
      const result = await runtime.run({
        uid: "alice",
        agent: "boss",
        threadId: "t1",
        input: "summarise the brief",
      });
      const child = result.subagentRuns[0]?.child_thread_id ?? "";
      expect(child).toMatch(/^t1_sub_worker_[0-9a-f]{8}$/);
      // What a crash leaves behind: a child no checkpoint of t1 records, and a namespace.
      const unrecorded = "t1_sub_worker_0badf00d";
      await putCheckpoint(checkpoints, unrecorded);
      await putCheckpoint(checkpoints, "t1", "tools:1");
      // Look-alikes that are not t1's: thread "t1_sub_notes" (a valid id) and its own child.
      await runtime.threads.create("alice", { threadId: "t1_sub_notes" });
      await runtime.files.upload("alice", "t1_sub_notes", "keep.txt", "keep");
      await putCheckpoint(checkpoints, "t1_sub_notes");
      await putCheckpoint(checkpoints, "t1_sub_notes_sub_worker_12345678");

      expect(await hasCheckpoint(checkpoints, child)).toBe(true);
      expect(existsSync(join(dataDir, "threads", "t1", "uploads", "brief.txt"))).toBe(true);
      expect(existsSync(join(dataDir, "threads", "t1", "outputs", "summary.md"))).toBe(true);
      expect(existsSync(join(dataDir, "threads", child, "skills", "notes", "SKILL.md"))).toBe(true);
      expect((await runtime.listRuns("alice", "t1")).map((run) => run.run_id)).toEqual([
        result.runId,
      ]);

      await runtime.threads.delete("alice", "t1");

      await expectFailure(runtime.threads.get("alice", "t1"), ErrorCode.NotFound, "thread_id");
      for (const [threadId, ns] of [
        ["t1", ""],
        ["t1", "tools:1"],
        [child, ""],
        [unrecorded, ""],
      ] as const) {
        expect(await hasCheckpoint(checkpoints, threadId, ns), `${threadId} ${ns}`).toBe(false);
      }
      expect(existsSync(join(dataDir, "threads", "t1"))).toBe(false);
      expect(existsSync(join(dataDir, "threads", child))).toBe(false);
      expect(await runtime.runInfo("alice", result.runId)).toBeUndefined();
      // The skill library and the look-alikes are untouched.
      expect(existsSync(join(dataDir, "skills", "notes", "SKILL.md"))).toBe(true);
      expect((await runtime.threads.get("alice", "t1_sub_notes")).threadId).toBe("t1_sub_notes");
      expect(await hasCheckpoint(checkpoints, "t1_sub_notes")).toBe(true);
      expect(await hasCheckpoint(checkpoints, "t1_sub_notes_sub_worker_12345678")).toBe(true);
      expect(existsSync(join(dataDir, "threads", "t1_sub_notes", "uploads", "keep.txt"))).toBe(
        true,
      );

      // The id is free: a thread made with it starts empty.
      await runtime.threads.create("alice", { threadId: "t1" });
      expect(await runtime.threads.state("alice", "t1")).toBeUndefined();
      expect(await runtime.listRuns("alice", "t1")).toEqual([]);
      harness.assertScriptsComplete();
    });

    it("refuses a thread with a run in progress and another user's thread", async () => {
      let childStarted = false;
      const main = harness.model("main", [
        { reply: { toolCalls: [call("task", { description: "wait", subagent_type: "worker" })] } },
      ]);
      const worker = harness.model("worker", [
        {
          reply: { text: "never" },
          hold: async (_call, signal) => {
            childStarted = true;
            await new Promise((resolve) => signal?.addEventListener("abort", resolve));
          },
        },
      ]);
      const runtime = await harness.setup({ "scripted:main": main, "scripted:worker": worker });
      await runtime.agents.create("alice", subagentPayload("worker", "scripted:worker"));
      await runtime.agents.create("alice", mainAgentPayload("boss", "scripted:main", ["worker"]));
      const controller = new AbortController();
      const running = runtime.run({
        uid: "alice",
        agent: "boss",
        threadId: "t1",
        input: "go",
        signal: controller.signal,
      });
      const settled = running.catch((error: unknown) => error);
      const deadline = Date.now() + 10_000;
      while (!childStarted && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      expect(childStarted).toBe(true);

      await expectFailure(runtime.threads.delete("alice", "t1"), ErrorCode.ThreadBusy, "thread_id");
      await expectFailure(runtime.threads.delete("bob", "t1"), ErrorCode.NotFound, "thread_id");
      expect((await runtime.threads.get("alice", "t1")).threadId).toBe("t1");

      controller.abort(new Error("stop"));
      expect(await settled).toMatchObject({ code: ErrorCode.Cancelled });
      await runtime.threads.delete("alice", "t1");
      await expectFailure(runtime.threads.get("alice", "t1"), ErrorCode.NotFound);
      expect(await hasCheckpoint(runtime.checkpointer, "t1")).toBe(false);
      harness.assertScriptsComplete();
    });

    it("a deletion cut short hides the thread, and the next delete or start finishes it", async () => {
      await harness.setup({});
      const checkpoints = harness.fixture?.runtime.checkpointer;
      if (!checkpoints) throw new Error("no saver");
      const dataDir = mkdtempSync(join(tmpdir(), "thread-delete-"));
      cleanups.push(async () => rmSync(dataDir, { recursive: true, force: true }));
      const open = async (saverOfRun: BaseCheckpointSaver): Promise<Runtime> => {
        const runtime = await createRuntime({
          dataDir,
          checkpointer: saverOfRun,
          env: {},
          warn: () => undefined,
        });
        cleanups.push(() => runtime.close());
        return runtime;
      };
      const first = await open(failingOnce(checkpoints, ["t1", "t2"]));
      for (const threadId of ["t1", "t2"]) {
        await first.threads.create("alice", { threadId });
        await first.files.upload("alice", threadId, "brief.txt", "the moon");
        await putCheckpoint(checkpoints, threadId);
        await putCheckpoint(checkpoints, `${threadId}_sub_worker_0000000a`);
      }

      await expect(first.threads.delete("alice", "t1")).rejects.toThrow("disk unplugged");
      // Half-deleted (its child is gone, its own checkpoint is not) and nowhere to be seen.
      expect(await hasCheckpoint(checkpoints, "t1_sub_worker_0000000a")).toBe(false);
      expect(await hasCheckpoint(checkpoints, "t1")).toBe(true);
      await expectFailure(first.threads.get("alice", "t1"), ErrorCode.NotFound);
      await expectFailure(first.threads.state("alice", "t1"), ErrorCode.NotFound);
      await expectFailure(first.files.list("alice", "t1"), ErrorCode.NotFound);
      expect((await first.threads.search("alice")).map((thread) => thread.threadId)).toEqual([
        "t2",
      ]);
      // Its id cannot be taken meanwhile, which would bring back what is left.
      await expectFailure(
        first.threads.create("alice", { threadId: "t1", ifExists: "do_nothing" }),
        ErrorCode.AlreadyExists,
      );
      await expectFailure(
        first.files.upload("bob", "t1", "x.txt", "x", { agent: "boss" }),
        ErrorCode.NotFound,
      );

      // Deleting it again finishes the job.
      await first.threads.delete("alice", "t1");
      expect(await hasCheckpoint(checkpoints, "t1")).toBe(false);
      expect(existsSync(join(dataDir, "threads", "t1"))).toBe(false);
      await first.threads.create("alice", { threadId: "t1" });

      // A process that stops half-way: the next start finishes the deletion.
      await expect(first.threads.delete("alice", "t2")).rejects.toThrow("disk unplugged");
      await first.close();
      const next = await open(checkpoints);
      expect(await hasCheckpoint(checkpoints, "t2")).toBe(false);
      expect(existsSync(join(dataDir, "threads", "t2"))).toBe(false);
      expect((await next.threads.search("alice")).map((thread) => thread.threadId)).toEqual(["t1"]);
      await next.threads.create("alice", { threadId: "t2" });
      expect(await next.threads.state("alice", "t2")).toBeUndefined();
    });
  });
}
