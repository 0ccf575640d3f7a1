import { readFile } from "node:fs/promises";
import { join } from "node:path";
import type { Client } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { DEMO_GATED_TOOL, DEMO_UID, seedDemo } from "../../agents/demo.js";
import type { ApprovalRequest } from "../../middleware/approval-request.js";
import { createRuntime } from "../../runtime.js";
import {
  type ChatCompletionRequestBody,
  type FakeOpenAIServer,
  type FakeReply,
  startFakeOpenAIServer,
} from "../support/fake-openai-server.js";
import { subagentNamespaces } from "../support/subagent-stream.js";
import { until } from "../support/until.js";
import { type NewcomerStudio, startNewcomerStudio } from "./newcomer-project.js";

/** The demo agents, told apart by their system prompts (agents/demo.ts). */
type DemoAgent = "assistant" | "researcher" | "reviewer";

function agentOf(request: ChatCompletionRequestBody): DemoAgent {
  // The system message's content comes as text parts: searched as JSON.
  const system = JSON.stringify(request.messages[0]?.content ?? "");
  if (system.includes("careful researcher")) return "researcher";
  if (system.includes("critical reviewer")) return "reviewer";
  if (system.includes("helpful assistant")) return "assistant";
  throw new Error(`a model request from an unknown agent: ${system.slice(0, 80)}`);
}

/** What each agent's model answers: to the task it was given (`human`) or to its tool results. */
type Script = Partial<Record<DemoAgent, { ask: FakeReply; answer: FakeReply }>>;

const NOTES = "/home/gem/user-data/outputs/tides.md";

/** The scripted turn: the main agent delegates to both subagents, the researcher saves notes. */
const DELEGATE: Script = {
  assistant: {
    ask: {
      content: "",
      toolCalls: [
        {
          name: "task",
          arguments: {
            subagent_type: "researcher",
            description: `Research tides and save your notes to ${NOTES}`,
          },
        },
        {
          name: "task",
          arguments: { subagent_type: "reviewer", description: "Review a plan to study tides" },
        },
      ],
    },
    answer: { content: "Your notes are saved and the plan was reviewed." },
  },
  researcher: {
    ask: {
      content: "",
      toolCalls: [{ name: "write_file", arguments: { path: NOTES, content: "High tide: 6am" } }],
    },
    answer: { content: "Notes saved." },
  },
  reviewer: { ask: { content: "The plan is sound." }, answer: { content: "unused" } },
};

interface SubagentRunView {
  subagent_type: string;
  status: string;
  child_thread_id: string;
  approval?: ApprovalRequest;
}

interface AgentValues {
  messages: { type: string; name?: string; content: string }[];
  subagent_runs: SubagentRunView[];
}

type Interrupted = AgentValues & { __interrupt__?: { id: string; value: ApprovalRequest }[] };

/**
 * Approvals under the official dev server (issue 39 item 9): a newcomer's `langgraphjs dev` on
 * `langgraph.json` with nothing configured (no assistant context, no run context, no config),
 * driven with `@langchain/langgraph-sdk`, the demo agents' model scripted by a fake
 * OpenAI-compatible server. The demo's researcher gates `write_file` (agents/demo.ts). The same
 * server runs background subagents (issue 41 item 5), to keep one dev server for both.
 */
describe("Studio approvals and background subagents with no configuration (langgraphjs dev, the SDK, the demo agents)", {
  timeout: 90_000,
}, () => {
  let fake: FakeOpenAIServer;
  let studio: NewcomerStudio | undefined;
  let client: Client;
  let script: Script = {};
  /** A test's own answers, tried before `script` (undefined: the script answers). */
  let respond: ((request: ChatCompletionRequestBody) => FakeReply | undefined) | undefined;

  /** The model requests each demo agent made since the test began. */
  const requestsOf = (agent: DemoAgent) =>
    fake.requests.filter((request) => agentOf(request) === agent).length;

  beforeAll(async () => {
    fake = await startFakeOpenAIServer((request) => {
      const own = respond?.(request);
      if (own) return own;
      const agent = agentOf(request);
      const turn = script[agent];
      if (!turn) throw new Error(`no model turn scripted for ${agent}`);
      return request.messages.at(-1)?.role === "tool" ? turn.answer : turn.ask;
    });
    studio = await startNewcomerStudio({
      OPENAI_API_KEY: "test-key",
      OPENAI_BASE_URL: fake.url,
      OPENAI_MAX_RETRIES: "0",
    });
    client = studio.server.client;
  }, 90_000);

  beforeEach(() => {
    fake.requests.length = 0;
    respond = undefined;
  });

  afterAll(async () => {
    await studio?.dispose();
    await fake?.close();
  });

  it("pauses a run on the demo researcher's write_file, shows the request on the parent thread, and approve finishes it without running the reviewer again", async () => {
    script = DELEGATE;
    const thread = await client.threads.create();
    const paused = (await client.runs.wait(thread.thread_id, "agent", {
      input: { messages: [{ role: "user", content: "Study tides and keep notes" }] },
    })) as unknown as Interrupted;

    // runs.wait's result carries the interrupt: the child's request plus the subagent.
    expect(paused.__interrupt__).toHaveLength(1);
    const [pending] = paused.__interrupt__ ?? [];
    const request = pending?.value as ApprovalRequest;
    expect(request.actionRequests).toEqual([
      {
        name: DEMO_GATED_TOOL.tool,
        args: { path: NOTES, content: "High tide: 6am" },
        description: expect.stringContaining("The researcher wants to write a file"),
      },
    ]);
    expect(request.reviewConfigs).toEqual([
      { actionName: "write_file", allowedDecisions: ["approve", "edit", "reject"] },
    ]);
    expect(request.subagent).toMatchObject({
      subagent_type: DEMO_GATED_TOOL.subagent,
      description: `Research tides and save your notes to ${NOTES}`,
    });
    const childThread = request.subagent?.child_thread_id ?? "";
    expect(childThread).toMatch(new RegExp(`^${thread.thread_id}_sub_researcher_[0-9a-f]{8}$`));
    // The request carries nothing of the child's system prompt.
    expect(JSON.stringify(request)).not.toContain("careful researcher");

    // The thread, its state's tasks and the run all say the same.
    const read = await client.threads.get(thread.thread_id);
    expect(read.status).toBe("interrupted");
    expect(Object.values(read.interrupts).flat()).toEqual([
      expect.objectContaining({ id: pending?.id, value: request }),
    ]);
    const state = await client.threads.getState<AgentValues>(thread.thread_id);
    expect(state.next).toEqual(["tools"]);
    expect(state.tasks.flatMap((task) => task.interrupts)).toEqual([
      expect.objectContaining({ id: pending?.id, value: request }),
    ]);
    // The dev server ends a run that paused `success` (its "interrupted" is a run stopped by
    // a cancel or a newer run: `queue.mjs` in @langchain/langgraph-api); the thread says it waits.
    const [run] = await client.runs.list(thread.thread_id);
    expect(run?.status).toBe("success");

    // The reviewer finished during the pause. The researcher's record is written when its call
    // ends: until then the request in `tasks` is where it shows (our own server and the library
    // add a "waiting" record when they read the thread; the dev server reads the graph's state).
    expect(state.values.subagent_runs.map((entry) => [entry.subagent_type, entry.status])).toEqual([
      ["reviewer", "completed"],
    ]);
    const notes = join(studio?.dataDir ?? "", "threads", thread.thread_id, "outputs", "tides.md");
    await expect(readFile(notes, "utf8")).rejects.toMatchObject({ code: "ENOENT" });
    expect([requestsOf("assistant"), requestsOf("researcher"), requestsOf("reviewer")]).toEqual([
      1, 1, 1,
    ]);

    // Studio's resume: a Command with the decisions, and nothing else.
    const done = (await client.runs.wait(thread.thread_id, "agent", {
      command: { resume: { decisions: [{ type: "approve" }] } },
    })) as unknown as Interrupted;
    expect(done.__interrupt__ ?? []).toEqual([]);
    expect(done.messages.at(-1)).toMatchObject({
      type: "ai",
      content: "Your notes are saved and the plan was reviewed.",
    });
    expect(done.subagent_runs.map((entry) => [entry.subagent_type, entry.status])).toEqual([
      ["researcher", "completed"],
      ["reviewer", "completed"],
    ]);
    expect(await readFile(notes, "utf8")).toBe("High tide: 6am");
    // The researcher went on from its pause (one more model call, after its tool ran), the
    // main agent answered once more, and the finished reviewer did not run again.
    expect([requestsOf("assistant"), requestsOf("researcher"), requestsOf("reviewer")]).toEqual([
      2, 2, 1,
    ]);
    const researcherAnswer = fake.requests.filter((r) => agentOf(r) === "researcher")[1];
    // Its write ran once: one tool result, for the approved call.
    const toolResults = researcherAnswer?.messages.filter((message) => message.role === "tool");
    expect(toolResults).toEqual([
      expect.objectContaining({ content: expect.stringContaining("tides.md") }),
    ]);
    const after = await client.threads.get(thread.thread_id);
    expect(after.status).toBe("idle");
    expect(Object.values(after.interrupts ?? {}).flat()).toEqual([]);
    expect(fake.failures).toEqual([]);
  });

  it("streams as Studio's UI does: the last values event carries the request, and an edit resumes it at the edited path", async () => {
    script = DELEGATE;
    const thread = await client.threads.create();
    /** One run streamed the way Studio's UI streams a message or a resume. */
    const streamed = async (payload: Record<string, unknown>) => {
      const events: { event: string; data: unknown }[] = [];
      for await (const part of client.runs.stream(thread.thread_id, "agent", {
        ...payload,
        streamMode: ["values", "updates"],
        streamSubgraphs: true,
      })) {
        events.push(part);
      }
      expect(events.filter((event) => event.event === "error")).toEqual([]);
      return events;
    };
    const paused = await streamed({
      input: { messages: [{ role: "user", content: "Study tides and keep notes" }] },
    });
    const rootValues = paused.filter((event) => event.event === "values");
    const last = rootValues.at(-1)?.data as Interrupted;
    expect(last.__interrupt__?.map((entry) => entry.value.subagent?.subagent_type)).toEqual([
      "researcher",
    ]);
    // The child's steps stream under its namespace, but not its own pause: the request the
    // thread waits on is the parent's (above), the only one a frontend lists and can answer.
    const [childNamespace] = subagentNamespaces(paused);
    expect(childNamespace).toMatch(/^tools:/);
    const childPauses = paused.filter(
      (event) =>
        event.event.includes("|tools:") &&
        Object.keys(Object(event.data)).includes("__interrupt__"),
    );
    expect(childPauses).toEqual([]);

    const edited = "/home/gem/user-data/outputs/tides-edited.md";
    const resumed = await streamed({
      command: {
        resume: {
          decisions: [
            {
              type: "edit",
              editedAction: {
                name: "write_file",
                args: { path: edited, content: "Low tide: noon" },
              },
            },
          ],
        },
      },
    });
    const done = resumed.filter((event) => event.event === "values").at(-1)?.data as Interrupted;
    expect(done.__interrupt__).toBeUndefined();
    expect(done.messages.at(-1)?.content).toBe("Your notes are saved and the plan was reviewed.");
    const outputs = join(studio?.dataDir ?? "", "threads", thread.thread_id, "outputs");
    expect(await readFile(join(outputs, "tides-edited.md"), "utf8")).toBe("Low tide: noon");
    await expect(readFile(join(outputs, "tides.md"), "utf8")).rejects.toMatchObject({
      code: "ENOENT",
    });
    expect([requestsOf("assistant"), requestsOf("researcher"), requestsOf("reviewer")]).toEqual([
      2, 2, 1,
    ]);
    expect(fake.failures).toEqual([]);
  });

  it("pauses on a main agent's own gated tool once the agent record gates it, and a reject answers the model", async () => {
    // A Studio user configures agents where they are stored: the data dir the dev server reads
    // (SUBAGENT_GRAPH_DATA), here through the library, as `npm start`'s API or console would.
    const runtime = await createRuntime({ dataDir: studio?.dataDir ?? "", env: {} });
    try {
      const assistant = await runtime.agents.get(DEMO_UID, "assistant");
      await runtime.agents.update(DEMO_UID, assistant.id, {
        config_json: {
          ...assistant.config_json,
          context: { ...assistant.config_json.context, interrupt_on: { write_file: true } },
        },
      });
    } finally {
      await runtime.close();
    }
    script = {
      assistant: {
        ask: {
          content: "",
          toolCalls: [{ name: "write_file", arguments: { path: NOTES, content: "unwanted" } }],
        },
        answer: { content: "Understood, I wrote nothing." },
      },
    };
    const thread = await client.threads.create();
    const paused = (await client.runs.wait(thread.thread_id, "agent", {
      input: { messages: [{ role: "user", content: "Write my notes" }] },
    })) as unknown as Interrupted;
    const [pending] = paused.__interrupt__ ?? [];
    expect(pending?.value.actionRequests.map((action) => action.name)).toEqual(["write_file"]);
    expect(pending?.value.subagent).toBeUndefined();
    const read = await client.threads.get(thread.thread_id);
    expect(read.status).toBe("interrupted");

    const done = (await client.runs.wait(thread.thread_id, "agent", {
      command: { resume: { decisions: [{ type: "reject", message: "not now" }] } },
    })) as unknown as Interrupted;
    expect(done.messages.at(-1)).toMatchObject({
      type: "ai",
      content: "Understood, I wrote nothing.",
    });
    const answered = fake.requests.at(-1);
    expect(answered?.messages.at(-1)).toMatchObject({
      role: "tool",
      content: expect.stringContaining("not now"),
    });
    const notes = join(studio?.dataDir ?? "", "threads", thread.thread_id, "outputs", "tides.md");
    await expect(readFile(notes, "utf8")).rejects.toMatchObject({ code: "ENOENT" });
    expect(requestsOf("assistant")).toBe(2);
    expect(fake.failures).toEqual([]);
  });

  it("runs background subagents: start_async_task answers at once, the task runs in the dev server's process on the data dir's saver, the next run is told and check_async_task reads the answer", async () => {
    const dataDir = studio?.dataDir ?? "";
    // A Studio user configures agents in the data dir the dev server reads: the demo assistant
    // gets the reviewer as a background subagent, and asks to be notified by a run of its own.
    const runtime = await createRuntime({ dataDir, env: {} });
    try {
      // As the dev server would on its first run (this test may run alone).
      await seedDemo(runtime, DEMO_UID);
      const assistant = await runtime.agents.get(DEMO_UID, "assistant");
      await runtime.agents.update(DEMO_UID, assistant.id, {
        config_json: {
          ...assistant.config_json,
          context: {
            ...assistant.config_json.context,
            async_subagents: ["reviewer"],
            notify_parent: true,
          },
        },
      });
    } finally {
      await runtime.close();
    }
    script = {
      reviewer: { ask: { content: "The plan is sound." }, answer: { content: "unused" } },
    };
    respond = (request) => {
      if (agentOf(request) !== "assistant") return undefined;
      const last = request.messages.at(-1);
      const text = JSON.stringify(last?.content ?? "");
      if (last?.role === "tool") {
        return {
          content: text.includes("Started background task_id")
            ? "The reviewer is on it."
            : "The reviewer says the plan is sound.",
        };
      }
      const notice = /\[Background task ([0-9a-f-]{36}) \(reviewer\) completed\]/.exec(text);
      if (notice) {
        return {
          content: "",
          toolCalls: [{ name: "check_async_task", arguments: { task_id: notice[1] } }],
        };
      }
      return {
        content: "",
        toolCalls: [
          {
            name: "start_async_task",
            arguments: { subagent_type: "reviewer", description: "Review a plan to study tides" },
          },
        ],
      };
    };
    type BackgroundValues = AgentValues & {
      messages: { type: string; name?: string; content: string; id?: string }[];
      async_tasks: {
        id: string;
        status: string;
        child_thread_id: string;
        result_preview: string;
      }[];
    };
    const thread = await client.threads.create();

    const started = (await client.runs.wait(thread.thread_id, "agent", {
      input: { messages: [{ role: "user", content: "Have my plan to study tides reviewed" }] },
    })) as unknown as BackgroundValues;
    expect(started.messages.at(-1)).toMatchObject({
      type: "ai",
      content: "The reviewer is on it.",
    });
    const [task] = started.async_tasks;
    expect(task?.child_thread_id).toMatch(
      new RegExp(`^${thread.thread_id}_bg_reviewer_[0-9a-f]{8}$`),
    );
    const taskId = task?.id ?? "";
    // The task ends in the dev server's process, after the run that started it: notify_parent
    // cannot start a run on the server's thread, so the process says so.
    const told = `background task ${taskId} completed: notify_parent is not supported`;
    await until(() => studio?.server.output().includes(told) ?? false, 30_000);
    expect(await client.runs.list(thread.thread_id)).toHaveLength(1);
    expect(requestsOf("reviewer")).toBe(1);

    const next = (await client.runs.wait(thread.thread_id, "agent", {
      input: { messages: [{ role: "user", content: "Any news?" }] },
    })) as unknown as BackgroundValues;
    // The next model call saw the notice, after the user's message, with the answer's preview.
    const assistantCalls = fake.requests.filter((request) => agentOf(request) === "assistant");
    const toldCall = assistantCalls[2]?.messages ?? [];
    expect(JSON.stringify(toldCall.at(-2)?.content)).toContain("Any news?");
    expect(JSON.stringify(toldCall.at(-1)?.content)).toContain(
      `[Background task ${taskId} (reviewer) completed] The plan is sound.`,
    );
    // check_async_task read the whole answer from the task's row.
    const checked = next.messages.find(
      (message) => message.type === "tool" && message.name === "check_async_task",
    );
    expect(checked?.content).toContain("Answer:\nThe plan is sound.");
    expect(next.messages.at(-1)).toMatchObject({
      type: "ai",
      content: "The reviewer says the plan is sound.",
    });
    expect(next.messages.filter((message) => message.name === "background_tasks")).toHaveLength(1);
    expect(next.async_tasks).toEqual([
      expect.objectContaining({
        id: taskId,
        status: "completed",
        result_preview: "The plan is sound.",
      }),
    ]);
    expect([requestsOf("assistant"), requestsOf("reviewer")]).toEqual([4, 1]);

    // The child thread is in our saver (the data dir's checkpoints), not the dev server's.
    const childThread = task?.child_thread_id ?? "";
    await expect(client.threads.getState(childThread)).rejects.toThrow();
    const reader = await createRuntime({ dataDir, env: {} });
    try {
      const saved = await reader.checkpointer.getTuple({
        configurable: { thread_id: childThread, checkpoint_ns: "" },
      });
      expect(saved?.checkpoint.id).toBeTruthy();
    } finally {
      await reader.close();
    }
    expect(fake.failures).toEqual([]);
  });
});
