import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createRuntime } from "../../runtime.js";
import {
  type ChatCompletionRequestBody,
  type FakeOpenAIServer,
  startFakeOpenAIServer,
} from "../support/fake-openai-server.js";
import { cliInProcess } from "../support/in-process-cli.js";

const OUTPUTS = "/home/gem/user-data/outputs";

/** A tool call a fake model makes. */
type Call = { name: string; arguments: Record<string, unknown> };

/** The tool calls an agent's model makes on a turn's first call, given the turn's question. */
type FirstCalls = (question: string) => Call[];

/**
 * The fake model of every agent here, told apart by their system prompts: on a turn's first
 * call it makes that agent's tool calls, and once a tool has answered it says `<agent> heard:
 * <the tool's answer>`, so the final text shows what the tool (or a rejection) said.
 */
function modelOf(calls: Record<string, FirstCalls>) {
  return (request: ChatCompletionRequestBody) => {
    const system = JSON.stringify(request.messages[0] ?? {});
    const agent = Object.keys(calls).find((slug) => system.includes(`You are ${slug}.`));
    const last = request.messages.at(-1);
    if (!agent) return { content: "unknown agent" };
    if (last?.role === "tool") return { content: `${agent} heard: ${String(last.content)}` };
    const question = request.messages.filter((message) => message.role === "user").at(-1);
    const made = calls[agent]?.(String(question?.content ?? "")) ?? [];
    return made.length > 0
      ? { content: "", toolCalls: made }
      : { content: `${agent} has nothing to do` };
  };
}

/** Runs the CLI in-process with `answers` piped on stdin, one per line, as a script would. */
const run = (argv: string[], env: NodeJS.ProcessEnv, answers: string[] = []) =>
  cliInProcess(argv, { env, input: answers.map((line) => `${line}\n`).join("") });

function threadIdOf(stdout: string): string {
  const match = /^thread: (\S+)$/m.exec(stdout);
  if (!match?.[1]) throw new Error(`no "thread: <id>" line in:\n${stdout}`);
  return match[1];
}

describe("chat asks for approval (CLI, piped answers)", { timeout: 60_000 }, () => {
  let fake: FakeOpenAIServer;
  let calls: Record<string, FirstCalls> = {};
  let env: NodeJS.ProcessEnv;
  let root: string;
  let dataDir: string;

  beforeAll(async () => {
    fake = await startFakeOpenAIServer((request) => modelOf(calls)(request));
    env = { OPENAI_API_KEY: "test-key", OPENAI_BASE_URL: fake.url, OPENAI_MAX_RETRIES: "0" };
  });
  afterAll(async () => {
    await fake.close();
  });
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), "cli-approvals-"));
    dataDir = join(root, "data");
    // Alice's agents: boss gates write_file; boss2 delegates to helper, whose write_file is gated.
    const runtime = await createRuntime({ dataDir, env, warn: () => undefined });
    try {
      const context = (slug: string, extra: Record<string, unknown>) => ({
        model: "openai:fake-model",
        system_prompt: `You are ${slug}.`,
        ...extra,
      });
      await runtime.agents.create("alice", {
        slug: "helper",
        name: "helper",
        description: "writes files",
        backend_id: "SubAgentBackend",
        config_json: {
          context: context("helper", {
            interrupt_on: { write_file: { allowed_decisions: ["approve", "reject"] } },
          }),
        },
      });
      await runtime.agents.create("alice", {
        slug: "boss",
        name: "boss",
        description: "gated main agent",
        config_json: {
          context: context("boss", {
            interrupt_on: {
              write_file: {
                allowed_decisions: ["approve", "edit", "reject"],
                description: "Check the file first.",
              },
            },
          }),
        },
      });
      await runtime.agents.create("alice", {
        slug: "lead",
        name: "lead",
        description: "delegates to helper",
        config_json: { context: context("lead", { subagents: ["helper"] }) },
      });
    } finally {
      await runtime.close();
    }
    calls = {
      boss: () => [
        { name: "write_file", arguments: { path: `${OUTPUTS}/a.md`, content: "hello" } },
      ],
      // The helper writes the file its task names ("save h" writes h.md).
      helper: (task) => [
        {
          name: "write_file",
          arguments: { path: `${OUTPUTS}/${task.split(" ").at(-1)}.md`, content: "from helper" },
        },
      ],
      // "write both" delegates two tasks in one turn; anything else, one.
      lead: (question) =>
        (question === "write both" ? ["one", "two"] : ["h"]).map((name) => ({
          name: "task",
          arguments: { subagent_type: "helper", description: `save ${name}` },
        })),
    };
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
    expect(fake.failures).toEqual([]);
  });

  const chat = (agent: string, answers: string[], ...more: string[]) =>
    ask(agent, "write it", answers, ...more);
  const ask = (agent: string, question: string, answers: string[], ...more: string[]) =>
    run(
      ["chat", "--data", dataDir, "--uid", "alice", "--agent", agent, ...more, question],
      env,
      answers,
    );

  /** The file a thread's agent wrote to its outputs, or undefined. */
  async function output(threadId: string, name: string): Promise<string | undefined> {
    const runtime = await createRuntime({ dataDir, env, warn: () => undefined });
    try {
      return (await runtime.files.read("alice", threadId, `${OUTPUTS}/${name}`)).toString();
    } catch {
      return undefined;
    } finally {
      await runtime.close();
    }
  }

  it("shows the main agent's request and runs the call once approved", async () => {
    const result = await chat("boss", ["approve"]);

    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('⏸ approval needed (1 of 1), asked by the main agent "boss"');
    expect(result.stdout).toContain("  tool: write_file\n  arguments:\n    {\n");
    expect(result.stdout).toContain(`      "path": "${OUTPUTS}/a.md",\n      "content": "hello"\n`);
    expect(result.stdout).toContain("  description: Check the file first.\n");
    expect(result.stdout).toContain("  decisions: approve, edit, reject\n");
    expect(result.stdout).toContain("write_file: approve / edit / reject? approve\n");
    expect(result.stdout).toMatch(/boss heard: .*a\.md/);
    const threadId = threadIdOf(result.stdout);
    expect(await output(threadId, "a.md")).toBe("hello");
  });

  it("edit asks again until the arguments parse, shows the schema's refusal, then runs the edit", async () => {
    const result = await chat("boss", [
      "e",
      "{not json",
      '{"path": 5}',
      "edit",
      `{"path": "${OUTPUTS}/b.md", "content": "edited"}`,
    ]);

    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("new arguments for write_file (JSON on one line): {not json\n");
    expect(result.stdout).toMatch(
      /^not JSON \(.+\): type the arguments of write_file as one JSON object/m,
    );
    // Parsed, but refused by the runtime against write_file's schema: nothing ran, asked again.
    expect(result.stdout).toMatch(
      /^✗ refused: command\.resume\.\S+\.decisions\.0\.editedAction\.args do not fit tool "write_file": path: /m,
    );
    expect(result.stdout.match(/⏸ approval needed/g)).toHaveLength(2);
    const threadId = threadIdOf(result.stdout);
    expect(await output(threadId, "b.md")).toBe("edited");
    expect(await output(threadId, "a.md")).toBeUndefined();
  });

  it("reject sends the message to the model; the tool never runs", async () => {
    const result = await chat("boss", ["maybe", "reject", "not that file"]);

    expect(result.code).toBe(0);
    expect(result.stdout).toContain(
      '"maybe" is not a decision for write_file: type one of approve, edit, reject (or its first letter)',
    );
    expect(result.stdout).toContain("message for the model (Enter for none): not that file\n");
    expect(result.stdout).toContain("boss heard: not that file");
    expect(await output(threadIdOf(result.stdout), "a.md")).toBeUndefined();
  });

  it("shows a subagent's request with its task and allowed decisions, and the subagent waiting; approve finishes both", async () => {
    const result = await chat("lead", ["edit", "a"]);

    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^⏸ helper waiting for approval \(thread \S+_sub_helper_\w+\)$/m);
    expect(result.stdout).toContain(
      '⏸ approval needed (1 of 1), asked by subagent "helper" (task: save h)',
    );
    expect(result.stdout).toContain(`"path": "${OUTPUTS}/h.md"`);
    expect(result.stdout).toContain("  decisions: approve, reject\n");
    expect(result.stdout).toContain(
      '"edit" is not allowed for write_file (its interrupt_on allows approve, reject): type one of those',
    );
    expect(result.stdout).toMatch(/^✓ helper completed .*helper heard: /m);
    expect(result.stdout).toMatch(/lead heard: helper heard: .*h\.md/);
    expect(await output(threadIdOf(result.stdout), "h.md")).toBe("from helper");
  });

  it("two subagents waiting at once: each request is asked in turn, both answered in one resume", async () => {
    const result = await ask("lead", "write both", ["approve", "reject", "not two"]);

    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(
      '⏸ approval needed (1 of 2), asked by subagent "helper" (task: save one)',
    );
    expect(result.stdout).toContain(
      '⏸ approval needed (2 of 2), asked by subagent "helper" (task: save two)',
    );
    // One resume: the turn did not pause again between the two answers.
    expect(result.stdout.match(/⏸ approval needed/g)).toHaveLength(2);
    expect(result.stdout.match(/^▸ helper resumed /gm)).toHaveLength(2);
    const threadId = threadIdOf(result.stdout);
    expect(await output(threadId, "one.md")).toBe("from helper");
    expect(await output(threadId, "two.md")).toBeUndefined();
    expect(result.stdout).toMatch(/^✓ helper completed .*helper heard: not two$/m);
  });

  it("without answers the thread stays paused (exit 3); threads show lists the request; chat --thread answers it", async () => {
    const paused = await chat("lead", []);

    expect(paused.code).toBe(3);
    const threadId = threadIdOf(paused.stdout);
    expect(paused.stdout).toContain(
      `⏸ thread ${threadId} waits for approval of helper: write_file`,
    );
    expect(paused.stdout).toContain(
      `answer it: npm run chat -- --uid alice --data ${dataDir} --agent lead --thread ${threadId}`,
    );

    const shown = await run(
      ["threads", "show", threadId, "--uid", "alice", "--data", dataDir],
      env,
    );
    expect(shown.stderr).toBe("");
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain("agent:      lead\n");
    expect(shown.stdout).toContain("status:     waiting for approval (1 request)\n");
    const [header, row] = shown.stdout.split("\n\n")[1]?.split("\n") ?? [];
    expect(header).toMatch(/^ID\s+ASKED BY\s+TOOL\s+ARGUMENTS$/);
    expect(row).toMatch(
      new RegExp(
        `^\\S+\\s+helper \\(subagent\\)\\s+write_file\\s+\\{"path":"${OUTPUTS}/h\\.md","content":"from helper"\\}$`,
      ),
    );
    const interruptId = row?.split(/\s+/)[0] ?? "";
    const helper = await run(
      ["agents", "show", "helper", "--uid", "alice", "--data", dataDir],
      env,
    );
    expect(helper.stdout).toMatch(/^ {2}approvals\s+write_file \(approve, reject\)$/m);
    expect(shown.stdout).toContain(
      `answer: subagent-graph chat --thread ${threadId} --uid alice --data ${dataDir}`,
    );

    // No question: the piped lines answer what waits, then the turn finishes.
    const answered = await run(
      ["chat", "--data", dataDir, "--uid", "alice", "--thread", threadId],
      env,
      ["approve"],
    );
    expect(answered.stderr).toBe("");
    expect(answered.code).toBe(0);
    expect(answered.stdout).toContain(`  id: ${interruptId}\n`);
    expect(answered.stdout).toMatch(/^▸ helper resumed \(thread \S+_sub_helper_\w+\)$/m);
    expect(answered.stdout).toMatch(/lead heard: helper heard: /);
    expect(await output(threadId, "h.md")).toBe("from helper");

    const after = await run(
      ["threads", "show", threadId, "--uid", "alice", "--data", dataDir],
      env,
    );
    expect(after.stdout).toContain("status:     idle, not waiting for approval\n");
  });

  it("chat --thread with a question answers what waits first, then asks; a second pause is asked too", async () => {
    const paused = await chat("boss", []);
    expect(paused.code).toBe(3);
    const threadId = threadIdOf(paused.stdout);

    const result = await run(
      ["chat", "--data", dataDir, "--uid", "alice", "--thread", threadId, "once more"],
      env,
      ["reject", "", "reject", "still no"],
    );

    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.stdout.match(/⏸ approval needed/g)).toHaveLength(2);
    // A reject without a message gets langchain's default answer; the second one, the message.
    expect(result.stdout).toMatch(/boss heard: .*write_file/);
    expect(result.stdout).toContain("boss heard: still no");
    expect(threadIdOf(result.stdout)).toBe(threadId);
  });

  it("chat --thread on a waiting thread with no answers piped leaves it pending (exit 3)", async () => {
    const paused = await chat("boss", []);
    const threadId = threadIdOf(paused.stdout);
    const interruptId = /^ {2}id: (\S+)$/m.exec(paused.stdout)?.[1];

    // No question: stdin holds the answers, and it is empty.
    const result = await run(
      ["chat", "--data", dataDir, "--uid", "alice", "--thread", threadId],
      env,
    );

    expect(result.code).toBe(3);
    expect(result.stdout).toContain(`  id: ${interruptId}\n`);
    expect(result.stdout).toContain(`⏸ thread ${threadId} waits for approval of write_file`);
    const runtime = await createRuntime({ dataDir, env, warn: () => undefined });
    try {
      expect((await runtime.threads.interrupts("alice", threadId)).map((p) => p.id)).toEqual([
        interruptId,
      ]);
    } finally {
      await runtime.close();
    }
  });
});
