import type { BaseMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import type { AsyncTask } from "../../middleware/async-task-records.js";
import type { ScriptedCall, ScriptStep } from "../../models/scripted.js";
import type { Runtime } from "../../runtime.js";
import { Gate } from "../support/gate.js";
import {
  mainAgentPayload,
  type SaverKindUnderTest,
  subagentPayload,
} from "../support/runtime-fixture.js";
import { ScriptedHarness } from "../support/scripted-harness.js";

const start = (subagent_type: string, description: string, id?: string) => ({
  name: "start_async_task",
  args: { description, subagent_type },
  ...(id ? { id } : {}),
});

/** The text of the newest message the model was sent. */
function lastText(call: ScriptedCall): string {
  const last = call.messages.at(-1);
  return typeof last?.content === "string" ? last.content : JSON.stringify(last?.content);
}

/** The tool messages of a call, by tool name. */
function toolAnswers(call: ScriptedCall, name: string): string[] {
  return call.messages
    .filter((message: BaseMessage) => message.getType() === "tool" && message.name === name)
    .map((message) => String(message.content));
}

async function settled(
  runtime: Runtime,
  threadId: string,
  taskId: string,
  statuses: AsyncTask["status"][],
) {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const task = await runtime.asyncTasks.get("alice", threadId, taskId);
    if (statuses.includes(task.status)) return task;
    if (Date.now() > deadline) {
      throw new Error(`task ${taskId} still ${task.status} (${task.error ?? ""})`);
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Background subagents (README "Background subagents") through the library, on one saver. */
export function runAsyncTasksSuite(saver: SaverKindUnderTest): void {
  describe(`background subagents on the ${saver} saver`, () => {
    const harness = new ScriptedHarness(saver);
    afterEach(async () => {
      await harness.dispose();
    });

    /** Alice's "boss" with `async_subagents: ["researcher"]`, each with its script. */
    async function boss(
      mainSteps: ScriptStep[],
      researcherSteps: ScriptStep[],
      mainExtra: Record<string, unknown> = {},
      researcherExtra: Record<string, unknown> = {},
      runtimeExtra: Parameters<ScriptedHarness["setup"]>[1] = {},
    ) {
      const main = harness.model("main", mainSteps);
      const researcher = harness.model("researcher", researcherSteps);
      const runtime = await harness.setup(
        { "scripted:main": main, "scripted:researcher": researcher },
        runtimeExtra,
      );
      await runtime.agents.create(
        "alice",
        subagentPayload("researcher", "scripted:researcher", researcherExtra),
      );
      await runtime.agents.create(
        "alice",
        mainAgentPayload("boss", "scripted:main", undefined, {
          async_subagents: ["researcher"],
          ...mainExtra,
        }),
      );
      return { runtime, main, researcher };
    }

    it("starts a task that runs while the conversation goes on, and tells the next model call its answer", async () => {
      const release = new Gate();
      let taskId = "";
      const { runtime } = await boss(
        [
          {
            expect: (call) => {
              expect(call.tools).toEqual(
                expect.arrayContaining([
                  "start_async_task",
                  "check_async_task",
                  "update_async_task",
                  "cancel_async_task",
                  "list_async_tasks",
                ]),
              );
              expect(call.system).toContain("- researcher: the researcher subagent");
            },
            reply: { toolCalls: [start("researcher", "Find the boiling point of water")] },
          },
          {
            expect: (call) => {
              const [answer] = toolAnswers(call, "start_async_task");
              taskId = /task_id "([^"]+)"/.exec(answer ?? "")?.[1] ?? "";
              expect(taskId).not.toBe("");
            },
            reply: { text: "I started the research." },
          },
          // The second turn runs while the child is still held: the parent is never blocked.
          {
            expect: (call) => expect(lastText(call)).toBe("How is it going?"),
            reply: { text: "Still working on it." },
          },
          {
            expect: (call) => {
              const notice = call.messages.find((message) => message.name === "background_tasks");
              expect(String(notice?.content)).toContain(
                `Background task ${taskId} (researcher) completed`,
              );
              expect(String(notice?.content)).toContain("100 °C at sea level");
            },
            reply: { text: "It boils at 100 °C." },
          },
        ],
        [
          {
            expect: (call) => expect(lastText(call)).toBe("Find the boiling point of water"),
            hold: (_call, signal) => release.pass(signal),
            reply: { text: "Water boils at 100 °C at sea level." },
          },
        ],
      );
      const first = await runtime.run({ uid: "alice", agent: "boss", input: "Research water" });
      const threadId = first.threadId;
      const [task] = await runtime.asyncTasks.list("alice", threadId);
      expect(task).toMatchObject({
        id: taskId,
        subagent_type: "researcher",
        description: "Find the boiling point of water",
      });
      expect(task?.child_thread_id).toMatch(new RegExp(`^${threadId}_bg_researcher_[0-9a-f]{8}$`));
      expect(["pending", "running"]).toContain(task?.status);

      const second = await runtime.run({ uid: "alice", threadId, input: "How is it going?" });
      expect(second.output).toBe("Still working on it.");
      release.release();
      const done = await settled(runtime, threadId, taskId, ["completed"]);
      expect(done.result).toBe("Water boils at 100 °C at sea level.");
      expect(done.finished_at).not.toBe("");

      const third = await runtime.run({ uid: "alice", threadId, input: "And?" });
      expect(third.output).toBe("It boils at 100 °C.");
      const state = await runtime.threads.state("alice", threadId);
      const records =
        (state?.values as { async_tasks?: AsyncTask[] } | undefined)?.async_tasks ?? [];
      expect(records).toEqual([expect.objectContaining({ id: taskId, status: "completed" })]);
      // Its child thread is read like any child of the thread.
      const child = await runtime.childThread("alice", task?.child_thread_id ?? "");
      expect(JSON.stringify(child)).toContain("Water boils at 100 °C at sea level.");
      harness.assertScriptsComplete();
    });

    it("refuses bad input as tool errors the model reads, and starts nothing", async () => {
      const { runtime } = await boss(
        [
          {
            reply: {
              toolCalls: [
                start("ghost", "anything"),
                start("researcher", "first", "call-a"),
                start("researcher", "second", "call-b"),
                { name: "check_async_task", args: { task_id: "nope" } },
              ],
            },
          },
          {
            expect: (call) => {
              const starts = toolAnswers(call, "start_async_task");
              expect(starts[0]).toBe(
                'unknown subagent_type "ghost": start_async_task takes one of "researcher"',
              );
              const refused = starts.filter((text) => text.includes("max_async_tasks"));
              expect(refused).toHaveLength(1);
              expect(refused[0]).toContain("at most 1 may be (max_async_tasks)");
              expect(toolAnswers(call, "check_async_task")[0]).toMatch(
                /^unknown task_id "nope": this thread(?: has no background tasks|'s background tasks are "[^"]+")$/,
              );
            },
            reply: { text: "ok" },
          },
        ],
        [{ reply: { text: "done" } }],
        { max_async_tasks: 1 },
      );
      const { threadId } = await runtime.run({ uid: "alice", agent: "boss", input: "go" });
      const tasks = await runtime.asyncTasks.list("alice", threadId);
      expect(tasks).toHaveLength(1);
      await settled(runtime, threadId, tasks[0]?.id ?? "", ["completed"]);
      // Another user's view: neither the thread nor the task exist for them.
      await expect(runtime.asyncTasks.list("bob", threadId)).rejects.toMatchObject({
        code: "NOT_FOUND",
      });
      await expect(
        runtime.asyncTasks.get("alice", threadId, "00000000-0000-0000-0000-000000000000"),
      ).rejects.toMatchObject({ code: "NOT_FOUND", field: "task_id" });
      harness.assertScriptsComplete();
    });

    it("cancels a running task, aborting its model call, and refuses a follow-up to it", async () => {
      let aborted = false;
      let called: () => void = () => {};
      const modelCalled = new Promise<void>((resolve) => {
        called = resolve;
      });
      const { runtime } = await boss(
        [
          { reply: { toolCalls: [start("researcher", "a long survey")] } },
          { reply: { text: "started" } },
        ],
        [
          {
            hold: (_call, signal) =>
              new Promise<void>((_resolve, reject) => {
                called();
                signal?.addEventListener("abort", () => {
                  aborted = true;
                  reject(new Error("aborted"));
                });
              }),
            reply: { text: "never" },
          },
        ],
      );
      const { threadId } = await runtime.run({ uid: "alice", agent: "boss", input: "go" });
      const [task] = await runtime.asyncTasks.list("alice", threadId);
      // Cancelled while its model request is under way.
      await modelCalled;
      const cancelled = await runtime.asyncTasks.cancel("alice", threadId, task?.id ?? "");
      expect(cancelled.status).toBe("cancelled");
      expect(aborted).toBe(true);
      await expect(
        runtime.asyncTasks.update("alice", threadId, task?.id ?? "", "more please"),
      ).rejects.toMatchObject({ code: "VALIDATION_FAILED", field: "task_id" });
      await expect(runtime.asyncTasks.cancel("alice", threadId, task?.id ?? "")).rejects.toThrow(
        "already ended (cancelled)",
      );
    });

    it("stops a task at async_task_timeout_ms of running, and tells the parent", async () => {
      let taskId = "";
      const { runtime, main } = await boss(
        [
          { reply: { toolCalls: [start("researcher", "an endless search")] } },
          { reply: { text: "started" } },
          {
            expect: (call) =>
              expect(lastText(call)).toBe(
                `[Background task ${taskId} (researcher) timeout] timed out after 150 ms of running`,
              ),
            reply: { text: "It took too long." },
          },
        ],
        [
          {
            hold: (_call, signal) =>
              new Promise<void>((_resolve, reject) => {
                signal?.addEventListener("abort", () => reject(new Error("aborted")));
              }),
            reply: { text: "never" },
          },
        ],
        { async_task_timeout_ms: 150 },
      );
      const { threadId } = await runtime.run({ uid: "alice", agent: "boss", input: "go" });
      const [task] = await runtime.asyncTasks.list("alice", threadId);
      taskId = task?.id ?? "";
      const ended = await settled(runtime, threadId, taskId, ["timeout"]);
      expect(ended.error).toBe("timed out after 150 ms of running");
      const told = await runtime.run({ uid: "alice", threadId, input: "news?" });
      expect(told.output).toBe("It took too long.");
      // The researcher may be stopped before its model is called (a slow machine): its script is
      // not held to.
      main.assertComplete();
    });

    it("steers a running task with a follow-up, run after what it is doing", async () => {
      const release = new Gate();
      const { runtime } = await boss(
        [
          { reply: { toolCalls: [start("researcher", "draft a summary")] } },
          { reply: { text: "started" } },
        ],
        [
          { hold: (_call, signal) => release.pass(signal), reply: { text: "a long summary" } },
          {
            expect: (call) => expect(lastText(call)).toBe("make it one line"),
            reply: { text: "one line" },
          },
        ],
      );
      const { threadId } = await runtime.run({ uid: "alice", agent: "boss", input: "go" });
      const [task] = await runtime.asyncTasks.list("alice", threadId);
      await settled(runtime, threadId, task?.id ?? "", ["running"]);
      const updated = await runtime.asyncTasks.update(
        "alice",
        threadId,
        task?.id ?? "",
        "make it one line",
      );
      expect(updated.updates).toBe(1);
      release.release();
      const done = await settled(runtime, threadId, task?.id ?? "", ["completed"]);
      expect(done.result).toBe("one line");
      harness.assertScriptsComplete();
    });

    it("waits on its subagent's approval, answered on the parent thread", async () => {
      const log: string[] = [];
      const note = tool(
        async ({ text }: { text: string }) => {
          log.push(text);
          return `noted: ${text}`;
        },
        { name: "note", description: "write a note", schema: z.object({ text: z.string() }) },
      );
      const { runtime } = await boss(
        [
          { reply: { toolCalls: [start("researcher", "note the result")] } },
          { reply: { text: "started" } },
        ],
        [
          { reply: { toolCalls: [{ name: "note", args: { text: "42" } }] } },
          { reply: { text: "noted it" } },
        ],
        {},
        { tools: ["note"], interrupt_on: { note: true } },
        { tools: [note] },
      );
      const { threadId } = await runtime.run({ uid: "alice", agent: "boss", input: "go" });
      const [task] = await runtime.asyncTasks.list("alice", threadId);
      const waiting = await settled(runtime, threadId, task?.id ?? "", ["waiting"]);
      expect(waiting.approval?.value.actionRequests).toEqual([
        expect.objectContaining({ name: "note", args: { text: "42" } }),
      ]);
      expect(log).toEqual([]);
      await expect(
        runtime.asyncTasks.answer("alice", threadId, task?.id ?? "", { decisions: [] }),
      ).rejects.toMatchObject({ code: "VALIDATION_FAILED" });
      await runtime.asyncTasks.answer("alice", threadId, task?.id ?? "", {
        decisions: [{ type: "approve" }],
      });
      const done = await settled(runtime, threadId, task?.id ?? "", ["completed"]);
      expect(done.result).toBe("noted it");
      expect(log).toEqual(["42"]);
      harness.assertScriptsComplete();
    });

    it("starts a run on the parent thread when a task ends, with notify_parent", async () => {
      const { runtime } = await boss(
        [
          { reply: { toolCalls: [start("researcher", "quick check")] } },
          { reply: { text: "started" } },
          {
            expect: (call) => expect(lastText(call)).toContain("(researcher) completed"),
            reply: { text: "The check is done: all good." },
          },
        ],
        [{ delayMs: 50, reply: { text: "all good" } }],
        { notify_parent: true },
      );
      const { threadId } = await runtime.run({ uid: "alice", agent: "boss", input: "go" });
      const deadline = Date.now() + 15_000;
      for (;;) {
        const state = await runtime.threads.state("alice", threadId);
        const messages =
          (state?.values as { messages?: BaseMessage[] } | undefined)?.messages ?? [];
        if (messages.at(-1)?.content === "The check is done: all good.") break;
        if (Date.now() > deadline) throw new Error("the parent was not told");
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      harness.assertScriptsComplete();
    });

    it("cancels a deleted thread's tasks and deletes their threads", async () => {
      let reached: () => void = () => {};
      const held = new Promise<void>((resolve) => {
        reached = resolve;
      });
      const { runtime } = await boss(
        [
          { reply: { toolCalls: [start("researcher", "slow work")] } },
          { reply: { text: "started" } },
        ],
        [
          {
            hold: (_call, signal) =>
              new Promise<void>((resolve) => {
                reached();
                signal?.addEventListener("abort", () => resolve());
              }),
            reply: new Error("stopped"),
          },
        ],
      );
      const { threadId } = await runtime.run({ uid: "alice", agent: "boss", input: "go" });
      const [task] = await runtime.asyncTasks.list("alice", threadId);
      await held;
      await runtime.threads.delete("alice", threadId);
      const tuple = await runtime.checkpointer.getTuple({
        configurable: { thread_id: task?.child_thread_id ?? "", checkpoint_ns: "" },
      });
      expect(tuple).toBeUndefined();
      await expect(runtime.asyncTasks.list("alice", threadId)).rejects.toMatchObject({
        code: "NOT_FOUND",
      });
    });
  });
}
