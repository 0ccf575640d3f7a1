/**
 * Approvals (README "Approvals", issue 39) from the outside: `npm start`'s server as a real
 * process on a SQLite data dir, its agents' models a fake OpenAI-compatible server, and the
 * official `@langchain/langgraph-sdk` Client with no extra context. One server for the file; each
 * test has agents and model names of its own, so the fake's requests per model count one agent's
 * calls.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client, type Thread } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRuntime } from "../../runtime.js";
import {
  type ChatCompletionRequestBody,
  type FakeOpenAIServer,
  type FakeReply,
  startFakeOpenAIServer,
} from "../support/fake-openai-server.js";
import { mainAgentPayload, subagentPayload } from "../support/runtime-fixture.js";
import { cleanEnv, type ServerProcess, startServerProcess } from "../support/server-process.js";
import { Gate } from "../support/gate.js";
import { until } from "../support/until.js";

const OUTPUTS = "/home/gem/user-data/outputs";
const human = (content: string) => ({ messages: [{ type: "human", content }] });
const approve = { type: "approve" };

/** A request for approval as the API shows it: an interrupt `{ id, value: HITLRequest }`. */
interface WireInterrupt {
  id: string;
  value: {
    actionRequests: { name: string; args: Record<string, unknown>; description?: string }[];
    reviewConfigs: { actionName: string; allowedDecisions: string[] }[];
    subagent?: { subagent_type: string; child_thread_id: string; description: string };
  };
}
type WireMessage = { type: string; content: unknown; tool_call_id?: string };
type Values = {
  messages?: WireMessage[];
  subagent_runs?: { subagent_type: string; status: string; child_thread_id: string }[];
  __interrupt__?: WireInterrupt[];
};

/** The refusal a Client call got: its HTTP status and our error body. */
async function refusal(call: Promise<unknown>) {
  try {
    await call;
  } catch (error) {
    const { status, text } = error as { status?: number; text?: string };
    const body = JSON.parse(text ?? "{}") as {
      error?: { code: string; message: string; field?: string };
    };
    return { status: status ?? 0, ...body.error };
  }
  throw new Error("expected the server to refuse the request");
}

/** A stream's events, all of them. */
async function collect(stream: AsyncIterable<{ event: string; data: unknown }>) {
  const events: { event: string; data: unknown }[] = [];
  for await (const part of stream) events.push(part);
  return events;
}

const interruptsOf = (thread: Thread) =>
  Object.values(thread.interrupts as Record<string, WireInterrupt[]>).flat();

describe("approvals through the LangGraph SDK against npm start", { timeout: 60_000 }, () => {
  let dataDir = "";
  let fake: FakeOpenAIServer;
  let server: ServerProcess;
  let alice: Client;
  let bob: Client;
  let aliceToken = "";
  /** Each model's script: the reply to its n-th request (strict: another request fails). */
  const scripts = new Map<
    string,
    (request: ChatCompletionRequestBody, n: number) => FakeReply | Promise<FakeReply>
  >();
  const requestsOf = (model: string) => fake.requests.filter((request) => request.model === model);

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), "approvals-http-"));
    fake = await startFakeOpenAIServer((request) => {
      const script = scripts.get(request.model);
      if (!script) throw new Error(`no script for model ${request.model}`);
      return script(request, requestsOf(request.model).length - 1);
    });
    const env = cleanEnv({
      OPENAI_API_KEY: "sk-test",
      OPENAI_BASE_URL: fake.url,
      OPENAI_MAX_RETRIES: "0",
    });
    const admin = await createRuntime({ dataDir, env });
    await admin.users.add("alice");
    await admin.users.add("bob");
    aliceToken = (await admin.users.issueToken("alice")).token;
    const bobToken = (await admin.users.issueToken("bob")).token;
    await admin.close();
    server = startServerProcess(dataDir, env);
    await until(() => server.base() !== "" || server.child.exitCode !== null, 30_000);
    expect(server.base(), server.output()).not.toBe("");
    alice = new Client({ apiUrl: server.base(), apiKey: aliceToken });
    bob = new Client({ apiUrl: server.base(), apiKey: bobToken });
  }, 60_000);

  afterAll(async () => {
    if (server) {
      server.child.kill("SIGTERM");
      await server.exited;
    }
    await fake?.close();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  /** Scripts `model` with one reply per request, in order; a request beyond them fails. */
  function script(model: string, replies: (FakeReply | (() => Promise<FakeReply>))[]) {
    scripts.set(model, (_request, n) => {
      const reply = replies[n];
      if (!reply) throw new Error(`${model}: unexpected request #${n + 1}`);
      return typeof reply === "function" ? reply() : reply;
    });
  }

  /** Creates one of alice's agents over the HTTP API, as a user does. */
  async function createAgent(payload: object): Promise<{ id: string; slug: string }> {
    const response = await fetch(`${server.base()}/api/agent`, {
      method: "POST",
      headers: { authorization: `Bearer ${aliceToken}`, "content-type": "application/json" },
      body: JSON.stringify(payload),
    });
    const body = await response.json();
    expect(response.status, JSON.stringify(body)).toBe(201);
    return body as { id: string; slug: string };
  }

  /** A file of alice's thread through the files API: its text, or undefined when absent. */
  async function fileText(threadId: string, path: string): Promise<string | undefined> {
    const response = await fetch(
      `${server.base()}/threads/${threadId}/files/content?path=${encodeURIComponent(path)}`,
      { headers: { authorization: `Bearer ${aliceToken}` } },
    );
    if (response.status === 404) return undefined;
    expect(response.status, await response.clone().text()).toBe(200);
    return response.text();
  }

  const writeCall = (path: string, content: string) => ({
    name: "write_file",
    arguments: { path: `${OUTPUTS}/${path}`, content },
  });

  /** A main agent whose `write_file` waits for approval, scripted to write then answer. */
  async function gatedWriter(
    slug: string,
    file: string,
    answer: FakeReply | (() => Promise<FakeReply>),
  ) {
    const model = `${slug}-model`;
    script(model, [{ content: "", toolCalls: [writeCall(file, "hello")] }, answer]);
    const agent = await createAgent(
      mainAgentPayload(slug, `openai:${model}`, undefined, {
        tools: ["write_file"],
        interrupt_on: { write_file: true },
      }),
    );
    return { agent, model };
  }

  describe("a main agent's gated write_file", () => {
    it("pauses before the call: the stream, the thread, its state and the run all show the request; approve writes the file", async () => {
      // The model's answer after the approved call waits at a gate, so the resume is seen running.
      const gate = new Gate();
      const { agent, model } = await gatedWriter("approver", "a.txt", async () => {
        await gate.pass(undefined);
        return { content: "written" };
      });
      const thread = await alice.threads.create();

      const events = await collect(
        alice.runs.stream(thread.thread_id, agent.id, {
          input: human("write a.txt"),
          streamMode: ["values", "updates"],
        }),
      );

      expect(events.some((event) => event.event === "error")).toBe(false);
      const values = events.filter((event) => event.event === "values");
      // As LangGraph's server streams it: the last values event is the interrupt alone.
      const last = values.at(-1)?.data as Values;
      expect(Object.keys(last)).toEqual(["__interrupt__"]);
      const [request] = last.__interrupt__ ?? [];
      expect(request?.value.actionRequests).toEqual([
        expect.objectContaining({
          name: "write_file",
          args: { path: `${OUTPUTS}/a.txt`, content: "hello" },
        }),
      ]);
      expect(request?.value.reviewConfigs[0]?.allowedDecisions).toEqual([
        "approve",
        "edit",
        "reject",
      ]);
      const updates = events.filter((event) => event.event === "updates");
      expect(updates.map((event) => event.data)).toContainEqual({ __interrupt__: [request] });
      expect(await fileText(thread.thread_id, `${OUTPUTS}/a.txt`)).toBeUndefined();

      const paused = await alice.threads.get(thread.thread_id);
      expect(paused.status).toBe("interrupted");
      expect(interruptsOf(paused)).toEqual([request]);
      const state = await alice.threads.getState(thread.thread_id);
      // LangGraph's own answer: the middleware's step that asked waits to be run again.
      expect(state.next).toEqual(["HumanInTheLoopMiddleware.after_model"]);
      expect(state.tasks.flatMap((task) => task.interrupts)).toEqual([request]);
      expect(Object.keys(paused.interrupts)).toEqual(state.tasks.map((task) => task.id));
      const [run] = await alice.runs.list(thread.thread_id);
      expect(run?.status).toBe("interrupted");
      expect((run as unknown as { status_reason: string }).status_reason).toContain(
        "waiting for approval of write_file",
      );

      const pausedRun = (await alice.runs.join(thread.thread_id, run?.run_id ?? "")) as Values;
      expect(pausedRun.__interrupt__).toEqual([request]);

      const resumed = alice.runs.wait(thread.thread_id, agent.id, {
        command: { resume: { decisions: [approve] } },
      });
      await until(() => gate.reached, 10_000);
      // A second answer while the first runs: the thread is busy.
      expect(
        await refusal(
          alice.runs.create(thread.thread_id, agent.id, {
            command: { resume: { decisions: [approve] } },
          }),
        ),
      ).toMatchObject({ status: 409, code: "THREAD_BUSY" });
      gate.release();
      const done = (await resumed) as Values;

      expect(done.__interrupt__).toBeUndefined();
      expect(done.messages?.at(-1)).toMatchObject({ type: "ai", content: "written" });
      expect(await fileText(thread.thread_id, `${OUTPUTS}/a.txt`)).toBe("hello");
      const finished = await alice.threads.get(thread.thread_id);
      expect(finished.status).toBe("idle");
      expect(finished.interrupts).toEqual({});
      expect((await alice.runs.list(thread.thread_id))[0]?.status).toBe("success");
      expect(requestsOf(model)).toHaveLength(2);
    });

    it("reject: runs.wait answers the values with __interrupt__; the file is never written and the model reads why", async () => {
      const { agent, model } = await gatedWriter("rejecter", "r.txt", { content: "understood" });
      const thread = await alice.threads.create();

      const paused = (await alice.runs.wait(thread.thread_id, agent.id, {
        input: human("write r.txt"),
      })) as Values;

      // LangGraph's invoke result: the state, plus the requests the run waits on.
      expect(paused.messages?.[0]).toMatchObject({ type: "human", content: "write r.txt" });
      expect(paused.__interrupt__).toHaveLength(1);
      expect(paused.__interrupt__?.[0]?.value.actionRequests[0]?.name).toBe("write_file");

      const run = await alice.runs.create(thread.thread_id, agent.id, {
        command: { resume: { decisions: [{ type: "reject", message: "not in outputs, please" }] } },
      });
      const done = (await alice.runs.join(thread.thread_id, run.run_id)) as Values;

      expect(done.messages?.at(-1)).toMatchObject({ type: "ai", content: "understood" });
      expect(await fileText(thread.thread_id, `${OUTPUTS}/r.txt`)).toBeUndefined();
      const second = requestsOf(model)[1];
      const answer = second?.messages.at(-1);
      expect(answer?.role).toBe("tool");
      expect(String(answer?.content)).toContain("not in outputs, please");
      expect((await alice.runs.get(thread.thread_id, run.run_id)).status).toBe("success");
    });

    it("edit: the call runs with the edited arguments, streamed as the resume runs", async () => {
      const { agent } = await gatedWriter("editor", "draft.txt", { content: "edited" });
      const thread = await alice.threads.create();
      await alice.runs.wait(thread.thread_id, agent.id, { input: human("write a draft") });
      // useStream names the head checkpoint it shows: a resume from the newest one is taken.
      const head = await alice.threads.getState(thread.thread_id);

      const events = await collect(
        alice.runs.stream(thread.thread_id, agent.id, {
          command: {
            resume: {
              decisions: [
                {
                  type: "edit",
                  editedAction: {
                    name: "write_file",
                    args: { path: `${OUTPUTS}/final.txt`, content: "edited text" },
                  },
                },
              ],
            },
          },
          streamMode: ["values"],
          checkpoint: { ...head.checkpoint, thread_id: undefined } as never,
        }),
      );

      const last = events.filter((event) => event.event === "values").at(-1)?.data as Values;
      expect(last.messages?.at(-1)).toMatchObject({ type: "ai", content: "edited" });
      expect(await fileText(thread.thread_id, `${OUTPUTS}/final.txt`)).toBe("edited text");
      expect(await fileText(thread.thread_id, `${OUTPUTS}/draft.txt`)).toBeUndefined();
    });
  });

  describe("paused subagents", () => {
    const task = (subagent_type: string, description: string) => ({
      name: "task",
      arguments: { description, subagent_type },
    });

    it("pauses one of two parallel subagents: the other finishes meanwhile, and the resume runs nothing twice", async () => {
      script("lead-model", [
        {
          content: "",
          toolCalls: [task("scribe", "write the note"), task("scout", "look around")],
        },
        { content: "both done" },
      ]);
      script("scribe-model", [
        { content: "", toolCalls: [writeCall("note.txt", "from the scribe")] },
        { content: "wrote it" },
      ]);
      script("scout-model", [{ content: "looked" }]);
      await createAgent(
        subagentPayload("scribe", "openai:scribe-model", {
          tools: ["write_file"],
          interrupt_on: { write_file: { allowed_decisions: ["approve", "reject"] } },
        }),
      );
      await createAgent(subagentPayload("scout", "openai:scout-model", { tools: [] }));
      const lead = await createAgent(
        mainAgentPayload("lead", "openai:lead-model", ["scribe", "scout"]),
      );
      const thread = await alice.threads.create();

      const paused = (await alice.runs.wait(thread.thread_id, lead.id, {
        input: human("do both"),
      })) as Values;

      const [request] = paused.__interrupt__ ?? [];
      expect(paused.__interrupt__).toHaveLength(1);
      expect(request?.value.subagent).toMatchObject({
        subagent_type: "scribe",
        description: "write the note",
      });
      expect(request?.value.actionRequests[0]).toMatchObject({
        name: "write_file",
        args: { path: `${OUTPUTS}/note.txt` },
      });
      // The thread's values, the wait's answer and the run's record show both children.
      const recordsOf = (values: Values) =>
        Object.fromEntries(
          (values.subagent_runs ?? []).map((record) => [record.subagent_type, record.status]),
        );
      const both = { scribe: "waiting", scout: "completed" };
      expect(recordsOf((await alice.threads.getState<Values>(thread.thread_id)).values)).toEqual(
        both,
      );
      expect(recordsOf(paused)).toEqual(both);
      const [run] = await alice.runs.list(thread.thread_id);
      expect(run?.status).toBe("interrupted");
      expect(recordsOf(run as Values)).toEqual(both);
      const threadNow = await alice.threads.get(thread.thread_id);
      expect(threadNow.status).toBe("interrupted");
      expect(interruptsOf(threadNow)).toEqual([request]);
      expect(requestsOf("scout-model")).toHaveLength(1);

      const done = (await alice.runs.wait(thread.thread_id, lead.id, {
        command: { resume: { decisions: [approve] } },
      })) as Values;

      expect(done.messages?.at(-1)).toMatchObject({ type: "ai", content: "both done" });
      const scribe = done.subagent_runs?.find((record) => record.subagent_type === "scribe");
      expect(scribe?.status).toBe("completed");
      expect(scribe?.child_thread_id).toBe(request?.value.subagent?.child_thread_id);
      expect(await fileText(thread.thread_id, `${OUTPUTS}/note.txt`)).toBe("from the scribe");
      // Nothing ran twice: the lead's first turn, the scout and the scribe's first call once.
      expect(requestsOf("lead-model")).toHaveLength(2);
      expect(requestsOf("scout-model")).toHaveLength(1);
      expect(requestsOf("scribe-model")).toHaveLength(2);
      const toolAnswers = (requestsOf("lead-model")[1]?.messages ?? [])
        .filter((message) => message.role === "tool")
        .map((message) => message.content);
      expect(toolAnswers).toEqual(["wrote it", "looked"]);
    });

    it("two paused subagents are two requests, answered by one resume map", async () => {
      script("chief-model", [
        { content: "", toolCalls: [task("copyist", "one"), task("copyist", "two")] },
        { content: "all done" },
      ]);
      // Two children of one model run at once: each answers by its own task and progress.
      scripts.set("copyist-model", (request) => {
        const description = String(request.messages.find((m) => m.role === "user")?.content);
        return request.messages.some((message) => message.role === "tool")
          ? { content: `copied ${description}` }
          : { content: "", toolCalls: [writeCall(`${description}.txt`, description)] };
      });
      await createAgent(
        subagentPayload("copyist", "openai:copyist-model", {
          tools: ["write_file"],
          interrupt_on: { write_file: true },
        }),
      );
      const chief = await createAgent(mainAgentPayload("chief", "openai:chief-model", ["copyist"]));
      const thread = await alice.threads.create();

      const events = await collect(
        alice.runs.stream(thread.thread_id, chief.id, {
          input: human("copy both"),
          streamMode: ["values", "updates"],
        }),
      );

      // As LangGraph streams it: each paused task's requests in a values event of their own
      // (the interrupt alone) and in an updates event.
      const requestsIn = (name: string) =>
        events
          .filter((event) => event.event === name)
          .flatMap((event) => (event.data as Values).__interrupt__ ?? []);
      const pending = requestsIn("values");
      expect(pending.map((entry) => entry.value.subagent?.description).sort()).toEqual([
        "one",
        "two",
      ]);
      expect(requestsIn("updates")).toEqual(pending);
      const last = events.filter((event) => event.event === "values").at(-1)?.data;
      expect(Object.keys(last ?? {})).toEqual(["__interrupt__"]);
      const threadNow = await alice.threads.get(thread.thread_id);
      expect(
        interruptsOf(threadNow)
          .map((entry) => entry.id)
          .sort(),
      ).toEqual(pending.map((entry) => entry.id).sort());
      const single = await refusal(
        alice.runs.wait(thread.thread_id, chief.id, {
          command: { resume: { decisions: [approve] } },
        }),
      );
      expect(single).toMatchObject({ status: 422, field: "command.resume" });

      const done = (await alice.runs.wait(thread.thread_id, chief.id, {
        command: {
          resume: Object.fromEntries(pending.map((entry) => [entry.id, { decisions: [approve] }])),
        },
      })) as Values;

      expect(done.messages?.at(-1)).toMatchObject({ type: "ai", content: "all done" });
      expect(await fileText(thread.thread_id, `${OUTPUTS}/one.txt`)).toBe("one");
      expect(await fileText(thread.thread_id, `${OUTPUTS}/two.txt`)).toBe("two");
      expect(requestsOf("chief-model")).toHaveLength(2);
      expect(requestsOf("copyist-model")).toHaveLength(4);
      expect((await alice.threads.get(thread.thread_id)).status).toBe("idle");
    });
  });

  describe("bad input, nothing lost", () => {
    it("refuses every bad resume and a new message with a 4xx naming the field; the request stays pending and resumable", async () => {
      const model = "keeper-model";
      script(model, [
        {
          content: "",
          toolCalls: [
            writeCall("kept.txt", "kept"),
            { name: "read_file", arguments: { path: `${OUTPUTS}/kept.txt` } },
          ],
        },
        { content: "finally" },
      ]);
      const agent = await createAgent(
        mainAgentPayload("keeper", `openai:${model}`, undefined, {
          tools: ["write_file", "read_file"],
          interrupt_on: {
            write_file: { allowed_decisions: ["approve", "reject"] },
            read_file: true,
          },
        }),
      );
      const other = await createAgent(
        mainAgentPayload("bystander", "openai:bystander-model", undefined),
      );
      const idle = await alice.threads.create();
      const nothingPending = await refusal(
        alice.runs.wait(idle.thread_id, agent.id, {
          command: { resume: { decisions: [approve] } },
        }),
      );
      expect(nothingPending).toMatchObject({ status: 422, field: "command" });
      expect(nothingPending.message).toContain("not waiting for any approval");

      // A thread that does not exist: 404, or with if_not_exists "create" a 422 that creates
      // nothing (nothing can wait on a thread that never ran).
      const unknown = "00000000-0000-4000-8000-00000000a11c";
      const resumeOne = { command: { resume: { decisions: [approve] } } };
      expect(await refusal(alice.runs.wait(unknown, agent.id, resumeOne))).toMatchObject({
        status: 404,
      });
      expect(
        await refusal(alice.runs.wait(unknown, agent.id, { ...resumeOne, ifNotExists: "create" })),
      ).toMatchObject({ status: 422, field: "command" });
      expect(await refusal(alice.threads.get(unknown))).toMatchObject({ status: 404 });

      const thread = await alice.threads.create();
      const paused = (await alice.runs.wait(thread.thread_id, agent.id, {
        input: human("keep it"),
      })) as Values;
      const [request] = paused.__interrupt__ ?? [];
      const id = request?.id ?? "";
      expect(request?.value.actionRequests.map((action) => action.name)).toEqual([
        "write_file",
        "read_file",
      ]);
      const before = await alice.threads.getState(thread.thread_id);
      const runsBefore = await alice.runs.list(thread.thread_id);

      const resume = (value: unknown) => ({ command: { resume: value } }) as never;
      const cases: [string, () => Promise<unknown>, number, string, string][] = [
        [
          "a decision count that does not match the calls",
          () => alice.runs.wait(thread.thread_id, agent.id, resume({ decisions: [approve] })),
          422,
          "command.resume.decisions",
          "1 decision for 2 tool calls",
        ],
        [
          "an unknown decision type",
          () =>
            alice.runs.create(
              thread.thread_id,
              agent.id,
              resume({ decisions: [{ type: "maybe" }, approve] }),
            ),
          422,
          "command.resume.decisions.0.type",
          "maybe",
        ],
        [
          "a decision the gate does not allow",
          () =>
            alice.runs.wait(
              thread.thread_id,
              agent.id,
              resume({
                decisions: [
                  {
                    type: "edit",
                    editedAction: { name: "write_file", args: { path: "x", content: "y" } },
                  },
                  approve,
                ],
              }),
            ),
          422,
          "command.resume.decisions.0.type",
          "edit",
        ],
        [
          "an edit that fails the tool's schema",
          () =>
            alice.runs.wait(
              thread.thread_id,
              agent.id,
              resume({
                decisions: [
                  approve,
                  { type: "edit", editedAction: { name: "read_file", args: { path: 7 } } },
                ],
              }),
            ),
          422,
          "command.resume.decisions.1.editedAction.args",
          "read_file",
        ],
        [
          "an interrupt id that is not pending",
          () =>
            alice.runs.wait(
              thread.thread_id,
              agent.id,
              resume({ "0123456789abcdef0123456789abcdef": { decisions: [approve, approve] } }),
            ),
          422,
          "command.resume.0123456789abcdef0123456789abcdef",
          id,
        ],
        [
          "a resume that is no object",
          () => alice.runs.wait(thread.thread_id, agent.id, resume("yes")),
          422,
          "command.resume",
          "decisions",
        ],
        [
          "a command without resume",
          () => alice.runs.wait(thread.thread_id, agent.id, { command: {} } as never),
          422,
          "command.resume",
          "missing",
        ],
        [
          "command.goto",
          () => alice.runs.wait(thread.thread_id, agent.id, { command: { goto: "tools" } }),
          422,
          "command.goto",
          "command.resume",
        ],
        [
          "command.update",
          () =>
            alice.runs.stream(thread.thread_id, agent.id, {
              command: { update: { messages: [] }, resume: { decisions: [approve, approve] } },
            }) as never,
          422,
          "command.update",
          "command.resume",
        ],
        [
          "a resume from an older checkpoint",
          () =>
            alice.runs.wait(thread.thread_id, agent.id, {
              checkpointId: before.parent_checkpoint?.checkpoint_id ?? "",
              command: { resume: { decisions: [approve, approve] } },
            }),
          422,
          "checkpoint_id",
          "newest checkpoint",
        ],
        [
          "a resume under another assistant",
          () =>
            alice.runs.wait(thread.thread_id, other.id, resume({ decisions: [approve, approve] })),
          422,
          "assistant_id",
          agent.id,
        ],
        [
          "a resume with input",
          () =>
            alice.runs.wait(thread.thread_id, agent.id, {
              input: human("and this"),
              command: { resume: { decisions: [approve, approve] } },
            }),
          422,
          "command",
          "not both",
        ],
        [
          "a new plain message on the paused thread",
          () => alice.runs.wait(thread.thread_id, agent.id, { input: human("hello?") }),
          409,
          "input",
          id,
        ],
        [
          "another user's resume",
          () =>
            bob.runs.wait(thread.thread_id, agent.id, resume({ decisions: [approve, approve] })),
          404,
          "",
          "",
        ],
      ];
      for (const [what, call, status, field, named] of cases) {
        const refused = await refusal(
          // A stream's refusal comes when it is read.
          what === "command.update" ? collect(call() as never) : call(),
        );
        expect(refused.status, what).toBe(status);
        if (field) expect(refused.field, what).toBe(field);
        expect(refused.message, what).toContain(named);
      }
      // Whatever a client sends as a resume, the answer is a 4xx naming a field of the command.
      const malformed: unknown[] = [
        null,
        7,
        [],
        [{ type: "approve" }],
        { decisions: null },
        { decisions: [null, approve] },
        { decisions: [{}, approve] },
        { decisions: [approve, { type: "edit" }] },
        { decisions: [approve, { type: "edit", editedAction: null }] },
        { decisions: [approve, { type: "edit", editedAction: { name: 5, args: [] } }] },
        { decisions: [approve, { type: "edit", editedAction: { name: "write_file", args: {} } }] },
        { decisions: [approve, { type: "edit", editedAction: { name: "read_file", args: "x" } }] },
        { decisions: [{ type: "reject", message: { text: "no" } }, approve] },
        { decisions: "approve" },
        { [id]: null },
        { [id]: "approve" },
        { [id]: { decisions: [approve, approve] }, other: { decisions: [] } },
      ];
      for (const value of malformed) {
        const refused = await refusal(alice.runs.wait(thread.thread_id, agent.id, resume(value)));
        expect(refused.status, JSON.stringify(value)).toBe(422);
        expect(refused.field, JSON.stringify(value)).toMatch(/^command\.resume/);
      }

      // Nothing was written, no run recorded, and the request still waits, as it was.
      const after = await alice.threads.getState(thread.thread_id);
      expect(after.checkpoint.checkpoint_id).toBe(before.checkpoint.checkpoint_id);
      expect(after.tasks.flatMap((task) => task.interrupts)).toEqual([request]);
      expect(await alice.runs.list(thread.thread_id)).toEqual(runsBefore);
      expect((await alice.threads.get(thread.thread_id)).status).toBe("interrupted");
      expect(requestsOf(model)).toHaveLength(1);

      const done = (await alice.runs.wait(thread.thread_id, agent.id, {
        command: {
          resume: {
            [id]: {
              decisions: [
                approve,
                {
                  type: "edit",
                  editedAction: {
                    name: "read_file",
                    args: { path: `${OUTPUTS}/kept.txt`, limit: 5 },
                  },
                },
              ],
            },
          },
        },
      })) as Values;
      expect(done.messages?.at(-1)).toMatchObject({ type: "ai", content: "finally" });
      expect(await fileText(thread.thread_id, `${OUTPUTS}/kept.txt`)).toBe("kept");
      expect(requestsOf(model)).toHaveLength(2);
      expect(fake.failures).toEqual([]);
    });
  });
});
