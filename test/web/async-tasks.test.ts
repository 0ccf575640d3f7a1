import { describe, expect, it } from "vitest";
import { ASYNC_TASK_STATUSES, ASYNC_TASK_TOOL_NAMES } from "../../contract.js";
import { type ApprovalRequest, decisionsOf } from "../../web/src/approvals.js";
import {
  ASYNC_TASK_STATUS_TEXT,
  type AsyncTask,
  answerBody,
  isActiveTask,
  orderTasks,
  shouldPoll,
  taskApproval,
  taskCard,
  tasksSummary,
  taskToolCallsKey,
  withTask,
} from "../../web/src/async-tasks.js";
import type { ChatMessage } from "../../web/src/chat-state.js";

/** A task record as the server lists it; `finished_at` set for the statuses that end one. */
function task(id: string, status: AsyncTask["status"], finishedAt = ""): AsyncTask {
  return {
    id,
    subagent_type: "researcher",
    child_thread_id: `t1_bg_researcher_${id}`,
    description: `task ${id}`,
    status,
    created_at: "2026-12-05T10:00:00.000Z",
    updated_at: "2026-12-05T10:00:00.000Z",
    finished_at: finishedAt,
    result_preview: "",
    error: null,
    updates: 0,
    approval: null,
  };
}

/** A child's request: two gated calls, the second approve-or-reject only. */
const twoCalls: ApprovalRequest = {
  actionRequests: [
    { name: "note", args: { text: "a" } },
    { name: "send_mail", args: { to: "x@example.com" } },
  ],
  reviewConfigs: [
    { actionName: "note", allowedDecisions: ["approve", "edit", "reject"] },
    { actionName: "send_mail", allowedDecisions: ["approve", "reject"] },
  ],
};

const toolMessage = (id: string, toolName: string): ChatMessage => ({
  id,
  role: "tool",
  text: "ok",
  toolCalls: [],
  toolCallId: `call-${id}`,
  toolName,
});

describe("background tasks in the console: active, polling, order", () => {
  it("counts queued, running and waiting tasks as active, every other status as ended", () => {
    const active = ASYNC_TASK_STATUSES.filter((status) => isActiveTask({ status }));
    expect(active).toEqual(["pending", "running", "waiting"]);
    // Every status has its words in the panel.
    expect(Object.keys(ASYNC_TASK_STATUS_TEXT).sort()).toEqual([...ASYNC_TASK_STATUSES].sort());
  });

  it("polls while a task is active, not before the first listing, not once all ended or the thread is gone", () => {
    expect(shouldPoll(undefined, false)).toBe(false);
    expect(shouldPoll([], false)).toBe(false);
    expect(shouldPoll([task("a", "completed", "2026-12-05T10:01:00.000Z")], false)).toBe(false);
    expect(shouldPoll([task("a", "completed", "x"), task("b", "pending")], false)).toBe(true);
    expect(shouldPoll([task("b", "waiting")], false)).toBe(true);
    expect(shouldPoll([task("b", "running")], true)).toBe(false);
  });

  it("puts waiting first, then running, then queued (oldest first), then the latest to end", () => {
    const listed = [
      task("old-done", "completed", "2026-12-05T10:01:00.000Z"),
      task("queued", "pending"),
      task("run-1", "running"),
      task("late-fail", "failed", "2026-12-05T10:05:00.000Z"),
      task("waits", "waiting"),
      task("run-2", "running"),
      task("mid-cancel", "cancelled", "2026-12-05T10:03:00.000Z"),
    ];
    expect(orderTasks(listed).map((entry) => entry.id)).toEqual([
      "waits",
      "run-1",
      "run-2",
      "queued",
      "late-fail",
      "mid-cancel",
      "old-done",
    ]);
    // The server's list is left as it was.
    expect(listed[0]?.id).toBe("old-done");
  });

  it("sums the tasks up by what they are doing", () => {
    expect(
      tasksSummary([
        task("a", "running"),
        task("b", "running"),
        task("c", "waiting"),
        task("d", "timeout", "x"),
        task("e", "completed", "x"),
      ]),
    ).toBe("1 waiting for approval, 2 running, 2 ended");
    expect(tasksSummary([task("q", "pending")])).toBe("1 queued");
  });

  it("replaces a record by id in place (a cancel's answer), and appends a new one", () => {
    const listed = [task("a", "running"), task("b", "running")];
    const cancelled = withTask(listed, { ...task("a", "cancelled", "x"), error: "cancelled" });
    expect(cancelled.map((entry) => [entry.id, entry.status])).toEqual([
      ["a", "cancelled"],
      ["b", "running"],
    ]);
    expect(listed[0]?.status).toBe("running");
    expect(withTask(listed, task("c", "pending")).map((entry) => entry.id)).toEqual([
      "a",
      "b",
      "c",
    ]);
  });
});

describe("background tasks in the console: approvals and answers", () => {
  it("offers a waiting task's request to the approval card, and nothing for other statuses", () => {
    const waiting = { ...task("w", "waiting"), approval: { id: "int-1", value: twoCalls } };
    expect(taskApproval(waiting)).toEqual({ id: "int-1", value: twoCalls });
    // A record that moved on keeps nothing to answer, even if it still carried the request.
    expect(taskApproval({ ...waiting, status: "running" })).toBeUndefined();
    expect(taskApproval(task("w2", "waiting"))).toBeUndefined();
    // Not an approval request (no review configs): nothing the card could answer.
    const odd = { ...waiting, approval: { id: "int-2", value: { actionRequests: [] } } };
    expect(taskApproval(odd as unknown as AsyncTask)).toBeUndefined();
  });

  it("answers with one decision per gated call, in order, as the task's answer route takes them", () => {
    const result = decisionsOf(twoCalls, [
      { type: "approve" },
      { type: "reject", message: "  not to them  " },
    ]);
    if (!result.ok) throw new Error(result.message);
    expect(answerBody(result.decisions)).toEqual({
      resume: {
        decisions: [{ type: "approve" }, { type: "reject", message: "not to them" }],
      },
    });
    expect(answerBody([{ type: "reject" }])).toEqual({
      resume: { decisions: [{ type: "reject" }] },
    });
    // A call left undecided is refused before anything is sent.
    const missing = decisionsOf(twoCalls, [{ type: "approve" }]);
    expect(missing).toEqual({
      ok: false,
      index: 1,
      message: "Choose Approve or Reject for send_mail.",
    });
  });

  it("lists again when a start, update or cancel call was answered, not on reads or other tools", () => {
    const before: ChatMessage[] = [
      { id: "h", role: "human", text: "go", toolCalls: [] },
      toolMessage("1", ASYNC_TASK_TOOL_NAMES.start),
    ];
    const key = taskToolCallsKey(before);
    expect(key).not.toBe("");
    expect(taskToolCallsKey([...before, toolMessage("2", ASYNC_TASK_TOOL_NAMES.check)])).toBe(key);
    expect(taskToolCallsKey([...before, toolMessage("3", ASYNC_TASK_TOOL_NAMES.list)])).toBe(key);
    expect(taskToolCallsKey([...before, toolMessage("4", "note")])).toBe(key);
    for (const name of [
      ASYNC_TASK_TOOL_NAMES.start,
      ASYNC_TASK_TOOL_NAMES.update,
      ASYNC_TASK_TOOL_NAMES.cancel,
    ]) {
      expect(taskToolCallsKey([...before, toolMessage("5", name)])).not.toBe(key);
    }
    // An assistant's call alone (not answered yet) changes nothing: the task does not exist yet.
    const asked: ChatMessage = {
      id: "a",
      role: "assistant",
      text: "",
      toolCalls: [{ id: "call-9", name: ASYNC_TASK_TOOL_NAMES.start, args: {} }],
    };
    expect(taskToolCallsKey([...before, asked])).toBe(key);
    // Its answer counts even without the tool's name on it: matched by the call it answers.
    const answered: ChatMessage = {
      id: "r",
      role: "tool",
      text: "started",
      toolCalls: [],
      toolCallId: "call-9",
    };
    expect(taskToolCallsKey([...before, asked, answered])).not.toBe(key);
    expect(taskToolCallsKey([...before, { ...answered, toolCallId: "call-other" }])).toBe(key);
  });

  it("opens a task's child thread as a subagent card would, a queued one as running", () => {
    const done = {
      ...task("d", "completed", "2026-12-05T10:02:00.000Z"),
      result_preview: "42",
    };
    expect(taskCard(done)).toMatchObject({
      id: "d",
      subagentType: "researcher",
      childThreadId: "t1_bg_researcher_d",
      status: "completed",
      startedAt: "2026-12-05T10:00:00.000Z",
      finishedAt: "2026-12-05T10:02:00.000Z",
      preview: "42",
    });
    expect(taskCard(task("q", "pending"))).toMatchObject({
      status: "running",
      finishedAt: undefined,
    });
  });
});
