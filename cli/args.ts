import { parseArgs } from "node:util";
import { DEMO_UID } from "../agents/demo.js";

/** The usage text of `help`, and of every usage error. */
export const USAGE = `Usage: subagent-graph <command> [options]
       (in a clone of the repository: npm run cli -- <command> [options])

Commands:
  serve                Serve the HTTP API and the web console at / (default 127.0.0.1:$PORT,
                       else 8787). The first start creates the demo user and agents and prints
                       the user's token once. The console is built first when web/dist is
                       missing or older than web/ (npm run build does it ahead).
  studio               Start the LangGraph dev server for LangGraph Studio (offline), on
                       127.0.0.1:$STUDIO_PORT, else 2025; graphs read agents from the data dir.
  chat [question]      Ask your default agent (or --agent) one question and print the answer.
                       Without a question: an interactive chat on a terminal, or the whole of
                       stdin as the question when it is piped.
  agents list          List your agents: kind (chat/subagent), slug, model, subagents.
  agents show <slug>   Show one agent's settings.
  skills list          List the installed skills (agents get them through context.skills).
  skills add <folder>  Install a skill folder (SKILL.md with name/description front matter);
                       --replace replaces an installed skill of the same name.
  skills remove <name> Remove an installed skill.
  mcp list             List the MCP servers (<data>/mcp.json or $SUBAGENT_GRAPH_MCP): each one is
                       connected to show its status and its tools (mcp_<server>_<tool>).
  files upload <thread> <file> [name]
                       Add a local file to a thread's uploads (a new thread id is claimed for
                       your default agent, or --agent), where its agents can read it.
  files list <thread> [folder]
                       List a thread's files (default: its outputs).
  files cat <thread> <path>
                       Print one of a thread's files, e.g. /home/gem/user-data/outputs/x.md.
  users add <uid>      Add a user who can be given API tokens (--name: a display name).
  users list           List the users.
  tokens issue <uid>   Issue an API token for the HTTP server (--label: what it is for). The
                       token is printed once and cannot be shown again.
  tokens list <uid>    List a user's tokens (ids, labels, last use; never the tokens).
  tokens revoke <uid> <token-id>
                       Revoke a token at once (its id is in "tokens list").
  demo                 Create the demo agents if needed and run a sample question.
  help                 Show this text.

Options:
  --uid <uid>          The user to act as (default: ${DEMO_UID}).
  --data <dir>         Data folder (default: $SUBAGENT_GRAPH_DATA, else ./data).
  --agent <slug>       chat: the agent to ask (default: your default agent).
  --thread <id>        chat: continue this thread (its id is printed after each answer).
  --replace            skills add: replace an installed skill of the same name.
  --port <n>           serve / studio: the port (default $PORT, else 8787 / $STUDIO_PORT, else 2025).
  --host <address>     serve / studio: the address to listen on (default 127.0.0.1).
  --no-console         serve: the API only (no web console, nothing built).
  --name <text>        users add: the user's display name (default: the uid).
  --label <text>       tokens issue: what the token is for (default: "default").
  -h, --help           Show this text.

In the interactive chat: /new starts a new thread, /exit or Ctrl-D quits, Ctrl-C cancels a
running answer and a second Ctrl-C quits.

Models: agents without a model use OPENAI_API_KEY (openai:gpt-4o-mini), or OPENAI_BASE_URL for
a local OpenAI-compatible server, or SUBAGENT_GRAPH_MODEL; with none of them set, a
deterministic offline model answers, labelled [offline model].

Examples:
  subagent-graph demo
  subagent-graph chat "Compare solar and wind power for a small farm"
  subagent-graph chat --thread <id> "And what about hydro?"
  subagent-graph agents show assistant
  subagent-graph skills add ./my-skills/house-style
  subagent-graph mcp list
  subagent-graph files upload <thread> ./brief.pdf
  subagent-graph users add alice --name "Alice Example"
  subagent-graph tokens issue alice --label laptop`;

/** A mistake in the command line: printed with {@link USAGE}, exit code 2. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UsageError";
  }
}

/** Options every command that opens the store takes. */
export interface StoreOptions {
  uid: string;
  dataDir: string;
  /** Whether `--data` was given, so hints can repeat it. */
  dataGiven: boolean;
}

/** A parsed command line. */
export type Command =
  | { name: "help" }
  | {
      name: "chat";
      store: StoreOptions;
      agent: string | undefined;
      threadId: string | undefined;
      /** The question from the command line; undefined when none was given. */
      question: string | undefined;
    }
  | { name: "agents-list"; store: StoreOptions }
  | { name: "agents-show"; store: StoreOptions; slug: string }
  | { name: "demo"; store: StoreOptions }
  | { name: "serve"; store: StoreOptions; host: string; port: number; console: boolean }
  | { name: "studio"; store: StoreOptions; host: string; port: number }
  | { name: "skills-list"; store: StoreOptions }
  | { name: "skills-add"; store: StoreOptions; folder: string; replace: boolean }
  | { name: "skills-remove"; store: StoreOptions; skill: string }
  | { name: "mcp-list"; store: StoreOptions }
  | {
      name: "files-upload";
      store: StoreOptions;
      threadId: string;
      file: string;
      uploadName: string | undefined;
      agent: string | undefined;
    }
  | { name: "files-list"; store: StoreOptions; threadId: string; folder: string | undefined }
  | { name: "files-cat"; store: StoreOptions; threadId: string; path: string }
  | { name: "users-add"; store: StoreOptions; uid: string; displayName: string | undefined }
  | { name: "users-list"; store: StoreOptions }
  | { name: "tokens-issue"; store: StoreOptions; uid: string; label: string | undefined }
  | { name: "tokens-list"; store: StoreOptions; uid: string }
  | { name: "tokens-revoke"; store: StoreOptions; uid: string; tokenId: string };

const OPTIONS = {
  uid: { type: "string" },
  data: { type: "string" },
  agent: { type: "string" },
  thread: { type: "string" },
  replace: { type: "boolean" },
  port: { type: "string" },
  host: { type: "string" },
  name: { type: "string" },
  label: { type: "string" },
  "no-console": { type: "boolean" },
  help: { type: "boolean", short: "h" },
} as const;

/** Options only some commands understand; any other command rejects them rather than ignore them. */
const OPTION_COMMANDS: Record<
  "agent" | "thread" | "replace" | "name" | "label" | "port" | "host" | "no-console",
  readonly string[]
> = {
  agent: ["chat", "files"],
  thread: ["chat"],
  replace: ["skills"],
  name: ["users"],
  label: ["tokens"],
  port: ["serve", "studio"],
  host: ["serve", "studio"],
  "no-console": ["serve"],
};

/**
 * Parses the arguments after the script name.
 *
 * @throws UsageError naming the unknown command, the bad option or the missing argument.
 */
export function parseCommandLine(argv: readonly string[], env: NodeJS.ProcessEnv): Command {
  let parsed: ReturnType<typeof parseOptions>;
  try {
    parsed = parseOptions(argv);
  } catch (error) {
    // parseArgs' own messages name the option ("Unknown option '--x'", "Option '--uid <value>'
    // argument missing"); only its error type is replaced.
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
  const { values, positionals } = parsed;
  const [name, ...rest] = positionals;
  if (values.help || name === "help") return { name: "help" };
  if (name === undefined) throw new UsageError("no command given");

  const store = storeOptions(values, env);
  for (const [option, commands] of Object.entries(OPTION_COMMANDS)) {
    if (values[option as keyof typeof OPTION_COMMANDS] === undefined || commands.includes(name)) {
      continue;
    }
    throw new UsageError(
      `option --${option} is only for ${commands.map((c) => `"${c}"`).join(" and ")}, not "${name}"`,
    );
  }
  switch (name) {
    case "chat":
      return {
        name: "chat",
        store,
        agent: nonEmpty(values.agent, "--agent"),
        threadId: nonEmpty(values.thread, "--thread"),
        question: rest.length > 0 ? rest.join(" ") : undefined,
      };
    case "demo":
      noMoreArguments(name, rest);
      return { name: "demo", store };
    case "serve":
      noMoreArguments(name, rest);
      return {
        name: "serve",
        store,
        host: nonEmpty(values.host, "--host") ?? "127.0.0.1",
        port: portOf(nonEmpty(values.port, "--port") ?? (env.PORT?.trim() || "8787")),
        console: values["no-console"] !== true,
      };
    case "studio":
      noMoreArguments(name, rest);
      return {
        name: "studio",
        store,
        host: nonEmpty(values.host, "--host") ?? "127.0.0.1",
        port: portOf(nonEmpty(values.port, "--port") ?? (env.STUDIO_PORT?.trim() || "2025")),
      };
    case "agents":
      return agentsCommand(rest, store);
    case "skills":
      return skillsCommand(rest, store, values.replace === true);
    case "mcp":
      return mcpCommand(rest, store);
    case "files":
      return filesCommand(rest, store, nonEmpty(values.agent, "--agent"));
    case "users":
      return usersCommand(rest, store, nonEmpty(values.name, "--name"));
    case "tokens":
      return tokensCommand(rest, store, nonEmpty(values.label, "--label"));
    default:
      throw new UsageError(`unknown command "${name}"`);
  }
}

function parseOptions(argv: readonly string[]) {
  return parseArgs({ args: [...argv], options: OPTIONS, allowPositionals: true, strict: true });
}

function agentsCommand(rest: string[], store: StoreOptions): Command {
  const [sub, ...more] = rest;
  if (sub === "list") {
    noMoreArguments("agents list", more);
    return { name: "agents-list", store };
  }
  if (sub === "show") {
    const [slug, ...extra] = more;
    if (slug === undefined) throw new UsageError('"agents show" needs the slug of an agent');
    noMoreArguments("agents show <slug>", extra);
    return { name: "agents-show", store, slug };
  }
  throw new UsageError(
    sub === undefined
      ? '"agents" needs a subcommand: list or show <slug>'
      : `unknown subcommand "agents ${sub}": use list or show <slug>`,
  );
}

function skillsCommand(rest: string[], store: StoreOptions, replace: boolean): Command {
  const [sub, ...more] = rest;
  if (sub === "list") {
    noMoreArguments("skills list", more);
    return { name: "skills-list", store };
  }
  if (sub === "add" || sub === "remove") {
    const [argument, ...extra] = more;
    const what = sub === "add" ? "<folder>" : "<name>";
    if (argument === undefined)
      throw new UsageError(`"skills ${sub}" needs a ${what.slice(1, -1)}`);
    noMoreArguments(`skills ${sub} ${what}`, extra);
    if (sub === "remove" && replace) {
      throw new UsageError('option --replace is only for "skills add"');
    }
    return sub === "add"
      ? { name: "skills-add", store, folder: argument, replace }
      : { name: "skills-remove", store, skill: argument };
  }
  throw new UsageError(
    sub === undefined
      ? '"skills" needs a subcommand: list, add <folder> or remove <name>'
      : `unknown subcommand "skills ${sub}": use list, add <folder> or remove <name>`,
  );
}

function mcpCommand(rest: string[], store: StoreOptions): Command {
  const [sub, ...more] = rest;
  if (sub === "list") {
    noMoreArguments("mcp list", more);
    return { name: "mcp-list", store };
  }
  throw new UsageError(
    sub === undefined
      ? '"mcp" needs a subcommand: list'
      : `unknown subcommand "mcp ${sub}": use list`,
  );
}

function filesCommand(rest: string[], store: StoreOptions, agent: string | undefined): Command {
  const [sub, threadId, ...more] = rest;
  const shapes: Record<string, string> = {
    upload: "files upload <thread> <file> [name]",
    list: "files list <thread> [folder]",
    cat: "files cat <thread> <path>",
  };
  const shape = sub === undefined ? undefined : shapes[sub];
  if (!shape) {
    throw new UsageError(
      sub === undefined
        ? '"files" needs a subcommand: upload, list or cat'
        : `unknown subcommand "files ${sub}": use upload, list or cat`,
    );
  }
  if (threadId === undefined) throw new UsageError(`"${shape}" needs a thread id`);
  if (agent !== undefined && sub !== "upload") {
    throw new UsageError('option --agent is only for "files upload" among the files commands');
  }
  if (sub === "upload") {
    const [file, uploadName, ...extra] = more;
    if (file === undefined) throw new UsageError(`"${shape}" needs a local file`);
    noMoreArguments(shape, extra);
    return { name: "files-upload", store, threadId, file, uploadName, agent };
  }
  if (sub === "list") {
    const [folder, ...extra] = more;
    noMoreArguments(shape, extra);
    return { name: "files-list", store, threadId, folder };
  }
  const [path, ...extra] = more;
  if (path === undefined) throw new UsageError(`"${shape}" needs a path`);
  noMoreArguments(shape, extra);
  return { name: "files-cat", store, threadId, path };
}

function usersCommand(
  rest: string[],
  store: StoreOptions,
  displayName: string | undefined,
): Command {
  const [sub, ...more] = rest;
  if (sub !== "add" && sub !== "list") {
    throw new UsageError(
      sub === undefined
        ? '"users" needs a subcommand: add <uid> or list'
        : `unknown subcommand "users ${sub}": use add <uid> or list`,
    );
  }
  if (displayName !== undefined && sub !== "add") {
    throw new UsageError('option --name is only for "users add"');
  }
  if (sub === "list") {
    noMoreArguments("users list", more);
    return { name: "users-list", store };
  }
  const [uid, ...extra] = more;
  if (uid === undefined) throw new UsageError('"users add <uid>" needs a user id');
  noMoreArguments("users add <uid>", extra);
  return { name: "users-add", store, uid, displayName };
}

function tokensCommand(rest: string[], store: StoreOptions, label: string | undefined): Command {
  const [sub, uid, ...more] = rest;
  const shapes: Record<string, string> = {
    issue: "tokens issue <uid>",
    list: "tokens list <uid>",
    revoke: "tokens revoke <uid> <token-id>",
  };
  const shape = sub === undefined ? undefined : shapes[sub];
  if (!shape) {
    throw new UsageError(
      sub === undefined
        ? '"tokens" needs a subcommand: issue, list or revoke'
        : `unknown subcommand "tokens ${sub}": use issue, list or revoke`,
    );
  }
  if (label !== undefined && sub !== "issue") {
    throw new UsageError('option --label is only for "tokens issue"');
  }
  // The user is a positional argument here: these commands manage a user, they do not act as one.
  if (uid === undefined) throw new UsageError(`"${shape}" needs a user id`);
  if (sub === "issue") {
    noMoreArguments(shape, more);
    return { name: "tokens-issue", store, uid, label };
  }
  if (sub === "list") {
    noMoreArguments(shape, more);
    return { name: "tokens-list", store, uid };
  }
  const [tokenId, ...extra] = more;
  if (tokenId === undefined) {
    throw new UsageError(`"${shape}" needs a token id (see "tokens list ${uid}")`);
  }
  noMoreArguments(shape, extra);
  return { name: "tokens-revoke", store, uid, tokenId };
}

function portOf(text: string): number {
  const port = Number(text);
  if (!/^\d+$/.test(text) || port > 65535) {
    throw new UsageError(`port "${text}" is not a port number: use 0-65535 (0 picks a free one)`);
  }
  return port;
}

function storeOptions(
  values: { uid?: string | undefined; data?: string | undefined },
  env: NodeJS.ProcessEnv,
): StoreOptions {
  const data = nonEmpty(values.data, "--data");
  return {
    uid: nonEmpty(values.uid, "--uid") ?? DEMO_UID,
    dataDir: data ?? (env.SUBAGENT_GRAPH_DATA?.trim() || "data"),
    dataGiven: data !== undefined,
  };
}

function nonEmpty(value: string | undefined, option: string): string | undefined {
  if (value === undefined) return undefined;
  if (value.trim() === "") throw new UsageError(`option ${option} needs a non-empty value`);
  return value;
}

function noMoreArguments(command: string, extra: readonly string[]): void {
  if (extra.length > 0) {
    throw new UsageError(
      `"${command}" takes no further arguments, got ${extra.map((a) => `"${a}"`).join(" ")}`,
    );
  }
}
