import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { BackgroundWatch } from "../../cli/background-watch.js";
import type { Io } from "../../cli/context.js";
import { LineReader } from "../../cli/lines.js";
import { ProgressRenderer } from "../../cli/progress.js";
import type { AsyncTask } from "../../middleware/async-task-records.js";

function task(id: string, fields: Partial<AsyncTask> = {}): AsyncTask {
  return {
    id,
    subagent_type: "researcher",
    child_thread_id: `t-1_bg_researcher_${id}`,
    description: "look it up",
    status: "running",
    created_at: "2026-12-05T04:00:00.000Z",
    updated_at: "2026-12-05T04:00:00.000Z",
    finished_at: "",
    result_preview: "",
    error: null,
    updates: 0,
    approval: null,
    ...fields,
  };
}

const done = (id: string, preview = `answer ${id}`) =>
  task(id, { status: "completed", result_preview: preview, finished_at: "2026-12-05T04:01:00Z" });

/**
 * A watch over scripted listings: `tasks[thread]` is what the next listing of that thread
 * answers. Polls only when the test calls `poll()` (no timer).
 */
function scripted() {
  const tasks: Record<string, AsyncTask[] | Error> = {};
  const listed: string[] = [];
  const errors: unknown[] = [];
  const watch = new BackgroundWatch({
    list: async (thread) => {
      listed.push(thread);
      const answer = tasks[thread] ?? [];
      if (answer instanceof Error) throw answer;
      return answer;
    },
    onError: (error) => errors.push(error),
    intervalMs: 0,
  });
  const printed: string[] = [];
  const outlet = (line: string) => {
    printed.push(line);
    return true;
  };
  return { tasks, listed, errors, watch, printed, outlet };
}

describe("BackgroundWatch", () => {
  it("tells a task of the opened thread that ends, once, and never one that had ended before", async () => {
    const { tasks, watch, printed, outlet } = scripted();
    tasks["t-1"] = [done("old"), task("a")];
    await watch.open("t-1");
    watch.attach("prompt", outlet);
    await watch.poll();
    expect(printed).toEqual([]);

    tasks["t-1"] = [done("old"), done("a", "found it")];
    await watch.poll();
    await watch.poll();
    expect(printed).toEqual(["[background] researcher task a completed: found it"]);
  });

  it("tells every task that ended on a thread the chat's own run started", async () => {
    const { tasks, watch, printed, outlet, listed } = scripted();
    watch.attach("prompt", outlet);
    // No thread yet (a chat without --thread, before its first run): nothing to list.
    await watch.poll();
    expect(listed).toEqual([]);
    watch.follow("t-new");
    tasks["t-new"] = [done("quick")];
    await watch.poll();
    expect(printed).toEqual(["[background] researcher task quick completed: answer quick"]);
  });

  it("keeps a line an outlet refuses (mid-sentence) and writes it when one takes it", async () => {
    const { tasks, watch, printed, outlet } = scripted();
    watch.follow("t-1");
    let midSentence = true;
    const turn: string[] = [];
    watch.attach("turn", (line) => {
      if (midSentence) return false;
      turn.push(line);
      return true;
    });
    watch.attach("prompt", outlet);
    tasks["t-1"] = [done("a"), done("b")];
    await watch.poll();
    // The turn's outlet is preferred while a turn streams, and it refused: nothing is lost.
    expect(turn).toEqual([]);
    expect(printed).toEqual([]);
    midSentence = false;
    await watch.poll();
    expect(turn).toEqual([
      "[background] researcher task a completed: answer a",
      "[background] researcher task b completed: answer b",
    ]);
    expect(printed).toEqual([]);
  });

  it("writes waiting lines through the prompt once the turn's outlet is detached", async () => {
    const { tasks, watch, printed, outlet } = scripted();
    watch.follow("t-1");
    watch.attach("turn", () => false);
    tasks["t-1"] = [done("a")];
    await watch.poll();
    watch.attach("prompt", outlet);
    expect(printed).toEqual([]);
    watch.attach("turn", undefined);
    expect(printed).toEqual(["[background] researcher task a completed: answer a"]);
  });

  it("drops what it held about a thread the chat left (/new) and ignores its late listing", async () => {
    const { tasks, watch, printed } = scripted();
    watch.follow("t-1");
    tasks["t-1"] = [done("a")];
    await watch.poll();
    // No outlet: the line waits.
    watch.follow(undefined);
    watch.follow("t-2");
    tasks["t-2"] = [task("b")];
    const closed = await watch.close();
    expect(closed).toEqual({ lines: [], thread: "t-2", active: 1 });
    expect(printed).toEqual([]);
  });

  it("following the thread it is on changes nothing", async () => {
    const { tasks, watch, printed, outlet } = scripted();
    tasks["t-1"] = [done("old")];
    await watch.open("t-1");
    watch.follow("t-1");
    watch.attach("prompt", outlet);
    await watch.poll();
    expect(printed).toEqual([]);
  });

  it("close looks once more and hands back what no outlet took, and the tasks still going", async () => {
    const { tasks, watch } = scripted();
    tasks["t-1"] = [];
    await watch.open("t-1");
    tasks["t-1"] = [done("a"), task("b"), task("c", { status: "waiting" })];
    expect(await watch.close()).toEqual({
      lines: ["[background] researcher task a completed: answer a"],
      thread: "t-1",
      active: 2,
    });
    // Closed: a late poll lists nothing.
    await watch.poll();
  });

  it("reports a failed listing once, goes on, and says nothing of a failed last look", async () => {
    const { tasks, watch, errors, printed, outlet } = scripted();
    watch.follow("t-1");
    watch.attach("prompt", outlet);
    tasks["t-1"] = new Error("database is locked");
    await watch.poll();
    await watch.poll();
    expect(errors).toHaveLength(1);
    tasks["t-1"] = [done("a")];
    await watch.poll();
    expect(printed).toEqual(["[background] researcher task a completed: answer a"]);
    tasks["t-1"] = new Error("closed");
    await watch.poll();
    expect(errors).toHaveLength(2);
    await watch.close();
    expect(errors).toHaveLength(2);
  });
});

describe("ProgressRenderer.notice", () => {
  it("refuses a line while the main agent is mid-sentence, and writes it between messages", () => {
    let out = "";
    const progress = new ProgressRenderer({ write: (text) => (out += text) });
    progress.handle({
      type: "token",
      threadId: "t-1",
      childThreadId: undefined,
      text: "Solar is ",
    });
    expect(progress.notice("[background] x")).toBe(false);
    expect(out).toBe("Solar is ");
    progress.handle({
      type: "assistant_message",
      threadId: "t-1",
      childThreadId: undefined,
      text: "Solar is cheap.",
      toolCalls: [],
    });
    expect(progress.notice("[background] x")).toBe(true);
    expect(out).toBe("Solar is \n[background] x\n");
  });
});

describe("LineReader.notice", () => {
  function io(): { io: Io; out: () => string; stdin: PassThrough } {
    const stdin = new PassThrough();
    const stdout = new PassThrough();
    let printed = "";
    stdout.setEncoding("utf8").on("data", (text: string) => {
      printed += text;
    });
    return {
      io: { stdin, stdout, stderr: new PassThrough(), env: {} },
      out: () => printed,
      stdin,
    };
  }
  const settle = () => new Promise((resolve) => setImmediate(resolve));

  it("writes nothing when no prompt waits", async () => {
    const streams = io();
    const reader = new LineReader(streams.io, () => undefined);
    expect(reader.notice("[background] x")).toBe(false);
    reader.close();
    await settle();
    expect(streams.out()).toBe("");
  });

  it("puts the line above the prompt that waits, and the prompt again below it", async () => {
    const streams = io();
    const reader = new LineReader(streams.io, () => undefined);
    const line = reader.next("› ");
    expect(reader.notice("[background] x")).toBe(true);
    streams.stdin.write("hello\n");
    expect(await line).toBe("hello");
    reader.close();
    await settle();
    expect(streams.out()).toBe("› \n[background] x\n› hello\n");
  });
});
