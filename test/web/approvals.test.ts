import { describe, expect, it } from "vitest";
import {
  type ApprovalRequest,
  allowedDecisions,
  approvalsOf,
  decisionsOf,
  editDraft,
  mergeApprovals,
  pendingFromState,
  pendingFromThread,
  resumeCommand,
} from "../../web/src/approvals.js";
import {
  applyRunEvent,
  conversationFromState,
  conversationFromValues,
  emptyConversation,
  withApprovalSent,
} from "../../web/src/chat-state.js";
import { RunConversation } from "../../web/src/run-conversation.js";

/** A request as langchain's middleware raises it: one call of `write_file`, every decision. */
const writeRequest: ApprovalRequest = {
  actionRequests: [
    {
      name: "write_file",
      args: { path: "notes.md", content: "hi" },
      description:
        'Tool execution requires approval\n\nTool: write_file\nArgs: {"path":"notes.md"}',
    },
  ],
  reviewConfigs: [{ actionName: "write_file", allowedDecisions: ["approve", "edit", "reject"] }],
};

/** Two calls in one request; the second may only be approved or rejected. */
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

const subagentRequest = (toolCallId: string): ApprovalRequest => ({
  ...writeRequest,
  subagent: {
    subagent_type: "writer",
    child_thread_id: `t1_sub_writer_${toolCallId}`,
    tool_call_id: toolCallId,
    description: "write the notes",
    started_at: "2026-12-04T10:00:00.000Z",
  },
});

describe("approval requests: reading them", () => {
  it("keeps only approval requests among interrupts, and merges by id", () => {
    const read = approvalsOf([
      { id: "a", value: writeRequest },
      { id: "b", value: { question: "approve?" } },
      { id: 3, value: writeRequest },
      null,
    ]);
    expect(read).toEqual([{ id: "a", value: writeRequest }]);
    expect(approvalsOf("nonsense")).toEqual([]);
    const merged = mergeApprovals(read, [
      { id: "c", value: twoCalls },
      { id: "a", value: twoCalls },
    ]);
    expect(merged).toEqual([
      { id: "a", value: twoCalls },
      { id: "c", value: twoCalls },
    ]);
  });

  it("reads a state's tasks and its waiting subagent records, each request once", () => {
    const state = {
      tasks: [
        { id: "task-1", interrupts: [{ id: "i1", value: subagentRequest("call-1") }] },
        { id: "task-2", interrupts: [] },
        { id: "task-3", interrupts: [{ id: "i3", value: writeRequest }], result: null },
        // Resumed and finished while another request still waits: LangGraph still lists it.
        {
          id: "task-4",
          interrupts: [{ id: "answered", value: writeRequest }],
          result: { messages: [] },
        },
      ],
      values: {
        subagent_runs: [
          {
            id: "call-1",
            status: "waiting",
            approval: { id: "i1", value: subagentRequest("call-1") },
          },
          // Known from the record alone (a server that does not list tasks): still shown.
          {
            id: "call-2",
            status: "waiting",
            approval: { id: "i2", value: subagentRequest("call-2") },
          },
          { id: "call-0", status: "completed" },
        ],
      },
    };
    expect(pendingFromState(state).map((entry) => entry.id)).toEqual(["i1", "i3", "i2"]);
    expect(pendingFromState({ values: {}, tasks: [] })).toEqual([]);
  });

  it("reads a thread's interrupts keyed by task", () => {
    const pending = pendingFromThread({
      interrupts: {
        "task-1": [{ id: "i1", value: writeRequest }],
        "task-2": [],
        "task-3": [{ id: "i3", value: twoCalls }],
      },
    });
    expect(pending.map((entry) => entry.id)).toEqual(["i1", "i3"]);
    expect(pendingFromThread({})).toEqual([]);
  });

  it("takes each call's allowed decisions from its review config", () => {
    expect(allowedDecisions(twoCalls, 0)).toEqual(["approve", "edit", "reject"]);
    expect(allowedDecisions(twoCalls, 1)).toEqual(["approve", "reject"]);
    // Out of order: matched by the tool's name.
    const reordered = { ...twoCalls, reviewConfigs: [...twoCalls.reviewConfigs].reverse() };
    expect(allowedDecisions(reordered, 1)).toEqual(["approve", "reject"]);
  });
});

describe("approval requests: answering them", () => {
  it("approves, edits with arguments parsed from JSON, and rejects with or without a message", () => {
    expect(decisionsOf(writeRequest, [{ type: "approve" }])).toEqual({
      ok: true,
      decisions: [{ type: "approve" }],
    });
    const edit = editDraft(writeRequest.actionRequests[0] as ApprovalRequest["actionRequests"][0]);
    expect(edit).toEqual({
      type: "edit",
      argsText: JSON.stringify({ path: "notes.md", content: "hi" }, null, 2),
    });
    expect(decisionsOf(writeRequest, [{ type: "edit", argsText: '{"path": "b.md"}' }])).toEqual({
      ok: true,
      decisions: [{ type: "edit", editedAction: { name: "write_file", args: { path: "b.md" } } }],
    });
    expect(decisionsOf(writeRequest, [{ type: "reject", message: "  not there  " }])).toEqual({
      ok: true,
      decisions: [{ type: "reject", message: "not there" }],
    });
    expect(decisionsOf(writeRequest, [{ type: "reject", message: " " }])).toEqual({
      ok: true,
      decisions: [{ type: "reject" }],
    });
  });

  it("refuses edits that are not a JSON object, naming the tool and the fix", () => {
    const broken = decisionsOf(writeRequest, [{ type: "edit", argsText: '{"path": ' }]);
    expect(broken).toMatchObject({ ok: false, index: 0 });
    expect(!broken.ok && broken.message).toMatch(
      /^The arguments of write_file are not valid JSON \(.+\): fix them, or choose Approve or Reject\.$/,
    );
    const list = decisionsOf(writeRequest, [{ type: "edit", argsText: "[1, 2]" }]);
    expect(!list.ok && list.message).toBe(
      'The arguments of write_file must be a JSON object such as {"path": "notes.md"}, not [1,2].',
    );
  });

  it("needs a decision for every call, each of a type its gate allows", () => {
    expect(decisionsOf(twoCalls, [{ type: "approve" }])).toEqual({
      ok: false,
      index: 1,
      message: "Choose Approve or Reject for send_mail.",
    });
    expect(decisionsOf(twoCalls, [{ type: "approve" }, { type: "edit", argsText: "{}" }])).toEqual({
      ok: false,
      index: 1,
      message: "Edit is not allowed for send_mail: choose Approve or Reject.",
    });
    expect(
      decisionsOf(twoCalls, [
        { type: "edit", argsText: '{"text":"b"}' },
        { type: "reject", message: "" },
      ]),
    ).toEqual({
      ok: true,
      decisions: [
        { type: "edit", editedAction: { name: "note", args: { text: "b" } } },
        { type: "reject" },
      ],
    });
  });

  it("answers one request by its id, so others stay pending", () => {
    expect(resumeCommand("i2", [{ type: "approve" }])).toEqual({
      resume: { i2: { decisions: [{ type: "approve" }] } },
    });
  });
});

describe("approval requests in the conversation", () => {
  const human = { type: "human", id: "h1", content: "go" };
  const ai = {
    type: "ai",
    id: "a1",
    content: "",
    tool_calls: [
      { id: "call-1", name: "task", args: { subagent_type: "writer", description: "one" } },
      { id: "call-2", name: "task", args: { subagent_type: "writer", description: "two" } },
    ],
  };

  it("a values event holding only __interrupt__ adds the request and keeps the messages", async () => {
    const run = new RunConversation(
      conversationFromValues({ messages: [human, ai], subagent_runs: [] }),
    );
    run.push("values", { __interrupt__: [{ id: "i1", value: subagentRequest("call-1") }] });
    let conversation = await run.settled();
    expect(conversation.messages.map((message) => message.id)).toEqual(["h1", "a1"]);
    expect(conversation.approvals.map((entry) => entry.id)).toEqual(["i1"]);
    // A full state afterwards keeps it: values do not say which requests were answered.
    run.push("values", { messages: [human, ai] });
    conversation = await run.end();
    expect(conversation.messages.map((message) => message.id)).toEqual(["h1", "a1"]);
    expect(conversation.approvals.map((entry) => entry.id)).toEqual(["i1"]);
  });

  it("a child's own interrupt (under its namespace) is not the parent's request", () => {
    const conversation = applyRunEvent(
      conversationFromValues({ messages: [human, ai] }),
      "updates|tools:6f1c1a2e-task",
      { __interrupt__: [{ id: "child-interrupt", value: writeRequest }] },
    );
    expect(conversation.approvals).toEqual([]);
  });

  it("subagent_waiting marks the card waiting with its request; sending the answer runs it again", () => {
    let conversation = conversationFromValues({ messages: [human, ai] });
    conversation = applyRunEvent(conversation, "custom", {
      type: "subagent_waiting",
      id: "call-2",
      subagent_type: "writer",
      child_thread_id: "t1_sub_writer_2",
      description: "two",
      started_at: "2026-12-04T10:00:00.000Z",
      approval: { id: "i2", value: subagentRequest("call-2") },
    });
    conversation = applyRunEvent(conversation, "updates", {
      __interrupt__: [{ id: "i2", value: subagentRequest("call-2") }],
    });
    expect(conversation.cards["call-2"]).toMatchObject({
      status: "waiting",
      childThreadId: "t1_sub_writer_2",
    });
    expect(conversation.approvals.map((entry) => entry.id)).toEqual(["i2"]);

    const sent = withApprovalSent(conversation, "i2");
    expect(sent.approvals).toEqual([]);
    expect(sent.cards["call-2"]?.status).toBe("running");
    expect(sent.cards["call-1"]).toEqual(conversation.cards["call-1"]);
  });

  it("a thread's state says exactly which requests are pending", () => {
    const previous = {
      ...emptyConversation(),
      approvals: [{ id: "answered", value: writeRequest }],
    };
    const conversation = conversationFromState(
      {
        values: {
          messages: [human, ai],
          subagent_runs: [
            {
              id: "call-1",
              subagent_type: "writer",
              child_thread_id: "t1_sub_writer_1",
              description: "one",
              status: "waiting",
              rounds: 0,
              max_rounds_reached: false,
              started_at: "2026-12-04T10:00:00.000Z",
              finished_at: "",
              result_preview: "",
              error: null,
              artifacts: [],
              usage: { input_tokens: 0, output_tokens: 0, total_tokens: 0 },
              approval: { id: "i1", value: subagentRequest("call-1") },
            },
          ],
        },
        tasks: [{ id: "task-1", interrupts: [{ id: "i1", value: subagentRequest("call-1") }] }],
      },
      previous,
    );
    expect(conversation.approvals.map((entry) => entry.id)).toEqual(["i1"]);
    expect(conversation.cards["call-1"]?.status).toBe("waiting");
  });
});
