import { parseArgs } from "node:util";
import { DEMO_UID } from "../agents/demo.js";
import {
  isWorkerCount,
  SERVER_ROLES,
  type ServerRole,
  workerCountProblem,
} from "../server/roles.js";

/** How the command line names itself: the installed bin, and the same in a clone. */
const BIN = "subagent-graph";
const IN_A_CLONE = "npm run cli --";

/** The options the command line takes. */
type OptionName = keyof typeof OPTIONS;

/** What `help` says about one command: its forms, options, notes and examples. */
interface CommandDoc {
  /** The command's first word. */
  name: string;
  /** Its forms (`agents list`, `agents show <slug>`), each with lines of explanation. */
  forms: readonly { usage: string; about: readonly string[] }[];
  /** The options it takes (`--help` aside), in the order they are listed. */
  options: readonly OptionName[];
  /** Paragraphs after the options (its help only). */
  notes?: readonly string[];
  /** Its example command lines, without the bin's name. */
  examples: readonly string[];
}

/** Every command, in the order `help` lists them. */
const COMMAND_DOCS: readonly CommandDoc[] = [
  {
    name: "serve",
    forms: [
      {
        usage: "serve",
        about: [
          "Serve the HTTP API and the web console at / (default 127.0.0.1:$PORT,",
          "else 8787). The first start creates the demo user and agents and prints",
          "the user's token once. The console is built first when web/dist is",
          "missing or older than web/ (npm run build does it ahead).",
        ],
      },
    ],
    options: ["data", "port", "host", "no-console", "role", "workers"],
    notes: [
      "On PostgreSQL (DATABASE_URL) every process of a fleet shares one queue of\nruns: --role api answers requests and queues runs, --role worker claims\nand runs them (serving /ok, /ready and /metrics only), --role all (the\ndefault) both. SIGTERM drains: no new claims, running runs finish within\nSUBAGENT_DRAIN_MS (default 30000) or go back to the queue.",
    ],
    examples: ["serve", "serve --port 9000 --no-console", "serve --role worker --workers 20"],
  },
  {
    name: "studio",
    forms: [
      {
        usage: "studio",
        about: [
          "Start the LangGraph dev server for LangGraph Studio (offline), on",
          "127.0.0.1:$STUDIO_PORT, else 2025; graphs read agents from the data dir.",
        ],
      },
    ],
    options: ["data", "port", "host"],
    examples: ["studio"],
  },
  {
    name: "chat",
    forms: [
      {
        usage: "chat [question]",
        about: [
          "Ask your default agent (or --agent) one question and print the answer.",
          "Without a question: an interactive chat on a terminal, or the whole of",
          "stdin as the question when it is piped.",
        ],
      },
    ],
    options: ["uid", "data", "agent", "thread"],
    notes: [
      'Only the demo user is created implicitly (with its agents); another --uid must have been\nadded with "users add" first. --thread takes a thread of yours ("threads list" lists them)\nand goes on with its agent unless --agent names another.',
      'When a run pauses for approval (an agent\'s interrupt_on), each pending request is shown\n(who asks, the tool, its arguments, the decisions allowed) and asked: approve, edit (new\narguments as one line of JSON) or reject (with an optional message for the model). Piped\nstdin gives the answers one per line. Without answers (the question was piped, or the\ninput ended) the thread stays paused and chat exits with 3; "chat --thread <id>" asks\nagain, and "threads show <id>" lists what waits.',
      'An agent with async_subagents may start background tasks, which go on after its answer.\nWhile the chat is open, one "[background]" line tells each task of its thread that ends\n(completed with the start of its result, or failed, cancelled, timed out with why);\n"threads show <id>" lists them all.',
    ],
    examples: [
      'chat "Compare solar and wind power for a small farm"',
      'chat --thread <id> "And what about hydro?"',
    ],
  },
  {
    name: "agents",
    forms: [
      {
        usage: "agents list",
        about: ["List your agents: kind (chat/subagent), slug, model, subagents."],
      },
      { usage: "agents show <slug>", about: ["Show one agent's settings."] },
    ],
    options: ["uid", "data"],
    examples: ["agents list", "agents show assistant"],
  },
  {
    name: "threads",
    forms: [
      {
        usage: "threads list",
        about: ["List your threads, most recently used first: id, agent, last use."],
      },
      {
        usage: "threads show <id>",
        about: [
          "Show one thread: its agent, last use, the requests for approval it",
          "waits on (id, the agent or subagent asking, tool, arguments), and its",
          "background tasks (id, subagent, status, task, result or what it waits for).",
        ],
      },
    ],
    options: ["uid", "data"],
    notes: [
      'A thread that waits for approval is answered with "chat --thread <id>": the chat asks\neach pending request (approve, edit the arguments as JSON, or reject with a message)\nbefore anything else, on a terminal or from answers piped one per line.',
    ],
    examples: ["threads list", "threads show <id>"],
  },
  {
    name: "skills",
    forms: [
      {
        usage: "skills list",
        about: ["List the installed skills (agents get them through context.skills)."],
      },
      {
        usage: "skills add <folder>",
        about: [
          "Install a skill folder (SKILL.md with name/description front matter);",
          "--replace replaces an installed skill of the same name.",
        ],
      },
      { usage: "skills remove <name>", about: ["Remove an installed skill."] },
    ],
    options: ["data", "replace"],
    examples: ["skills add ./my-skills/house-style"],
  },
  {
    name: "kb",
    forms: [
      { usage: "kb list", about: ["List the knowledge bases you may read."] },
      {
        usage: "kb create <name>",
        about: [
          "Create a knowledge base (--description says what it holds; --embedding-model",
          "and --embedding-dimensions add vector search beside full-text search).",
        ],
      },
      {
        usage: "kb update <kb>",
        about: [
          "Change a knowledge base's --description or its embedder: --embedding-model",
          "with --embedding-dimensions (and optionally --embedding-base-url,",
          "--embedding-key-env) replace it, --no-embedding turns vectors off. A new",
          "model, length or URL reindexes its files: each file's vectors are followed",
          "until ready or failed (exit 1 if any failed).",
        ],
      },
      {
        usage: "kb add <kb> <paths…>",
        about: [
          "Add files (txt, md, html, pdf, docx; a folder adds the files in it) and",
          "show each file's progress until it is indexed or failed.",
        ],
      },
      { usage: "kb files <kb>", about: ["List a knowledge base's files and their status."] },
      {
        usage: "kb search <query…>",
        about: ["Search your knowledge bases (--kb narrows to one): best passages first."],
      },
      { usage: "kb rm <kb>", about: ["Delete a knowledge base with its files."] },
    ],
    options: [
      "uid",
      "data",
      "description",
      "embedding-model",
      "embedding-dimensions",
      "embedding-base-url",
      "embedding-key-env",
      "no-embedding",
      "kb",
    ],
    examples: [
      'kb create handbook --description "Company rules"',
      "kb create papers --embedding-model bge-m3 --embedding-dimensions 1024 --embedding-base-url http://127.0.0.1:8000/v1",
      "kb add handbook ./docs/leave.pdf ./docs/policies",
      "kb update papers --embedding-model text-embedding-3-small --embedding-dimensions 1536",
      "kb update papers --no-embedding",
      'kb search "how much notice for a vacation"',
    ],
  },
  {
    name: "mcp",
    forms: [
      {
        usage: "mcp list",
        about: [
          "List the MCP servers (<data>/mcp.json or $SUBAGENT_GRAPH_MCP): each one is",
          "connected to show its status and its tools (mcp_<server>_<tool>).",
        ],
      },
    ],
    options: ["data"],
    examples: ["mcp list"],
  },
  {
    name: "files",
    forms: [
      {
        usage: "files upload <thread> <file> [name]",
        about: [
          "Add a local file to a thread's uploads (a new thread id is claimed for",
          "your default agent, or --agent), where its agents can read it.",
        ],
      },
      {
        usage: "files list <thread> [folder]",
        about: ["List a thread's files (default: its outputs)."],
      },
      {
        usage: "files cat <thread> <path>",
        about: ["Print one of a thread's files, e.g. /home/gem/user-data/outputs/x.md."],
      },
    ],
    options: ["uid", "data", "agent"],
    examples: ["files upload <thread> ./brief.pdf", "files list <thread>"],
  },
  {
    name: "users",
    forms: [
      {
        usage: "users add <uid>",
        about: ["Add a user who can be given API tokens (--name: a display name)."],
      },
      { usage: "users list", about: ["List the users."] },
    ],
    options: ["data", "name"],
    examples: ['users add alice --name "Alice Example"'],
  },
  {
    name: "tokens",
    forms: [
      {
        usage: "tokens issue <uid>",
        about: [
          "Issue an API token for the HTTP server (--label: what it is for). The",
          "token is printed once and cannot be shown again.",
        ],
      },
      {
        usage: "tokens list <uid>",
        about: ["List a user's tokens (ids, labels, last use; never the tokens)."],
      },
      {
        usage: "tokens revoke <uid> <token-id>",
        about: ['Revoke a token at once (its id is in "tokens list").'],
      },
    ],
    options: ["data", "label"],
    examples: ["tokens issue alice --label laptop"],
  },
  {
    name: "demo",
    forms: [
      {
        usage: "demo",
        about: ["Create the demo agents if needed and run a sample question."],
      },
    ],
    options: ["uid", "data"],
    examples: ["demo"],
  },
  {
    name: "help",
    forms: [
      {
        usage: "help [command]",
        about: ["Show this text, or one command's (also: <command> --help)."],
      },
    ],
    options: [],
    examples: ["help chat"],
  },
];

/** One line per option, as `help` lists them. */
const OPTION_DOCS: Readonly<Record<OptionName, { flag: string; about: string }>> = {
  uid: { flag: "--uid <uid>", about: `The user to act as (default: ${DEMO_UID}).` },
  data: {
    flag: "--data <dir>",
    about: "Data folder (default: $SUBAGENT_GRAPH_DATA, else ./data).",
  },
  agent: {
    flag: "--agent <slug>",
    about: "chat, files upload: the agent to use (default: your default agent).",
  },
  thread: {
    flag: "--thread <id>",
    about: "chat: continue this thread (its id is printed after each answer).",
  },
  replace: { flag: "--replace", about: "skills add: replace an installed skill of the same name." },
  port: {
    flag: "--port <n>",
    about: "serve / studio: the port (default $PORT, else 8787 / $STUDIO_PORT, else 2025).",
  },
  host: {
    flag: "--host <address>",
    about: "serve / studio: the address to listen on (default 127.0.0.1).",
  },
  "no-console": {
    flag: "--no-console",
    about: "serve: the API only (no web console, nothing built).",
  },
  role: {
    flag: "--role <all|api|worker>",
    about: "serve: what this process does in a fleet (default $SUBAGENT_ROLE, else all).",
  },
  workers: {
    flag: "--workers <n>",
    about: "serve: queued runs this process runs at once (default $SUBAGENT_WORKERS, else 10).",
  },
  name: { flag: "--name <text>", about: "users add: the user's display name (default: the uid)." },
  label: {
    flag: "--label <text>",
    about: 'tokens issue: what the token is for (default: "default").',
  },
  description: {
    flag: "--description <text>",
    about: "kb create / update: what the knowledge base holds (agents see it).",
  },
  "embedding-model": {
    flag: "--embedding-model <name>",
    about: "kb create / update: an OpenAI-compatible embedding model for hybrid search.",
  },
  "embedding-dimensions": {
    flag: "--embedding-dimensions <n>",
    about: "kb create / update: that model's vector length (checked on the first batch).",
  },
  "embedding-base-url": {
    flag: "--embedding-base-url <url>",
    about: "kb create / update: its API (…/v1; default $OPENAI_BASE_URL, else OpenAI's).",
  },
  "embedding-key-env": {
    flag: "--embedding-key-env <NAME>",
    about: "kb create / update: the variable with its API key (default OPENAI_API_KEY).",
  },
  "no-embedding": {
    flag: "--no-embedding",
    about: "kb update: drop the embedder and its vectors (words-only search).",
  },
  kb: { flag: "--kb <name>", about: "kb search: search only this knowledge base." },
  help: { flag: "-h, --help", about: "Show this text." },
};

/** The slash commands of the interactive chat, as `/help` there and `help chat` list them. */
export const CHAT_COMMANDS_HELP = `In the interactive chat:
  /help                This list.
  /new                 Start a new thread.
  /exit, /quit         Quit (so does Ctrl-D).
  Ctrl-C               Cancel a running answer; a second Ctrl-C quits.`;

const MODELS_NOTE = `Models: agents without a model use OPENAI_API_KEY (openai:gpt-4o-mini), or OPENAI_BASE_URL for
a local OpenAI-compatible server, or SUBAGENT_GRAPH_MODEL; with none of them set, a
deterministic offline model answers, labelled [offline model].`;

/** A form and its explanation, aligned as `help` lists them. */
function formLines(form: CommandDoc["forms"][number]): string[] {
  const indent = " ".repeat(23);
  const [first = "", ...rest] = form.about;
  const head =
    form.usage.length <= 20
      ? [`  ${form.usage.padEnd(20)} ${first}`]
      : [`  ${form.usage}`, `${indent}${first}`];
  return [...head, ...rest.map((line) => `${indent}${line}`)];
}

/** An option and its explanation; a flag too long for its column puts it on the next line. */
function optionLine(name: OptionName): string {
  const { flag, about } = OPTION_DOCS[name];
  return flag.length <= 20
    ? `  ${flag.padEnd(21)}${about}`
    : `  ${flag}\n${" ".repeat(23)}${about}`;
}

/** The usage text of `help`, and of every usage error. */
export const USAGE = [
  `Usage: ${BIN} <command> [options]`,
  `       (in a clone of the repository: ${IN_A_CLONE} <command> [options])`,
  "",
  "Commands:",
  ...COMMAND_DOCS.flatMap((doc) => doc.forms.flatMap(formLines)),
  "",
  "Options:",
  ...(Object.keys(OPTION_DOCS) as OptionName[]).map(optionLine),
  "",
  CHAT_COMMANDS_HELP,
  "",
  MODELS_NOTE,
  "",
  "Examples:",
  ...COMMAND_DOCS.filter((doc) => doc.name !== "help").flatMap((doc) =>
    doc.examples.slice(0, 1).map((example) => `  ${BIN} ${example}`),
  ),
].join("\n");

/** The commands `help <command>` and `<command> --help` know. */
export const COMMAND_NAMES: readonly string[] = COMMAND_DOCS.map((doc) => doc.name);

/**
 * The help of one command: its forms, the options it takes, notes and examples.
 *
 * @throws UsageError when `name` is not a command.
 */
export function commandHelp(name: string): string {
  const doc = COMMAND_DOCS.find((candidate) => candidate.name === name);
  if (!doc) throw unknownCommand(name);
  const forms = doc.forms.map((form) => form.usage);
  const options: OptionName[] = [...doc.options, "help"];
  return [
    `Usage: ${forms.map((form, index) => `${index === 0 ? "" : "       "}${BIN} ${form}${doc.options.length > 0 ? " [options]" : ""}`).join("\n")}`,
    `       (in a clone of the repository: ${IN_A_CLONE} ${doc.name} …)`,
    "",
    ...doc.forms.flatMap(formLines),
    "",
    "Options:",
    ...options.map(optionLine),
    ...(doc.notes ?? []).flatMap((note) => ["", note]),
    ...(doc.name === "chat" ? ["", CHAT_COMMANDS_HELP, "", MODELS_NOTE] : []),
    "",
    "Examples:",
    ...doc.examples.map((example) => `  ${BIN} ${example}`),
  ].join("\n");
}

function unknownCommand(name: string): UsageError {
  return new UsageError(`unknown command "${name}": use one of ${COMMAND_NAMES.join(", ")}`);
}

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
  /** The whole usage, or (`topic`) one command's help. */
  | { name: "help"; topic: string | undefined }
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
  | { name: "threads-list"; store: StoreOptions }
  | { name: "threads-show"; store: StoreOptions; threadId: string }
  | { name: "demo"; store: StoreOptions }
  | ({ name: "serve" } & ServeOptions)
  | { name: "studio"; store: StoreOptions; host: string; port: number }
  | { name: "skills-list"; store: StoreOptions }
  | { name: "skills-add"; store: StoreOptions; folder: string; replace: boolean }
  | { name: "skills-remove"; store: StoreOptions; skill: string }
  | { name: "mcp-list"; store: StoreOptions }
  | { name: "kb-list"; store: StoreOptions }
  | {
      name: "kb-create";
      store: StoreOptions;
      kb: string;
      description: string | undefined;
      /** Embedder settings (the schema judges what the options cannot); none: undefined. */
      embedder: Record<string, unknown> | undefined;
    }
  | {
      name: "kb-update";
      store: StoreOptions;
      kb: string;
      description: string | undefined;
      /** The new embedder (`{}`: vectors off; the schema judges the rest); undefined: unchanged. */
      embedder: Record<string, unknown> | undefined;
    }
  | { name: "kb-add"; store: StoreOptions; kb: string; paths: string[] }
  | { name: "kb-files"; store: StoreOptions; kb: string }
  | { name: "kb-search"; store: StoreOptions; query: string; kb: string | undefined }
  | { name: "kb-rm"; store: StoreOptions; kb: string }
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

/** What `serve` listens on and does (`cli/serve.ts`). */
export interface ServeOptions {
  store: StoreOptions;
  host: string;
  port: number;
  /** Serve the web console at `/` (built first when missing or stale). */
  console: boolean;
  /** What this process does in a fleet on PostgreSQL (`--role`). */
  role: ServerRole;
  /** Queued runs this process runs at once (`--workers`). */
  workers: number;
}

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
  role: { type: "string" },
  workers: { type: "string" },
  description: { type: "string" },
  "embedding-model": { type: "string" },
  "embedding-dimensions": { type: "string" },
  "embedding-base-url": { type: "string" },
  "embedding-key-env": { type: "string" },
  "no-embedding": { type: "boolean" },
  kb: { type: "string" },
  help: { type: "boolean", short: "h" },
} as const;

/** Options only some commands understand; any other command rejects them rather than ignore them. */
const OPTION_COMMANDS: Record<
  | "agent"
  | "thread"
  | "replace"
  | "name"
  | "label"
  | "port"
  | "host"
  | "no-console"
  | "role"
  | "workers"
  | "description"
  | "embedding-model"
  | "embedding-dimensions"
  | "embedding-base-url"
  | "embedding-key-env"
  | "no-embedding"
  | "kb",
  readonly string[]
> = {
  description: ["kb"],
  "embedding-model": ["kb"],
  "embedding-dimensions": ["kb"],
  "embedding-base-url": ["kb"],
  "embedding-key-env": ["kb"],
  "no-embedding": ["kb"],
  kb: ["kb"],
  agent: ["chat", "files"],
  thread: ["chat"],
  replace: ["skills"],
  name: ["users"],
  label: ["tokens"],
  port: ["serve", "studio"],
  host: ["serve", "studio"],
  "no-console": ["serve"],
  role: ["serve"],
  workers: ["serve"],
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
  if (name === "help") {
    const [topic, ...extra] = rest;
    noMoreArguments("help [command]", extra);
    return helpOn(topic);
  }
  // `<command> … --help`: that command's help, whatever else the line holds.
  if (values.help) return helpOn(name);
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
        role: roleOf(nonEmpty(values.role, "--role") ?? (env.SUBAGENT_ROLE?.trim() || "all")),
        workers: workersOf(
          nonEmpty(values.workers, "--workers") ?? (env.SUBAGENT_WORKERS?.trim() || "10"),
        ),
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
    case "threads":
      return threadsCommand(rest, store);
    case "skills":
      return skillsCommand(rest, store, values.replace === true);
    case "mcp":
      return mcpCommand(rest, store);
    case "kb":
      return kbCommand(rest, store, {
        description: values.description,
        embedder: values["no-embedding"] ? withoutEmbedder(values) : embedderOptions(values),
        noEmbedding: values["no-embedding"] === true,
        kb: nonEmpty(values.kb, "--kb"),
      });
    case "files":
      return filesCommand(rest, store, nonEmpty(values.agent, "--agent"));
    case "users":
      return usersCommand(rest, store, nonEmpty(values.name, "--name"));
    case "tokens":
      return tokensCommand(rest, store, nonEmpty(values.label, "--label"));
    default:
      throw unknownCommand(name);
  }
}

function helpOn(topic: string | undefined): Command {
  if (topic !== undefined && !COMMAND_NAMES.includes(topic)) throw unknownCommand(topic);
  return { name: "help", topic };
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

function threadsCommand(rest: string[], store: StoreOptions): Command {
  const [sub, ...more] = rest;
  if (sub === "list") {
    noMoreArguments("threads list", more);
    return { name: "threads-list", store };
  }
  if (sub === "show") {
    const [threadId, ...extra] = more;
    if (threadId === undefined) {
      throw new UsageError('"threads show" needs a thread id (see "threads list")');
    }
    noMoreArguments("threads show <id>", extra);
    return { name: "threads-show", store, threadId };
  }
  throw new UsageError(
    sub === undefined
      ? '"threads" needs a subcommand: list or show <id>'
      : `unknown subcommand "threads ${sub}": use list or show <id>`,
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

function kbCommand(
  rest: string[],
  store: StoreOptions,
  options: {
    description: string | undefined;
    embedder: Record<string, unknown> | undefined;
    noEmbedding: boolean;
    kb: string | undefined;
  },
): Command {
  const [sub, ...more] = rest;
  const subs =
    "list, create <name>, update <kb>, add <kb> <paths…>, files <kb>, search <query…> or rm <kb>";
  const changes = sub === "create" || sub === "update";
  if (options.description !== undefined && !changes) {
    throw new UsageError('option --description is only for "kb create" and "kb update"');
  }
  if (options.noEmbedding && sub !== "update") {
    throw new UsageError(
      'option --no-embedding is only for "kb update" (a new knowledge base has no embedder unless --embedding-model gives it one)',
    );
  }
  if (options.embedder !== undefined && !changes) {
    throw new UsageError('options --embedding-… are only for "kb create" and "kb update"');
  }
  if (options.kb !== undefined && sub !== "search") {
    throw new UsageError('option --kb is only for "kb search"');
  }
  if (sub === "list") {
    noMoreArguments("kb list", more);
    return { name: "kb-list", store };
  }
  if (sub === "search") {
    if (more.length === 0) throw new UsageError('"kb search" needs a query');
    return { name: "kb-search", store, query: more.join(" "), kb: options.kb };
  }
  if (sub === "update") {
    const [kb, ...extra] = more;
    if (kb === undefined) throw new UsageError('"kb update" needs a knowledge base (name or id)');
    noMoreArguments("kb update <kb>", extra);
    const { embedder } = options;
    if (options.description === undefined && embedder === undefined) {
      throw new UsageError(
        '"kb update <kb>" needs something to change: --description, --embedding-model with --embedding-dimensions, or --no-embedding',
      );
    }
    return { name: "kb-update", store, kb, description: options.description, embedder };
  }
  if (sub === "create" || sub === "files" || sub === "rm" || sub === "add") {
    const [kb, ...extra] = more;
    const what = sub === "create" ? "a name" : "a knowledge base (name or id)";
    if (kb === undefined) throw new UsageError(`"kb ${sub}" needs ${what}`);
    if (sub === "add") {
      if (extra.length === 0) throw new UsageError('"kb add <kb> <paths…>" needs files or folders');
      return { name: "kb-add", store, kb, paths: extra };
    }
    noMoreArguments(`kb ${sub} ${sub === "create" ? "<name>" : "<kb>"}`, extra);
    if (sub === "create") {
      return {
        name: "kb-create",
        store,
        kb,
        description: options.description,
        embedder: options.embedder,
      };
    }
    return sub === "files" ? { name: "kb-files", store, kb } : { name: "kb-rm", store, kb };
  }
  throw new UsageError(
    sub === undefined
      ? `"kb" needs a subcommand: ${subs}`
      : `unknown subcommand "kb ${sub}": use ${subs}`,
  );
}

/** The option that sets each embedder field (`kb create`, `kb update`). */
export const EMBEDDER_FLAGS = {
  model: "--embedding-model",
  dimensions: "--embedding-dimensions",
  base_url: "--embedding-base-url",
  api_key_env: "--embedding-key-env",
} as const;

/**
 * `--no-embedding`: the embedder `{}`.
 *
 * @throws UsageError when an `--embedding-…` option is given too, naming it.
 */
function withoutEmbedder(values: Partial<Record<string, unknown>>): Record<string, never> {
  const given = Object.values(EMBEDDER_FLAGS).filter((flag) => values[flag.slice(2)] !== undefined);
  if (given.length > 0) {
    throw new UsageError(
      `option --no-embedding turns vectors off, so it cannot go with ${given.join(", ")}: give --no-embedding alone, or the new embedder without it`,
    );
  }
  return {};
}

/**
 * The `--embedding-…` options as embedder settings, or undefined when none is given. What the
 * command line alone can judge is judged here, naming the option: the dimensions must be a
 * whole number above 0, and model and dimensions come together. The rest (a length over the
 * limit, a URL, a variable's name) is the knowledge base schema's to judge.
 *
 * @throws UsageError naming the option, the value and the fix.
 */
function embedderOptions(values: {
  "embedding-model"?: string | undefined;
  "embedding-dimensions"?: string | undefined;
  "embedding-base-url"?: string | undefined;
  "embedding-key-env"?: string | undefined;
}): Record<string, unknown> | undefined {
  const dimensions = values["embedding-dimensions"];
  if (dimensions !== undefined && !/^[1-9]\d{0,8}$/.test(dimensions.trim())) {
    throw new UsageError(
      `option --embedding-dimensions "${dimensions}" is not a whole number above 0: give the length of the model's vectors, e.g. --embedding-dimensions 1536`,
    );
  }
  const settings = {
    model: nonEmpty(values["embedding-model"], "--embedding-model"),
    dimensions: dimensions === undefined ? undefined : Number(dimensions),
    base_url: nonEmpty(values["embedding-base-url"], "--embedding-base-url"),
    api_key_env: nonEmpty(values["embedding-key-env"], "--embedding-key-env"),
  };
  const given = Object.entries(settings).filter(([, value]) => value !== undefined);
  if (given.length === 0) return undefined;
  if (settings.model === undefined || settings.dimensions === undefined) {
    const missing = settings.model === undefined ? "--embedding-model" : "--embedding-dimensions";
    throw new UsageError(
      `option ${missing} is missing: an embedder needs --embedding-model and --embedding-dimensions together (--embedding-base-url and --embedding-key-env are optional)`,
    );
  }
  return Object.fromEntries(given);
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

/** @throws UsageError unless `text` is a role of `serve` */
function roleOf(text: string): ServerRole {
  if (!(SERVER_ROLES as readonly string[]).includes(text)) {
    throw new UsageError(`--role: "${text}" is not a role: use one of ${SERVER_ROLES.join(", ")}`);
  }
  return text as ServerRole;
}

/** @throws UsageError unless `text` is a whole number of runs a process may run at once */
function workersOf(text: string): number {
  const workers = Number(text);
  if (!/^\d+$/.test(text) || !isWorkerCount(workers)) {
    throw new UsageError(workerCountProblem("--workers", `"${text}"`));
  }
  return workers;
}
