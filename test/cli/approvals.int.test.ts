import { spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRuntime } from "../../runtime.js";
import { cli, offlineEnv } from "../support/cli.js";
import {
  type ChatCompletionRequestBody,
  type FakeOpenAIServer,
  startFakeOpenAIServer,
} from "../support/fake-openai-server.js";
import { cliCommand } from "../support/node-entry.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const OUTPUTS = "/home/gem/user-data/outputs";
const MAIN = cliCommand();

/**
 * The model of `boss` (whose write_file is gated): a write_file call on a new question, and once
 * the tool has answered, `boss heard: <the tool's answer>`.
 */
function boss(request: ChatCompletionRequestBody) {
  const last = request.messages.at(-1);
  if (last?.role === "tool") return { content: `boss heard: ${String(last.content)}` };
  return {
    content: "",
    toolCalls: [{ name: "write_file", arguments: { path: `${OUTPUTS}/a.md`, content: "hello" } }],
  };
}

/**
 * `cli/main.ts …args` on a pseudo-terminal (util-linux `script`), each `script` line typed once
 * the output so far, after the previous step, contains its `after` text. A safety net kills it
 * after `killAfterMs` (then `code` is null); no test asserts on time.
 */
function inTerminal(
  args: string[],
  env: NodeJS.ProcessEnv,
  script: { after: string; type: string }[],
  killAfterMs = 60_000,
) {
  const quote = (value: string) => `'${value.replaceAll("'", `'\\''`)}'`;
  return new Promise<{ code: number | null; output: string }>((resolve, reject) => {
    const child = spawn("script", ["-qec", [...MAIN, ...args].map(quote).join(" "), "/dev/null"], {
      cwd: ROOT,
      env,
      stdio: ["pipe", "pipe", "inherit"],
    });
    const steps = [...script];
    let output = "";
    let seen = 0;
    child.stdout.setEncoding("utf8").on("data", (text: string) => {
      output += text;
      const next = steps[0];
      const at = next ? output.indexOf(next.after, seen) : -1;
      if (next && at >= 0) {
        steps.shift();
        seen = at + next.after.length;
        child.stdin.write(`${next.type}\r`);
      }
    });
    const killer = setTimeout(() => child.kill("SIGKILL"), killAfterMs);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(killer);
      resolve({ code, output });
    });
  });
}

// Each case spawns CLI processes (a few seconds each on a busy machine).
describe("chat asks for approval (cli/main.ts processes)", { timeout: 120_000 }, () => {
  let fake: FakeOpenAIServer;
  let dataDir: string;
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    fake = await startFakeOpenAIServer(boss);
    dataDir = await mkdtemp(join(tmpdir(), "cli-approvals-int-"));
    env = {
      ...offlineEnv(),
      OPENAI_API_KEY: "test-key",
      OPENAI_BASE_URL: fake.url,
      OPENAI_MAX_RETRIES: "0",
    };
    const runtime = await createRuntime({ dataDir, env, warn: () => undefined });
    try {
      await runtime.agents.create("alice", {
        slug: "boss",
        name: "boss",
        description: "gated main agent",
        config_json: {
          context: {
            model: "openai:fake-model",
            system_prompt: "You are boss.",
            interrupt_on: { write_file: true },
          },
        },
      });
    } finally {
      await runtime.close();
    }
  });
  afterAll(async () => {
    await fake.close();
    await rm(dataDir, { recursive: true, force: true });
    expect(fake.failures).toEqual([]);
  });

  it("piped: the answer on stdin approves, and threads show then lists nothing pending", async () => {
    const result = await cli(
      ["chat", "--data", dataDir, "--uid", "alice", "--agent", "boss", "write it"],
      { env, input: "approve\n" },
    );

    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('asked by the main agent "boss"');
    expect(result.stdout).toContain("write_file: approve / edit / reject? approve\n");
    expect(result.stdout).toContain(`boss heard: created ${OUTPUTS}/a.md (5 bytes)`);
    const threadId = /^thread: (\S+)$/m.exec(result.stdout)?.[1] ?? "";

    const shown = await cli(["threads", "show", threadId, "--uid", "alice", "--data", dataDir], {
      env,
      input: "",
    });
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain("status:     idle, not waiting for approval\n");
  });

  it("on a terminal: the interactive chat asks, offers the arguments to edit, and goes on", async () => {
    const result = await inTerminal(
      ["chat", "--data", dataDir, "--uid", "alice", "--agent", "boss"],
      env,
      [
        { after: "› ", type: "write it" },
        { after: "approve / edit / reject? ", type: "edit" },
        // The current arguments are on the line to edit: Ctrl-U clears it, then the new ones.
        {
          after: `{"path":"${OUTPUTS}/a.md","content":"hello"}`,
          type: `\x15{"path": "${OUTPUTS}/typed.md", "content": "typed"}`,
        },
        // At the next prompt: typed while the answer is still printed, its echo would split it.
        { after: "› ", type: "/exit" },
      ],
    );

    expect(result.code).toBe(0);
    expect(result.output).toContain('asked by the main agent "boss"');
    expect(result.output).toContain(`boss heard: created ${OUTPUTS}/typed.md (5 bytes)`);
    expect(result.output).toContain("continue later:");
  });
});
