import { describe, expect, it } from "vitest";
import {
  backgroundTasksSection,
  FinishedTasks,
  finishedTaskLine,
  shortTaskId,
  stillActiveLine,
  taskOutcome,
} from "../../cli/async-task-lines.js";
import type { AsyncTask } from "../../middleware/async-task-records.js";

/** A background task record; `fields` override the running defaults. */
function task(fields: Partial<AsyncTask> = {}): AsyncTask {
  return {
    id: "3f2a1b2c9d8e7f60",
    subagent_type: "researcher",
    child_thread_id: "t-1_bg_researcher_3f2a1b2c",
    description: "find three sources on solar power",
    status: "running",
    created_at: "2026-12-05T04:00:00.000Z",
    updated_at: "2026-12-05T04:00:01.000Z",
    finished_at: "",
    result_preview: "",
    error: null,
    updates: 0,
    approval: null,
    ...fields,
  };
}

const WAITING_APPROVAL: AsyncTask["approval"] = {
  id: "interrupt-1",
  value: {
    actionRequests: [{ name: "write_file", args: { path: "a.md" } }],
    reviewConfigs: [{ actionName: "write_file", allowedDecisions: ["approve", "reject"] }],
  },
};

describe("shortTaskId", () => {
  it("keeps 8 characters and marks the cut", () => {
    expect(shortTaskId("3f2a1b2c9d8e7f60")).toBe("3f2a1b2c…");
  });
  it("leaves a short id whole", () => {
    expect(shortTaskId("abc")).toBe("abc");
    expect(shortTaskId("12345678")).toBe("12345678");
  });
});

describe("taskOutcome", () => {
  it("is the result preview of a completed task, on one line and cut", () => {
    const preview = `Three sources:\n${"x".repeat(300)}`;
    const outcome = taskOutcome(task({ status: "completed", result_preview: preview }));
    expect(outcome.startsWith("Three sources: xx")).toBe(true);
    expect(Array.from(outcome)).toHaveLength(100);
    expect(outcome.endsWith("…")).toBe(true);
  });
  it("is the error of a task that failed, was cancelled or timed out", () => {
    for (const status of ["failed", "cancelled", "timeout"] as const) {
      expect(taskOutcome(task({ status, error: `why ${status}` }))).toBe(`why ${status}`);
    }
  });
  it("names what a waiting task waits for", () => {
    expect(taskOutcome(task({ status: "waiting", approval: WAITING_APPROVAL }))).toBe(
      "waits for approval of write_file",
    );
  });
  it("is empty while a task is pending or running", () => {
    expect(taskOutcome(task({ status: "pending" }))).toBe("");
    expect(taskOutcome(task({ status: "running" }))).toBe("");
  });
});

describe("backgroundTasksSection", () => {
  it("is nothing for a thread without background tasks", () => {
    expect(backgroundTasksSection([])).toEqual([]);
  });

  it("counts the tasks and lists one row each, oldest first as given", () => {
    const lines = backgroundTasksSection([
      task({ status: "completed", result_preview: "Three sources: A, B, C" }),
      task({
        id: "9c01d2e3f4a5b6c7",
        subagent_type: "writer",
        description: `draft the summary of ${"everything ".repeat(10)}`,
        status: "waiting",
        approval: WAITING_APPROVAL,
      }),
      task({ id: "77", status: "timeout", error: "took longer than 60s" }),
    ]);
    expect(lines[0]).toBe("background tasks: 3 (1 active)");
    const rows = (lines[1] ?? "").split("\n");
    expect(rows[0]?.split(/\s{2,}/)).toEqual(["ID", "SUBAGENT", "STATUS", "TASK", "RESULT"]);
    expect(rows[1]?.split(/\s{2,}/)).toEqual([
      "3f2a1b2c…",
      "researcher",
      "completed",
      "find three sources on solar power",
      "Three sources: A, B, C",
    ]);
    const writer = rows[2]?.split(/\s{2,}/) ?? [];
    expect(writer.slice(0, 3)).toEqual(["9c01d2e3…", "writer", "waiting"]);
    // The description is cut to keep the row on one line.
    expect(writer[3]).toMatch(/^draft the summary of everything .*…$/);
    expect(Array.from(writer[3] ?? "")).toHaveLength(40);
    expect(writer[4]).toBe("waits for approval of write_file");
    expect(rows[3]?.split(/\s{2,}/)).toEqual([
      "77",
      "researcher",
      "timed out",
      "find three sources on solar power",
      "took longer than 60s",
    ]);
  });
});

describe("finishedTaskLine", () => {
  it("tells a completed task with the start of its result", () => {
    expect(finishedTaskLine(task({ status: "completed", result_preview: "A, B\nand C" }))).toBe(
      "[background] researcher task 3f2a1b2c… completed: A, B and C",
    );
  });
  it("tells why a task did not complete", () => {
    expect(finishedTaskLine(task({ status: "timeout", error: "took longer than 60s" }))).toBe(
      "[background] researcher task 3f2a1b2c… timed out: took longer than 60s",
    );
  });
  it("has no colon when there is nothing to add", () => {
    expect(finishedTaskLine(task({ status: "cancelled", error: null }))).toBe(
      "[background] researcher task 3f2a1b2c… cancelled",
    );
  });
});

describe("stillActiveLine", () => {
  it("counts the tasks, says who goes on with them and names the command that shows them", () => {
    expect(stillActiveLine(2, '"subagent-graph threads show t-1"')).toBe(
      '[background] 2 tasks not ended yet: the next subagent-graph process on this data (a chat, serve) goes on with them; "subagent-graph threads show t-1" shows them',
    );
    expect(stillActiveLine(1, "x")).toMatch(
      /^\[background\] 1 task not ended yet: .* with it; x shows it$/,
    );
  });
});

describe("FinishedTasks", () => {
  it("tells each task once, when it has ended", () => {
    const finished = new FinishedTasks();
    expect(finished.take([task({ status: "running" })])).toEqual([]);
    const done = task({ status: "completed", result_preview: "ok" });
    expect(finished.take([done])).toEqual([done]);
    expect(finished.take([done])).toEqual([]);
  });

  it("never tells tasks that had ended before the chat opened the thread", () => {
    const old = task({ id: "old", status: "failed", error: "boom" });
    const going = task({ id: "going", status: "running" });
    const finished = new FinishedTasks([old, going]);
    const goingDone = { ...going, status: "completed" as const, result_preview: "done" };
    expect(finished.take([old, goingDone])).toEqual([goingDone]);
  });

  it("tells several tasks that ended between two looks, in listing order", () => {
    const finished = new FinishedTasks();
    const a = task({ id: "a", status: "completed" });
    const b = task({ id: "b", status: "cancelled", error: "cancelled by the agent" });
    const c = task({ id: "c", status: "running" });
    expect(finished.take([a, b, c]).map((entry) => entry.id)).toEqual(["a", "b"]);
  });
});
