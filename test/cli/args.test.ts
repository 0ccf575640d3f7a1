import { describe, expect, it } from "vitest";
import { UsageError } from "../../cli/command-line.js";
import { parseCommandLine } from "../../cli/parse.js";

function usageError(argv: string[], env: NodeJS.ProcessEnv = {}): UsageError {
  try {
    parseCommandLine(argv, env);
  } catch (error) {
    if (error instanceof UsageError) return error;
    throw error;
  }
  throw new Error(`expected a UsageError for ${JSON.stringify(argv)}`);
}

describe("parseCommandLine", () => {
  it("parses chat with its options and joins the question's words", () => {
    expect(
      parseCommandLine(
        ["chat", "--uid", "alice", "--agent", "helper", "--thread", "t1", "what", "now?"],
        {},
      ),
    ).toEqual({
      name: "chat",
      store: { uid: "alice", dataDir: "data", dataGiven: false },
      agent: "helper",
      threadId: "t1",
      question: "what now?",
    });
  });

  it("leaves the question undefined when none is given", () => {
    const command = parseCommandLine(["chat"], {});
    expect(command).toMatchObject({ name: "chat", question: undefined });
  });

  it("takes the data folder from --data, else SUBAGENT_GRAPH_DATA, else ./data", () => {
    const env = { SUBAGENT_GRAPH_DATA: "/srv/graph" };
    expect(parseCommandLine(["demo", "--data", "/tmp/x"], env)).toEqual({
      name: "demo",
      store: { uid: "demo", dataDir: "/tmp/x", dataGiven: true },
    });
    expect(parseCommandLine(["demo"], env)).toMatchObject({ store: { dataDir: "/srv/graph" } });
    expect(parseCommandLine(["demo"], {})).toMatchObject({ store: { dataDir: "data" } });
  });

  it("serves the web console unless --no-console, which only serve takes", () => {
    expect(parseCommandLine(["serve", "--port", "9000"], {})).toMatchObject({
      name: "serve",
      port: 9000,
      console: true,
    });
    expect(parseCommandLine(["serve", "--no-console"], {})).toMatchObject({ console: false });
    expect(usageError(["chat", "--no-console"]).message).toContain(
      'option --no-console is only for "serve"',
    );
  });

  it("takes serve's fleet role and workers from the flags, else from the environment, and refuses bad ones", () => {
    expect(parseCommandLine(["serve"], {})).toMatchObject({ role: "all", workers: 10 });
    expect(
      parseCommandLine(["serve", "--role", "worker", "--workers", "20"], {
        SUBAGENT_ROLE: "api",
        SUBAGENT_WORKERS: "5",
      }),
    ).toMatchObject({ name: "serve", role: "worker", workers: 20 });
    expect(
      parseCommandLine(["serve"], { SUBAGENT_ROLE: "api", SUBAGENT_WORKERS: "5" }),
    ).toMatchObject({ role: "api", workers: 5 });
    expect(usageError(["serve", "--role", "boss"]).message).toBe(
      '--role: "boss" is not a role: use one of all, api, worker',
    );
    for (const bad of ["0", "1001", "ten", "2.5"]) {
      expect(usageError(["serve", "--workers", bad]).message).toBe(
        `--workers: "${bad}" is not a number of runs at once: use a whole number from 1 to 1000`,
      );
    }
    expect(usageError(["serve"], { SUBAGENT_WORKERS: "-3" }).message).toContain('--workers: "-3"');
    expect(usageError(["chat", "--role", "api"]).message).toContain(
      'option --role is only for "serve"',
    );
  });

  it("parses agents list and agents show <slug>", () => {
    expect(parseCommandLine(["agents", "list"], {})).toMatchObject({ name: "agents-list" });
    expect(parseCommandLine(["agents", "show", "assistant"], {})).toMatchObject({
      name: "agents-show",
      slug: "assistant",
    });
  });

  it("parses the kb commands, their options only where they apply", () => {
    expect(parseCommandLine(["kb", "list"], {})).toMatchObject({ name: "kb-list" });
    expect(
      parseCommandLine(["kb", "create", "handbook", "--description", "rules"], {}),
    ).toMatchObject({ name: "kb-create", kb: "handbook", description: "rules" });
    expect(parseCommandLine(["kb", "add", "handbook", "a.pdf", "docs"], {})).toMatchObject({
      name: "kb-add",
      kb: "handbook",
      paths: ["a.pdf", "docs"],
    });
    expect(parseCommandLine(["kb", "search", "wind", "tunnel", "--kb", "h"], {})).toMatchObject({
      name: "kb-search",
      query: "wind tunnel",
      kb: "h",
    });
    expect(parseCommandLine(["kb", "rm", "handbook"], {})).toMatchObject({ name: "kb-rm" });
    expect(
      parseCommandLine(
        [
          "kb",
          "create",
          "papers",
          "--embedding-model",
          "bge-m3",
          "--embedding-dimensions",
          "1024",
          "--embedding-base-url",
          "http://127.0.0.1:8000/v1",
          "--embedding-key-env",
          "VLLM_KEY",
        ],
        {},
      ),
    ).toMatchObject({
      name: "kb-create",
      embedder: {
        model: "bge-m3",
        dimensions: 1024,
        base_url: "http://127.0.0.1:8000/v1",
        api_key_env: "VLLM_KEY",
      },
    });
    expect(parseCommandLine(["kb", "create", "plain"], {})).toMatchObject({ embedder: undefined });
    // What the command line can judge is refused there, naming the option, value and fix.
    expect(
      usageError(["kb", "create", "p", "--embedding-model", "m", "--embedding-dimensions", "1e3"])
        .message,
    ).toBe(
      'option --embedding-dimensions "1e3" is not a whole number above 0: give the length of the model\'s vectors, e.g. --embedding-dimensions 1536',
    );
    expect(usageError(["kb", "create", "p", "--embedding-model", "m"]).message).toContain(
      "option --embedding-dimensions is missing: an embedder needs --embedding-model and --embedding-dimensions together",
    );
    expect(usageError(["kb", "list", "--embedding-model", "m"]).message).toContain(
      "option --embedding-dimensions is missing",
    );
    expect(
      usageError(["kb", "list", "--embedding-model", "m", "--embedding-dimensions", "8"]).message,
    ).toBe('options --embedding-… are only for "kb create" and "kb update"');
    expect(usageError(["kb", "add", "handbook"]).message).toContain("needs files or folders");
    expect(usageError(["kb", "list", "--kb", "x"]).message).toBe(
      'option --kb is only for "kb search"',
    );
    expect(usageError(["chat", "--description", "x"]).message).toContain(
      'option --description is only for "kb"',
    );
    expect(usageError(["kb", "drop"]).message).toContain('unknown subcommand "kb drop"');
  });

  it("parses kb update: a description, a new embedder or none, and refuses the rest", () => {
    expect(
      parseCommandLine(
        ["kb", "update", "papers", "--embedding-model", "m", "--embedding-dimensions", "16"],
        {},
      ),
    ).toMatchObject({
      name: "kb-update",
      kb: "papers",
      description: undefined,
      embedder: { model: "m", dimensions: 16 },
    });
    expect(parseCommandLine(["kb", "update", "papers", "--no-embedding"], {})).toMatchObject({
      name: "kb-update",
      embedder: {},
    });
    expect(parseCommandLine(["kb", "update", "papers", "--description", "d"], {})).toMatchObject({
      name: "kb-update",
      description: "d",
      embedder: undefined,
    });
    expect(usageError(["kb", "update", "papers"]).message).toContain(
      '"kb update <kb>" needs something to change',
    );
    expect(usageError(["kb", "update", "--no-embedding"]).message).toContain(
      '"kb update" needs a knowledge base',
    );
    expect(
      usageError(["kb", "update", "papers", "--no-embedding", "--embedding-model", "m"]).message,
    ).toBe(
      "option --no-embedding turns vectors off, so it cannot go with --embedding-model: give --no-embedding alone, or the new embedder without it",
    );
    expect(
      usageError([
        "kb",
        "update",
        "papers",
        "--embedding-model",
        "m",
        "--embedding-dimensions",
        "0",
      ]).message,
    ).toContain('option --embedding-dimensions "0" is not a whole number above 0');
    expect(usageError(["kb", "create", "p", "--no-embedding"]).message).toContain(
      'option --no-embedding is only for "kb update"',
    );
    expect(usageError(["kb", "files", "p", "--description", "d"]).message).toBe(
      'option --description is only for "kb create" and "kb update"',
    );
  });

  it("parses the skills and files commands", () => {
    expect(parseCommandLine(["skills", "add", "./s", "--replace"], {})).toMatchObject({
      name: "skills-add",
      folder: "./s",
      replace: true,
    });
    expect(parseCommandLine(["skills", "remove", "pdf"], {})).toMatchObject({
      name: "skills-remove",
      skill: "pdf",
    });
    expect(
      parseCommandLine(["files", "upload", "t1", "./a.csv", "data.csv", "--agent", "x"], {}),
    ).toMatchObject({
      name: "files-upload",
      threadId: "t1",
      file: "./a.csv",
      uploadName: "data.csv",
      agent: "x",
    });
    expect(parseCommandLine(["files", "list", "t1"], {})).toMatchObject({
      name: "files-list",
      folder: undefined,
    });
    expect(parseCommandLine(["files", "cat", "t1", "/home/gem/x"], {})).toMatchObject({
      name: "files-cat",
      path: "/home/gem/x",
    });
  });

  it("parses the users and tokens commands, the user being a positional argument", () => {
    expect(parseCommandLine(["users", "add", "alice", "--name", "Alice Example"], {})).toEqual({
      name: "users-add",
      store: { uid: "demo", dataDir: "data", dataGiven: false },
      uid: "alice",
      displayName: "Alice Example",
    });
    expect(parseCommandLine(["users", "add", "bob"], {})).toMatchObject({
      name: "users-add",
      uid: "bob",
      displayName: undefined,
    });
    expect(parseCommandLine(["users", "list"], {})).toMatchObject({ name: "users-list" });
    expect(parseCommandLine(["tokens", "issue", "alice", "--label", "laptop"], {})).toMatchObject({
      name: "tokens-issue",
      uid: "alice",
      label: "laptop",
    });
    expect(parseCommandLine(["tokens", "issue", "alice"], {})).toMatchObject({
      name: "tokens-issue",
      label: undefined,
    });
    expect(parseCommandLine(["tokens", "list", "alice"], {})).toEqual({
      name: "tokens-list",
      store: { uid: "demo", dataDir: "data", dataGiven: false },
      uid: "alice",
    });
    expect(
      parseCommandLine(["tokens", "revoke", "alice", "tok_0123456789abcdef", "--data", "/d"], {}),
    ).toEqual({
      name: "tokens-revoke",
      store: { uid: "demo", dataDir: "/d", dataGiven: true },
      uid: "alice",
      tokenId: "tok_0123456789abcdef",
    });
  });

  it("treats help, --help and -h alike, with the command they follow or name as the topic", () => {
    for (const argv of [["help"], ["--help"], ["-h"]]) {
      expect(parseCommandLine(argv, {})).toEqual({ name: "help", topic: undefined });
    }
    for (const argv of [
      ["chat", "-h"],
      ["chat", "--thread", "t1", "--help"],
      ["help", "chat"],
    ]) {
      expect(parseCommandLine(argv, {})).toEqual({ name: "help", topic: "chat" });
    }
    // The command's help, even when the rest of the line would not parse.
    expect(parseCommandLine(["files", "upload", "--help"], {})).toEqual({
      name: "help",
      topic: "files",
    });
    expect(usageError(["help", "launch"]).message).toBe(
      'unknown command "launch": use one of serve, studio, chat, agents, threads, skills, kb, mcp, files, users, tokens, demo, help',
    );
    expect(usageError(["launch", "--help"]).message).toContain('unknown command "launch"');
  });

  it("parses threads list", () => {
    expect(parseCommandLine(["threads", "list", "--uid", "alice"], {})).toEqual({
      name: "threads-list",
      store: { uid: "alice", dataDir: "data", dataGiven: false },
    });
    expect(usageError(["threads"]).message).toBe('"threads" needs a subcommand: list or show <id>');
  });

  it("parses threads show <id>", () => {
    expect(parseCommandLine(["threads", "show", "t-1", "--uid", "alice"], {})).toEqual({
      name: "threads-show",
      store: { uid: "alice", dataDir: "data", dataGiven: false },
      threadId: "t-1",
    });
    expect(usageError(["threads", "show"]).message).toBe(
      '"threads show" needs a thread id (see "threads list")',
    );
    expect(usageError(["threads", "show", "t-1", "t-2"]).message).toBe(
      '"threads show <id>" takes no further arguments, got "t-2"',
    );
  });

  it.each([
    [["launch"], 'unknown command "launch"'],
    [[], "no command given"],
    [["chat", "--bogus"], "--bogus"],
    [["chat", "--uid"], "--uid"],
    [["chat", "--uid", " "], "--uid needs a non-empty value"],
    [["agents"], "list or show"],
    [["agents", "remove"], '"agents remove"'],
    [["agents", "show"], "needs the slug"],
    [["agents", "list", "--thread", "t1"], '--thread is only for "chat"'],
    [["demo", "extra"], '"extra"'],
    [["skills"], "list, add <folder> or remove <name>"],
    [["skills", "add"], "needs a folder"],
    [["skills", "remove", "x", "--replace"], '--replace is only for "skills add"'],
    [["agents", "list", "--replace"], '--replace is only for "skills"'],
    [["files", "move", "t1"], 'unknown subcommand "files move"'],
    [["files", "upload"], "needs a thread id"],
    [["files", "upload", "t1"], "needs a local file"],
    [["files", "cat", "t1"], "needs a path"],
    [["files", "list", "t1", "--agent", "x"], '--agent is only for "files upload"'],
    [["users"], '"users" needs a subcommand: add <uid> or list'],
    [["users", "remove", "alice"], 'unknown subcommand "users remove"'],
    [["users", "add"], '"users add <uid>" needs a user id'],
    [["users", "add", "alice", "bob"], '"bob"'],
    [["users", "list", "extra"], '"users list" takes no further arguments'],
    [["users", "list", "--name", "x"], '--name is only for "users add"'],
    [["users", "add", "alice", "--name", " "], "--name needs a non-empty value"],
    [["users", "add", "alice", "--label", "x"], '--label is only for "tokens", not "users"'],
    [["tokens"], '"tokens" needs a subcommand: issue, list or revoke'],
    [["tokens", "show", "alice"], 'unknown subcommand "tokens show"'],
    [["tokens", "issue"], '"tokens issue <uid>" needs a user id'],
    [["tokens", "list"], '"tokens list <uid>" needs a user id'],
    [["tokens", "revoke", "alice"], 'needs a token id (see "tokens list alice")'],
    [["tokens", "revoke", "alice", "tok_1", "tok_2"], '"tok_2"'],
    [["tokens", "issue", "alice", "extra"], '"extra"'],
    [["tokens", "list", "alice", "--label", "x"], '--label is only for "tokens issue"'],
    [["tokens", "revoke", "alice", "tok_1", "--label", "x"], '--label is only for "tokens issue"'],
    [["tokens", "issue", "alice", "--label", ""], "--label needs a non-empty value"],
    [["tokens", "issue", "alice", "--name", "x"], '--name is only for "users", not "tokens"'],
    [["chat", "--label", "x"], '--label is only for "tokens", not "chat"'],
  ])("rejects %j naming the problem", (argv, expected) => {
    expect(usageError(argv).message).toContain(expected);
  });
});
