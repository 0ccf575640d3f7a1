import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createRuntime } from "../../runtime.js";
import { messageText } from "../../util/message-text.js";
import { cli, cliInTerminal } from "../support/cli.js";

function threadIdOf(stdout: string): string {
  const match = /^thread: (\S+)$/m.exec(stdout);
  if (!match?.[1]) throw new Error(`no "thread: <id>" line in:\n${stdout}`);
  return match[1];
}

/** Asserts the output shows both demo subagents starting and completing. */
function expectBothSubagentsRan(stdout: string): void {
  for (const slug of ["researcher", "reviewer"]) {
    expect(stdout).toMatch(
      new RegExp(`^▸ ${slug} started \\(thread \\S+_sub_${slug}_\\w+\\)$`, "m"),
    );
    expect(stdout).toMatch(new RegExp(`^✓ ${slug} completed \\(.*1 round.*\\): `, "m"));
  }
}

// Each case spawns several CLI processes (a few seconds each on a busy 2-core machine).
describe("cli/main.ts", { timeout: 180_000 }, () => {
  let dataDir: string;

  beforeEach(async () => {
    dataDir = await mkdtemp(join(tmpdir(), "cli-main-"));
  });
  afterEach(async () => {
    await rm(dataDir, { recursive: true, force: true });
  });

  it("demo seeds the agents and answers the demo question through both subagents", async () => {
    const result = await cli(["demo", "--data", dataDir]);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('Created the demo agents for user "demo"');
    expect(result.stdout).toContain(
      "Plan a weekend workshop on renewable energy for high-school students",
    );
    expectBothSubagentsRan(result.stdout);
    expect(result.stdout).toMatch(/^note: .*\[offline model\].*OPENAI_API_KEY/m);
    expect(result.stdout).toContain("[offline model] Here is what my subagents found");
    threadIdOf(result.stdout);
  });

  it("chat answers a question, and chat --thread continues the same thread", async () => {
    const first = await cli(["chat", "--data", dataDir, "Compare solar and wind power"]);
    expect(first.stderr).toBe("");
    expect(first.code).toBe(0);
    expectBothSubagentsRan(first.stdout);
    expect(first.stdout).toContain("[offline model]");
    const threadId = threadIdOf(first.stdout);
    expect(first.stdout).toContain(`--thread ${threadId}`);

    const second = await cli(["chat", "--data", dataDir, "--thread", threadId, "And hydro?"]);
    expect(second.code).toBe(0);
    // Seeded once: the second run finds the default agent and creates nothing.
    expect(second.stdout).not.toContain("Created the demo agents");
    expect(threadIdOf(second.stdout)).toBe(threadId);

    const runtime = await createRuntime({ dataDir, env: {} });
    try {
      const [latest] = await runtime.history("demo", threadId);
      const questions = (latest?.messages ?? [])
        .filter((message) => message.getType() === "human")
        .map((message) => messageText(message));
      expect(questions).toEqual(["Compare solar and wind power", "And hydro?"]);
    } finally {
      await runtime.close();
    }
  });

  it("rejects an unknown command with exit code 2, naming it and showing the usage", async () => {
    const result = await cli(["launch", "--data", dataDir]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('unknown command "launch"');
    expect(result.stderr).toContain("Usage: subagent-graph <command>");
    expect(result.stdout).toBe("");
  });

  it("refuses mistyped input with one error line naming it and the fix, exit code 1", async () => {
    const thread = await cli(["chat", "--data", dataDir, "--thread", "t-typo", "hi"]);
    expect(thread.code).toBe(1);
    expect(thread.stderr).toMatch(
      /^error \[NOT_FOUND\]: thread "t-typo" is not one of user "demo"'s threads: list them with "subagent-graph threads list --data \S+", or leave out --thread to start a new thread\n$/,
    );

    const user = await cli(["chat", "--data", dataDir, "--uid", "ghost", "hi"]);
    expect(user.code).toBe(1);
    expect(user.stderr).toMatch(
      /^error \[NOT_FOUND\]: user "ghost" does not exist .*users add ghost/,
    );

    const missing = join(dataDir, "missing.pdf");
    const upload = await cli(["files", "upload", "t1", missing, "--data", dataDir]);
    expect(upload.code).toBe(1);
    expect(upload.stderr).toBe(
      `error [NOT_FOUND]: no file "${missing}" to upload: give the path of an existing file\n`,
    );

    // It used to spin at full CPU for ever (Node's recursive mkdir on procfs); killed if so.
    const data = await cli(["--data", "/proc/nope", "agents", "list"], { killAfterMs: 30_000 });
    expect(data.code).toBe(1);
    expect(data.stderr).toBe(
      `error [DATA_DIR_UNUSABLE]: data folder "/proc/nope" cannot be created (ENOENT: no such file or directory, mkdir '/proc/nope'): use a folder you can write to (the dataDir option; on the command line --data <dir> or SUBAGENT_GRAPH_DATA)\n`,
    );
  });

  it("prints a command's help with --help, and lists the chat's commands with /help", async () => {
    const help = await cli(["chat", "--help"]);
    expect(help.code).toBe(0);
    expect(help.stderr).toBe("");
    expect(help.stdout).toMatch(/^Usage: subagent-graph chat \[question\] \[options\]\n/);
    expect(help.stdout).toContain("--thread <id>");

    const chat = await cliInTerminal(
      ["chat", "--data", dataDir],
      [
        { after: "› ", type: "/help" },
        { after: "second Ctrl-C quits.", type: "/exit" },
      ],
      { killAfterMs: 45_000 },
    );
    expect(chat.code).toBe(0);
    expect(chat.output).toContain("/help lists the commands");
    expect(chat.output).toContain("/new                 Start a new thread.");
  });

  it("prints a SubagentGraphError as `error [CODE]: message` without a stack, exit code 1", async () => {
    const result = await cli(["chat", "--data", dataDir, "--agent", "nobody", "hi"]);
    expect(result.code).toBe(1);
    expect(result.stderr.trim()).toMatch(/^error \[NOT_FOUND\]: agent "nobody" not found/);
    expect(result.stderr).not.toMatch(/^\s+at /m);
  });
});
