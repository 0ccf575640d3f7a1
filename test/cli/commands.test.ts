import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { CHAT_COMMANDS_HELP } from "../../cli/chat-commands.js";
import { commandHelp } from "../../cli/help.js";
import { createRuntime } from "../../runtime.js";
import { cliInProcess, type InProcessInput } from "../support/in-process-cli.js";

/** The CLI as typed, in this process: no OPENAI_* or SUBAGENT_GRAPH_* variables, the offline model. */
const run = (argv: string[], options: InProcessInput = {}) => cliInProcess(argv, options);

/** The user's agents and threads in `dataDir`, read through a runtime of its own. */
async function contentsOf(dataDir: string, uid: string) {
  const runtime = await createRuntime({ dataDir, env: {}, warn: () => undefined });
  try {
    return {
      agents: (await runtime.agents.list(uid, { include_subagents: true })).map((a) => a.slug),
      threads: (await runtime.threads.search(uid, { limit: 100 })).map((t) => t.threadId),
    };
  } finally {
    await runtime.close();
  }
}

describe("CLI commands (in-process)", { timeout: 60_000 }, () => {
  let root: string;
  let dataDir: string;

  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), "cli-commands-"));
    dataDir = join(root, "data");
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  describe("chat --thread", () => {
    it("refuses a thread the user does not have, naming it and threads list; creates nothing", async () => {
      const result = await run(["chat", "--data", dataDir, "--thread", "t-typo", "hi"]);

      expect(result.code).toBe(1);
      expect(result.stderr).toBe(
        `error [NOT_FOUND]: thread "t-typo" is not one of user "demo"'s threads: list them with "subagent-graph threads list --data ${dataDir}", or leave out --thread to start a new thread\n`,
      );
      expect(result.stdout).toBe("");
      expect(await contentsOf(dataDir, "demo")).toEqual({ agents: [], threads: [] });
    });

    it("continues a thread that threads list shows", async () => {
      const first = await run(["chat", "--data", dataDir, "first question"]);
      expect(first.code).toBe(0);
      const threadId = /^thread: (\S+)$/m.exec(first.stdout)?.[1] ?? "";

      const listed = await run(["threads", "list", "--data", dataDir]);
      expect(listed.code).toBe(0);
      const [header, row, ...rest] = listed.stdout.trimEnd().split("\n");
      expect(header).toMatch(/^THREAD\s+AGENT\s+LAST USED\s+CREATED$/);
      expect(row).toMatch(new RegExp(`^${threadId}\\s+assistant\\s+\\S+\\s+\\S+$`));
      expect(rest).toEqual([]);

      const second = await run(["chat", "--data", dataDir, "--thread", threadId, "and then?"]);
      expect(second.code).toBe(0);
      expect(second.stdout).toContain(`thread: ${threadId}`);
    });

    it("lists no threads for a user without any", async () => {
      const result = await run(["threads", "list", "--data", dataDir]);
      expect(result).toEqual({
        code: 0,
        stdout: 'user "demo" has no threads yet: "subagent-graph chat" starts one.\n',
        stderr: "",
      });
    });
  });

  describe("chat --uid", () => {
    it("refuses a user that does not exist, naming users add; creates no agents", async () => {
      const result = await run(["chat", "--data", dataDir, "--uid", "ghost", "hi"]);

      expect(result.code).toBe(1);
      expect(result.stderr).toBe(
        `error [NOT_FOUND]: user "ghost" does not exist in ${dataDir}: add it with "subagent-graph users add ghost --data ${dataDir}" (its first chat then creates its demo agents), or leave out --uid to chat as "demo"\n`,
      );
      expect(await contentsOf(dataDir, "ghost")).toEqual({ agents: [], threads: [] });
      // demo is refused the same way for `demo`, which would also create agents.
      const demo = await run(["demo", "--data", dataDir, "--uid", "ghost"]);
      expect(demo.code).toBe(1);
      expect(demo.stderr).toContain('user "ghost" does not exist');

      // Once added, the user chats, and gets the demo agents.
      expect((await run(["users", "add", "ghost", "--data", dataDir])).code).toBe(0);
      const added = await run(["chat", "--data", dataDir, "--uid", "ghost", "hi"]);
      expect(added.code).toBe(0);
      expect(added.stdout).toContain('Created the demo agents for user "ghost"');
    });
  });

  describe("files upload", () => {
    it("names a local file that does not exist; claims no thread", async () => {
      const missing = join(root, "missing.txt");

      const result = await run(["files", "upload", "t1", missing, "--data", dataDir]);

      expect(result.code).toBe(1);
      expect(result.stderr).toBe(
        `error [NOT_FOUND]: no file "${missing}" to upload: give the path of an existing file\n`,
      );
      expect((await contentsOf(dataDir, "demo")).threads).toEqual([]);
    });

    it("names a folder given as the file", async () => {
      const result = await run(["files", "upload", "t1", root, "--data", dataDir]);

      expect(result.code).toBe(1);
      expect(result.stderr).toBe(
        `error [VALIDATION_FAILED]: cannot read "${root}" to upload: it is a folder; give the path of a file you can read\n`,
      );
    });
  });

  describe("--data", () => {
    it("fails at once for a data folder that cannot be created, naming it and the fix", async () => {
      const file = join(root, "a-file");
      await writeFile(file, "not a folder");

      const result = await run(["agents", "list", "--data", join(file, "data")]);

      expect(result.code).toBe(1);
      expect(result.stderr).toBe(
        `error [DATA_DIR_UNUSABLE]: data folder "${join(file, "data")}" cannot be created (ENOTDIR: not a directory, stat '${join(file, "data")}'): use a folder you can write to (the dataDir option; on the command line --data <dir> or SUBAGENT_GRAPH_DATA)\n`,
      );
    });

    it("fails at once for a data folder that cannot be written", async () => {
      // Even root cannot make a file in /proc.
      const result = await run(["agents", "list", "--data", "/proc"]);

      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(
        /^error \[DATA_DIR_UNUSABLE\]: data folder "\/proc" cannot be written \(.+\): use a folder you can write to \(the dataDir option; on the command line --data <dir> or SUBAGENT_GRAPH_DATA\)\n$/,
      );
    });
  });

  describe("help", () => {
    it.each([
      [["chat", "--help"], "chat"],
      [["help", "files"], "files"],
      [["files", "upload", "-h"], "files"],
      [["threads", "--help"], "threads"],
    ])("%j prints that command's help and exits 0", async (argv, topic) => {
      const result = await run(argv);
      expect(result).toEqual({ code: 0, stdout: `${commandHelp(topic)}\n`, stderr: "" });
    });

    it("a command's help shows its forms and options, not the others'", () => {
      const chat = commandHelp("chat");
      expect(chat).toMatch(/^Usage: subagent-graph chat \[question\] \[options\]$/m);
      expect(chat).toContain("--thread <id>");
      expect(chat).toContain("/help");
      expect(chat).not.toContain("--port");
      expect(chat).not.toContain("tokens issue");
      expect(commandHelp("files")).toMatch(/^ {7}subagent-graph files cat <thread> <path>/m);
      // A note is one paragraph, its lines kept together.
      expect(commandHelp("serve")).toContain("shares one queue of\nruns: --role api");
    });

    it("/help in the interactive chat lists its commands, and the chat goes on", async () => {
      const result = await run(["chat", "--data", dataDir], {
        tty: [
          { after: "› ", type: "/help" },
          { after: "second Ctrl-C quits.", type: "/bogus" },
          { after: "unknown command /bogus", type: "/exit" },
        ],
      });

      expect(result.code).toBe(0);
      expect(result.stdout).toContain("/help lists the commands");
      expect(result.stdout).toContain(CHAT_COMMANDS_HELP);
      expect(result.stdout).toContain("unknown command /bogus: /help lists the commands");
    });
  });
});
