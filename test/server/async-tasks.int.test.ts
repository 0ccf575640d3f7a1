/**
 * Background subagents (issue 41, README "Background subagents") from the outside: `npm start`'s
 * server as a real process on a SQLite data dir, its agents' models a fake OpenAI-compatible
 * server whose child calls are held for as long as a test needs (seconds), and the official
 * `@langchain/langgraph-sdk` Client given only an assistant id and input (no context, no config).
 * One server for the file; each test has agents and model names of its own, so the fake's
 * requests per model count one agent's calls.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AsyncTask } from "../../middleware/async-task-records.js";
import { createRuntime } from "../../runtime.js";
import {
  type ChatCompletionRequestBody,
  type FakeOpenAIServer,
  type FakeReply,
  startFakeOpenAIServer,
} from "../support/fake-openai-server.js";
import { Gate } from "../support/gate.js";
import { mainAgentPayload, subagentPayload } from "../support/runtime-fixture.js";
import { cleanEnv, type ServerProcess, startServerProcess } from "../support/server-process.js";
import { until } from "../support/until.js";

const OUTPUTS = "/home/gem/user-data/outputs";
const human = (content: string) => ({ messages: [{ type: "human", content }] });
const start = (subagent_type: string, description: string) => ({
  name: "start_async_task",
  arguments: { description, subagent_type },
});

type WireMessage = { type: string; content: unknown; name?: string };
type Values = { messages?: WireMessage[]; async_tasks?: AsyncTask[] };
type TaskDetail = AsyncTask & { result: string | null };
/** An HTTP answer: its status and parsed body. */
type Answer<T = unknown> = { status: number; body: T };
type ErrorBody = { error: { code: string; message: string; field?: string } };

/** The text of a request's first user message (a child's: its task's description). */
const firstUserText = (request: ChatCompletionRequestBody) =>
  String(request.messages.find((message) => message.role === "user")?.content ?? "");
/** The newest message of a request. */
const lastMessage = (request: ChatCompletionRequestBody | undefined) => request?.messages.at(-1);

/** Polls an async condition every 50 ms; fails after `limitMs` with `describe()`. */
async function untilAsync(
  condition: () => Promise<boolean>,
  limitMs: number,
  describe: () => string,
): Promise<void> {
  const deadline = Date.now() + limitMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`not within ${limitMs} ms: ${describe()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe("background subagents through the LangGraph SDK against npm start", {
  timeout: 90_000,
}, () => {
  let dataDir = "";
  let fake: FakeOpenAIServer;
  let server: ServerProcess;
  let alice: Client;
  let aliceToken = "";
  let bobToken = "";
  /** Each model's script: the reply to its n-th request. */
  const scripts = new Map<
    string,
    (request: ChatCompletionRequestBody, n: number) => FakeReply | Promise<FakeReply>
  >();
  const requestsOf = (model: string) => fake.requests.filter((request) => request.model === model);

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), "async-tasks-http-"));
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
    bobToken = (await admin.users.issueToken("bob")).token;
    await admin.close();
    server = startServerProcess(dataDir, env);
    await until(() => server.base() !== "" || server.child.exitCode !== null, 30_000);
    expect(server.base(), server.output()).not.toBe("");
    alice = new Client({ apiUrl: server.base(), apiKey: aliceToken });
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
  function script(
    model: string,
    replies: (
      | FakeReply
      | ((request: ChatCompletionRequestBody) => FakeReply | Promise<FakeReply>)
    )[],
  ) {
    scripts.set(model, (request, n) => {
      const reply = replies[n];
      if (!reply) throw new Error(`${model}: unexpected request #${n + 1}`);
      return typeof reply === "function" ? reply(request) : reply;
    });
  }

  /** One HTTP call to the server as `token`'s user (alice by default). */
  async function call<T = unknown>(
    method: "GET" | "POST",
    path: string,
    body?: unknown,
    token = aliceToken,
  ): Promise<Answer<T>> {
    const response = await fetch(`${server.base()}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    return { status: response.status, body: (text ? JSON.parse(text) : null) as T };
  }

  /** Creates one of alice's agents over the HTTP API, as a user does. */
  async function createAgent(payload: object): Promise<{ id: string; slug: string }> {
    const { status, body } = await call<{ id: string; slug: string }>(
      "POST",
      "/api/agent",
      payload,
    );
    expect(status, JSON.stringify(body)).toBe(201);
    return body;
  }

  /** A main agent (`slug`, model `<slug>-model`) that may start `subagents` in the background. */
  function mainAgent(slug: string, subagents: string[], extra: Record<string, unknown> = {}) {
    return createAgent(
      mainAgentPayload(slug, `openai:${slug}-model`, undefined, {
        async_subagents: subagents,
        ...extra,
      }),
    );
  }

  const tasksOf = async (threadId: string) => {
    const answer = await call<AsyncTask[]>("GET", `/threads/${threadId}/async_tasks`);
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    return answer.body;
  };
  const taskOf = async (threadId: string, taskId: string) => {
    const answer = await call<TaskDetail>("GET", `/threads/${threadId}/async_tasks/${taskId}`);
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    return answer.body;
  };
  /** Waits until the task has one of `statuses`; its record then. */
  async function settled(threadId: string, taskId: string, statuses: AsyncTask["status"][]) {
    let task: TaskDetail | undefined;
    await untilAsync(
      async () => {
        task = await taskOf(threadId, taskId);
        return statuses.includes(task.status);
      },
      30_000,
      () => `task ${taskId} is ${task?.status} (${task?.error ?? ""})\n${server.output()}`,
    );
    return task as TaskDetail;
  }
  /** Runs one turn through the SDK (assistant id and input only); its final values. */
  const turn = async (threadId: string, assistantId: string, text: string) =>
    (await alice.runs.wait(threadId, assistantId, { input: human(text) })) as Values;
  const finalText = (values: Values) => values.messages?.at(-1)?.content;

  it("runs two tasks started in one turn while the conversation goes on, and tells the parent their results", async () => {
    // Both children's model calls are held until the test lets them answer: seconds, two turns.
    const release = new Gate();
    const longAnswer = (topic: string) =>
      `Findings on ${topic}: ${Array.from({ length: 40 }, (_, i) => `fact ${i}`).join(", ")}.`;
    scripts.set("researcher-model", async (request) => {
      await release.pass(undefined);
      return { content: longAnswer(firstUserText(request)) };
    });
    let alphaId = "";
    script("boss-model", [
      { content: "", toolCalls: [start("researcher", "alpha"), start("researcher", "beta")] },
      { content: "Both are running." },
      { content: "Still working on it." },
      { content: "Nothing new yet." },
      () => ({
        content: "",
        toolCalls: [{ name: "check_async_task", arguments: { task_id: alphaId } }],
      }),
      { content: "Alpha and beta are done." },
    ]);
    await createAgent(subagentPayload("researcher", "openai:researcher-model", { tools: [] }));
    const boss = await mainAgent("boss", ["researcher"]);
    const { thread_id: threadId } = await alice.threads.create();

    expect(finalText(await turn(threadId, boss.id, "research alpha and beta"))).toBe(
      "Both are running.",
    );
    const startAnswers = (requestsOf("boss-model")[1]?.messages ?? []).filter(
      (message) => message.role === "tool",
    );
    expect(startAnswers.map((message) => String(message.content))).toEqual([
      expect.stringMatching(/^Started background task_id "[^"]+" \(researcher\)/),
      expect.stringMatching(/^Started background task_id "[^"]+" \(researcher\)/),
    ]);
    const started = await tasksOf(threadId);
    // Started by two calls of one step, run at once: "oldest first" may put either first.
    expect(started.map((task) => task.description).sort()).toEqual(["alpha", "beta"]);
    for (const task of started) {
      expect(task.child_thread_id).toMatch(new RegExp(`^${threadId}_bg_researcher_[0-9a-f]{8}$`));
      expect(["pending", "running"]).toContain(task.status);
    }
    const idOf = (description: string) =>
      started.find((task) => task.description === description)?.id ?? "";
    alphaId = idOf("alpha");
    const betaId = idOf("beta");
    const listed = started.map((task) => task.id);
    // Both children are under way at once.
    await until(() => requestsOf("researcher-model").length === 2, 30_000);
    expect(requestsOf("researcher-model").map(firstUserText).sort()).toEqual(["alpha", "beta"]);

    // The parent is not held: two more turns are answered while both tasks run.
    expect(finalText(await turn(threadId, boss.id, "how is it going?"))).toBe(
      "Still working on it.",
    );
    expect((await tasksOf(threadId)).map((task) => task.status)).toEqual(["running", "running"]);
    expect(finalText(await turn(threadId, boss.id, "anything else?"))).toBe("Nothing new yet.");
    expect((await tasksOf(threadId)).map((task) => task.status)).toEqual(["running", "running"]);
    // No notice yet: nothing has ended.
    for (const request of requestsOf("boss-model").slice(2, 4)) {
      expect(JSON.stringify(request.messages)).not.toContain("[Background task");
    }

    release.release();
    await settled(threadId, alphaId, ["completed"]);
    await settled(threadId, betaId, ["completed"]);

    // The next turn's model request carries a notice of each result; check_async_task the whole.
    expect(finalText(await turn(threadId, boss.id, "what did they find?"))).toBe(
      "Alpha and beta are done.",
    );
    const told = requestsOf("boss-model")[4];
    const notices = (told?.messages ?? []).filter((message) =>
      String(message.content).startsWith("[Background task "),
    );
    expect(notices.map((message) => message.role)).toEqual(["user", "user"]);
    for (const [id, topic] of [
      [alphaId, "alpha"],
      [betaId, "beta"],
    ] as const) {
      const notice = notices.find((message) => String(message.content).includes(id));
      expect(String(notice?.content)).toContain(
        `[Background task ${id} (researcher) completed] Findings on ${topic}: fact 0`,
      );
      expect(String(notice?.content)).toContain(`Call check_async_task with task_id "${id}"`);
    }
    // The notices follow the user's new message, the newest messages of the request.
    expect(told?.messages.at(-3)).toMatchObject({ role: "user", content: "what did they find?" });
    expect(told?.messages.slice(-2)).toEqual(notices);
    const checked = lastMessage(requestsOf("boss-model")[5]);
    expect(checked?.role).toBe("tool");
    expect(String(checked?.content)).toContain(`Answer:\n${longAnswer("alpha")}`);

    const done = await tasksOf(threadId);
    expect(done.map((task) => [task.id, task.status])).toEqual(
      listed.map((id) => [id, "completed"]),
    );
    for (const task of done) {
      expect(task.finished_at).not.toBe("");
      expect(task.error).toBeNull();
      // The first 200 characters of the answer, marked as cut.
      const answer = longAnswer(task.description);
      expect(task.result_preview).toBe(
        `${answer.slice(0, 200)}\n…[truncated: ${answer.length - 200} of ${answer.length} characters omitted]`,
      );
    }
    expect((await taskOf(threadId, alphaId)).result).toBe(longAnswer("alpha"));
    const state = await alice.threads.getState<Values>(threadId);
    expect((state.values.async_tasks ?? []).map((task) => [task.id, task.status]).sort()).toEqual(
      [
        [alphaId, "completed"],
        [betaId, "completed"],
      ].sort(),
    );
    // Each child answered once; the parent's model was called once per step.
    expect(requestsOf("researcher-model")).toHaveLength(2);
    expect(requestsOf("boss-model")).toHaveLength(6);
  });

  it("steers a running task with update_async_task: the child's next request is the follow-up", async () => {
    const gate = new Gate();
    script("writer-model", [
      async () => {
        await gate.pass(undefined);
        return { content: "A long summary, three paragraphs." };
      },
      { content: "One line." },
    ]);
    let taskId = "";
    script("editor-model", [
      { content: "", toolCalls: [start("writer", "draft a summary")] },
      { content: "Drafting." },
      () => ({
        content: "",
        toolCalls: [
          {
            name: "update_async_task",
            arguments: { task_id: taskId, message: "make it one line" },
          },
        ],
      }),
      { content: "Told the writer." },
    ]);
    await createAgent(subagentPayload("writer", "openai:writer-model", { tools: [] }));
    const editor = await mainAgent("editor", ["writer"]);
    const { thread_id: threadId } = await alice.threads.create();
    await turn(threadId, editor.id, "summarise it");
    taskId = (await tasksOf(threadId))[0]?.id ?? "";
    await until(() => gate.reached, 30_000);
    expect((await taskOf(threadId, taskId)).status).toBe("running");

    expect(finalText(await turn(threadId, editor.id, "shorter, please"))).toBe("Told the writer.");
    const sent = lastMessage(requestsOf("editor-model")[3]);
    expect(sent?.role).toBe("tool");
    expect(String(sent?.content)).toContain(`Sent the follow-up to task_id "${taskId}"`);
    const steered = await taskOf(threadId, taskId);
    expect(steered).toMatchObject({ status: "running", updates: 1 });

    gate.release();
    const done = await settled(threadId, taskId, ["completed"]);
    expect(done.result).toBe("One line.");
    const [first, second] = requestsOf("writer-model");
    expect(lastMessage(first)).toMatchObject({ role: "user", content: "draft a summary" });
    expect(lastMessage(second)).toMatchObject({ role: "user", content: "make it one line" });
    // The follow-up went on the same child thread, after the first answer.
    expect(second?.messages.map((message) => message.role).slice(-3)).toEqual([
      "user",
      "assistant",
      "user",
    ]);
    expect(requestsOf("writer-model")).toHaveLength(2);
  });

  it("cancels running tasks through the tool and through POST .../cancel, aborting their model calls", async () => {
    // The child's model call never answers: only a cancel ends it (the fake sees it aborted).
    scripts.set("surveyor-model", () => ({ hang: "before-reply" }));
    let firstId = "";
    script("canceller-model", [
      {
        content: "",
        toolCalls: [start("surveyor", "survey one"), start("surveyor", "survey two")],
      },
      { content: "Surveying." },
      () => ({
        content: "",
        toolCalls: [{ name: "cancel_async_task", arguments: { task_id: firstId } }],
      }),
      { content: "Stopped the first." },
    ]);
    await createAgent(subagentPayload("surveyor", "openai:surveyor-model", { tools: [] }));
    const canceller = await mainAgent("canceller", ["surveyor"]);
    const { thread_id: threadId } = await alice.threads.create();
    await turn(threadId, canceller.id, "survey both");
    const tasks = await tasksOf(threadId);
    const idOf = (description: string) =>
      tasks.find((task) => task.description === description)?.id ?? "";
    firstId = idOf("survey one");
    const secondId = idOf("survey two");
    await until(() => requestsOf("surveyor-model").length === 2, 30_000);
    const requestIndex = (description: string) =>
      fake.requests.findIndex(
        (request) => request.model === "surveyor-model" && firstUserText(request) === description,
      );
    expect(fake.aborted).not.toContain(requestIndex("survey one"));

    // Through the tool.
    expect(finalText(await turn(threadId, canceller.id, "stop the first"))).toBe(
      "Stopped the first.",
    );
    const toolAnswer = lastMessage(requestsOf("canceller-model")[3]);
    expect(toolAnswer?.role).toBe("tool");
    expect(String(toolAnswer?.content)).toContain(
      `Cancelled task_id "${firstId}" (surveyor): cancelled`,
    );
    expect((await taskOf(threadId, firstId)).status).toBe("cancelled");
    await until(() => fake.aborted.includes(requestIndex("survey one")), 10_000);
    expect(fake.aborted).not.toContain(requestIndex("survey two"));
    expect((await taskOf(threadId, secondId)).status).toBe("running");

    // Over HTTP.
    const cancelled = await call<AsyncTask>(
      "POST",
      `/threads/${threadId}/async_tasks/${secondId}/cancel`,
    );
    expect(cancelled.status, JSON.stringify(cancelled.body)).toBe(200);
    expect(cancelled.body).toMatchObject({ id: secondId, status: "cancelled" });
    expect(cancelled.body.finished_at).not.toBe("");
    await until(() => fake.aborted.includes(requestIndex("survey two")), 10_000);
    expect((await tasksOf(threadId)).map((task) => task.status)).toEqual([
      "cancelled",
      "cancelled",
    ]);

    // A cancelled task takes no follow-up and no second cancel: 422, naming the field.
    const update = await call<ErrorBody>(
      "POST",
      `/threads/${threadId}/async_tasks/${secondId}/update`,
      { message: "more please" },
    );
    expect(update.status).toBe(422);
    expect(update.body.error).toMatchObject({ code: "VALIDATION_FAILED", field: "task_id" });
    expect(update.body.error.message).toContain("cancelled");
    const again = await call<ErrorBody>(
      "POST",
      `/threads/${threadId}/async_tasks/${secondId}/cancel`,
    );
    expect(again.status).toBe(422);
    expect(again.body.error).toMatchObject({ code: "VALIDATION_FAILED", field: "task_id" });
    // Nothing was asked of either child again.
    expect(requestsOf("surveyor-model")).toHaveLength(2);
  });

  it("waits on its subagent's approval, answered over HTTP; its child thread is readable", async () => {
    script("scribe-model", [
      {
        content: "",
        toolCalls: [
          {
            name: "write_file",
            arguments: { path: `${OUTPUTS}/note.txt`, content: "from the scribe" },
          },
        ],
      },
      { content: "Wrote the note." },
    ]);
    script("clerk-model", [
      { content: "", toolCalls: [start("scribe", "write the note")] },
      { content: "The scribe is on it." },
    ]);
    await createAgent(
      subagentPayload("scribe", "openai:scribe-model", {
        tools: ["write_file"],
        interrupt_on: { write_file: true },
      }),
    );
    const clerk = await mainAgent("clerk", ["scribe"]);
    const { thread_id: threadId } = await alice.threads.create();
    await turn(threadId, clerk.id, "note it");
    const [started] = await tasksOf(threadId);
    const taskId = started?.id ?? "";
    const base = `/threads/${threadId}/async_tasks/${taskId}`;
    const noteFile = () =>
      fetch(
        `${server.base()}/threads/${threadId}/files/content?path=${encodeURIComponent(`${OUTPUTS}/note.txt`)}`,
        { headers: { authorization: `Bearer ${aliceToken}` } },
      );

    const waiting = await settled(threadId, taskId, ["waiting"]);
    expect(waiting.approval?.value.actionRequests).toEqual([
      expect.objectContaining({
        name: "write_file",
        args: { path: `${OUTPUTS}/note.txt`, content: "from the scribe" },
      }),
    ]);
    expect((await noteFile()).status).toBe(404);
    expect((await tasksOf(threadId)).map((task) => task.status)).toEqual(["waiting"]);

    // Wrong decisions are refused before anything is written; the task still waits.
    for (const resume of [{ decisions: [] }, { decisions: [{ type: "maybe" }] }, "yes"]) {
      const refused = await call<ErrorBody>("POST", `${base}/answer`, { resume });
      expect(refused.status, JSON.stringify(refused.body)).toBe(422);
      expect(refused.body.error.code).toBe("VALIDATION_FAILED");
    }
    expect((await taskOf(threadId, taskId)).status).toBe("waiting");
    // A waiting task takes no follow-up: it goes on once answered.
    const steer = await call<ErrorBody>("POST", `${base}/update`, { message: "hurry" });
    expect(steer.status).toBe(422);
    expect(steer.body.error).toMatchObject({ field: "task_id" });

    const answered = await call<AsyncTask>("POST", `${base}/answer`, {
      resume: { decisions: [{ type: "approve" }] },
    });
    expect(answered.status, JSON.stringify(answered.body)).toBe(200);
    expect(["pending", "running", "completed"]).toContain(answered.body.status);
    const done = await settled(threadId, taskId, ["completed"]);
    expect(done.result).toBe("Wrote the note.");
    expect(done.approval).toBeNull();
    const file = await noteFile();
    expect(file.status).toBe(200);
    expect(await file.text()).toBe("from the scribe");
    // Answered twice: nothing waits any more.
    const twice = await call<ErrorBody>("POST", `${base}/answer`, {
      resume: { decisions: [{ type: "approve" }] },
    });
    expect(twice.status).toBe(422);

    // The child thread, through the parent.
    const child = await call<{
      thread_id: string;
      parent_thread_id: string;
      subagent_type: string;
      values: { messages: WireMessage[] };
    }>("GET", `/threads/${threadId}/subagents/${done.child_thread_id}`);
    expect(child.status, JSON.stringify(child.body)).toBe(200);
    expect(child.body).toMatchObject({
      thread_id: done.child_thread_id,
      parent_thread_id: threadId,
      subagent_type: "scribe",
    });
    expect(child.body.values.messages.map((message) => message.type)).toEqual([
      "human",
      "ai",
      "tool",
      "ai",
    ]);
    expect(child.body.values.messages[0]?.content).toBe("write the note");
    expect(child.body.values.messages.at(-1)?.content).toBe("Wrote the note.");
    const bobs = await call<ErrorBody>(
      "GET",
      `/threads/${threadId}/subagents/${done.child_thread_id}`,
      undefined,
      bobToken,
    );
    expect(bobs.status).toBe(404);
    expect(requestsOf("scribe-model")).toHaveLength(2);
  });

  it("refuses bad input with 404 and 422 naming the field, and a task past max_async_tasks as a tool error", async () => {
    scripts.set("helper-model", () => ({ content: "helped" }));
    script("greedy-model", [
      { content: "", toolCalls: [start("helper", "first job"), start("helper", "second job")] },
      { content: "One started." },
    ]);
    await createAgent(subagentPayload("helper", "openai:helper-model", { tools: [] }));
    const greedy = await mainAgent("greedy", ["helper"], { max_async_tasks: 1 });
    const { thread_id: threadId } = await alice.threads.create();
    await turn(threadId, greedy.id, "do both");

    // Past the limit: the model reads why, in the tool message answering its call.
    const answers = (requestsOf("greedy-model")[1]?.messages ?? [])
      .filter((message) => message.role === "tool")
      .map((message) => String(message.content));
    expect(answers).toHaveLength(2);
    expect(answers[0]).toMatch(/^Started background task_id "[^"]+" \(helper\)/);
    expect(answers[1]).toContain("at most 1 may be (max_async_tasks)");
    const tasks = await tasksOf(threadId);
    expect(tasks.map((task) => task.description)).toEqual(["first job"]);
    const taskId = tasks[0]?.id ?? "";
    await settled(threadId, taskId, ["completed"]);

    // Another user's thread and task: not found, naming the field.
    for (const [method, path] of [
      ["GET", `/threads/${threadId}/async_tasks`],
      ["GET", `/threads/${threadId}/async_tasks/${taskId}`],
      ["POST", `/threads/${threadId}/async_tasks/${taskId}/cancel`],
    ] as const) {
      const answer = await call<ErrorBody>(method, path, undefined, bobToken);
      expect(answer.status, `${method} ${path}: ${JSON.stringify(answer.body)}`).toBe(404);
      expect(answer.body.error).toMatchObject({ code: "NOT_FOUND", field: "thread_id" });
    }
    const bobsUpdate = await call<ErrorBody>(
      "POST",
      `/threads/${threadId}/async_tasks/${taskId}/update`,
      { message: "mine now" },
      bobToken,
    );
    expect(bobsUpdate.status).toBe(404);
    expect(bobsUpdate.body.error.field).toBe("thread_id");
    // Alice's own task asked for through another of her threads, and a task that does not exist.
    const { thread_id: otherThread } = await alice.threads.create();
    for (const [thread, task] of [
      [otherThread, taskId],
      [threadId, "00000000-0000-0000-0000-000000000000"],
    ]) {
      const answer = await call<ErrorBody>("GET", `/threads/${thread}/async_tasks/${task}`);
      expect(answer.status, JSON.stringify(answer.body)).toBe(404);
      expect(answer.body.error).toMatchObject({ code: "NOT_FOUND", field: "task_id" });
      expect(answer.body.error.message).toContain(task);
    }
    const missingThread = await call<ErrorBody>("GET", "/threads/no-such-thread/async_tasks");
    expect(missingThread.status).toBe(404);
    expect(missingThread.body.error.field).toBe("thread_id");

    // A status that is none: 422, naming the parameter and the allowed ones.
    const badStatus = await call<ErrorBody>("GET", `/threads/${threadId}/async_tasks?status=done`);
    expect(badStatus.status, JSON.stringify(badStatus.body)).toBe(422);
    expect(badStatus.body.error).toMatchObject({ code: "VALIDATION_FAILED", field: "status" });
    expect(badStatus.body.error.message).toContain("completed");
    const completed = await call<AsyncTask[]>(
      "GET",
      `/threads/${threadId}/async_tasks?status=completed`,
    );
    expect(completed.body.map((task) => task.id)).toEqual([taskId]);
    const running = await call<AsyncTask[]>(
      "GET",
      `/threads/${threadId}/async_tasks?status=running`,
    );
    expect(running.body).toEqual([]);

    // Bodies that are not what the route takes.
    const empty = await call<ErrorBody>(
      "POST",
      `/threads/${threadId}/async_tasks/${taskId}/update`,
      {
        message: "",
      },
    );
    expect(empty.status).toBe(422);
    expect(empty.body.error.field).toBe("message");
    const notWaiting = await call<ErrorBody>(
      "POST",
      `/threads/${threadId}/async_tasks/${taskId}/answer`,
      { resume: { decisions: [{ type: "approve" }] } },
    );
    expect(notWaiting.status).toBe(422);
    expect(notWaiting.body.error).toMatchObject({ field: "task_id" });
    expect(notWaiting.body.error.message).toContain("not waiting");
    const finished = await call<ErrorBody>(
      "POST",
      `/threads/${threadId}/async_tasks/${taskId}/cancel`,
    );
    expect(finished.status).toBe(422);
    expect(finished.body.error.message).toContain("already ended (completed)");
    expect(fake.failures).toEqual([]);
  });
});
