/**
 * The approvals scenario the durability tests run against real server processes: a main agent
 * `boss` whose one gated tool is an MCP `send` (`mcp_mail_send`, served by
 * `mcp-fixture-server.ts`, which logs every call to a file any process appends to), and which
 * in the same turn delegates to `writer` subagents (each gating its own `mcp_mail_send`) and one
 * `reader` (no gate). A fake OpenAI server answers all three agents and counts their requests.
 *
 * One turn: boss calls `mcp_mail_send("from boss")` and a `task` per writer plus one for the
 * reader (the boss's gate pauses first); each writer calls `mcp_mail_send("from <description>")`
 * (its gate pauses it), then answers "<description> written"; the reader answers "read it";
 * boss ends with "final answer".
 */
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@langchain/langgraph-sdk";
import { createRuntime, type Runtime } from "../../runtime.js";
import {
  type ChatCompletionRequestBody,
  type FakeOpenAIServer,
  type FakeReply,
  startFakeOpenAIServer,
} from "./fake-openai-server.js";
import { fixtureServer } from "./mcp-servers.js";
import { mainAgentPayload, subagentPayload } from "./runtime-fixture.js";
import { cleanEnv, type ServerProcess, startServerProcess } from "./server-process.js";
import { until } from "./until.js";

/** The gated tool's name, as agents and requests name it. */
export const SEND = "mcp_mail_send";

/** What `runs.wait` and `runs.join` answer: the thread's values, plus `__interrupt__` if paused. */
export interface GatedValues {
  messages: { content: unknown }[];
  subagent_runs?: { subagent_type: string; description: string; status: string }[];
  __interrupt__?: {
    id: string;
    value: {
      actionRequests: { name: string; args: unknown }[];
      subagent?: { subagent_type: string; description: string };
    };
  }[];
}

/** An SDK answer read as {@link GatedValues}; anything but an object with messages fails. */
export function gatedValues(answer: unknown): GatedValues {
  const messages = (answer as { messages?: unknown } | null)?.messages;
  if (!Array.isArray(messages)) {
    throw new Error(`expected the thread's values, got ${JSON.stringify(answer)}`);
  }
  return answer as GatedValues;
}

/** A running {@link startGatedMail} scenario. */
export interface GatedMail {
  fake: FakeOpenAIServer;
  /** The environment every server process gets (models, the MCP server, `extraEnv`). */
  env: NodeJS.ProcessEnv;
  token: string;
  bossId: string;
  /**
   * A runtime on the same store, for records and checkpoints as they are stored (on PostgreSQL;
   * on SQLite it is closed once the agents are made, as the server processes own the files).
   */
  admin: Runtime | undefined;
  /** Writers whose second model call waits until this is emptied (their description). */
  hanging: Set<string>;
  /** Every `mcp_mail_send` that ran, in order, in any process (`"from boss"`, …). */
  sent(): Promise<string[]>;
  /**
   * Model requests answered (not cut by a dying client) for `agent`: "boss", "reader", or a
   * writer's description.
   */
  answered(agent: string): number;
  /** Starts `serve` on `dataDir` (a new folder when omitted) with `serveArgs`. */
  start(options?: { dataDir?: string; serveArgs?: string[] }): Promise<ServerProcess>;
  sdk(server: ServerProcess): Client;
  close(): Promise<void>;
}

const firstUserText = (request: ChatCompletionRequestBody) =>
  String(request.messages.find((message) => message.role === "user")?.content ?? "");
const hasToolResult = (request: ChatCompletionRequestBody) =>
  request.messages.some((message) => message.role === "tool");

/**
 * Starts the fake model server and the MCP log, and creates alice, her token and the agents
 * (`writers` are the writer task descriptions boss's turn makes) in the store `extraEnv` names
 * (`DATABASE_URL`), else in `dataDir`'s SQLite files.
 */
export async function startGatedMail(options: {
  writers: string[];
  dataDir?: string;
  extraEnv?: NodeJS.ProcessEnv;
}): Promise<GatedMail> {
  const { writers } = options;
  const dirs: string[] = [];
  const servers: ServerProcess[] = [];
  const work = await mkdtemp(join(tmpdir(), "gated-mail-"));
  dirs.push(work);
  const log = join(work, "sent.log");
  await writeFile(log, "");
  const toolsFile = join(work, "tools.json");
  await writeFile(toolsFile, JSON.stringify(["send"]));
  const mail = fixtureServer(toolsFile);
  const mcpFile = join(work, "mcp.json");
  await writeFile(
    mcpFile,
    JSON.stringify({
      servers: {
        mail: { ...mail, env: { ...("env" in mail ? mail.env : {}), MCP_FIXTURE_LOG: log } },
      },
    }),
  );
  const hanging = new Set<string>();
  const fake = await startFakeOpenAIServer((request): FakeReply => {
    if (request.model === "boss-model") {
      if (hasToolResult(request)) return { content: "final answer" };
      return {
        content: "",
        toolCalls: [
          { name: SEND, arguments: { text: "from boss" } },
          ...[...writers, "read"].map((description) => ({
            name: "task",
            arguments: { description, subagent_type: description === "read" ? "reader" : "writer" },
          })),
        ],
      };
    }
    if (request.model === "reader-model") return { content: "read it" };
    const description = firstUserText(request);
    if (!hasToolResult(request)) {
      return {
        content: "",
        toolCalls: [{ name: SEND, arguments: { text: `from ${description}` } }],
      };
    }
    if (hanging.has(description)) return { content: `${description} written`, delayMs: 120_000 };
    return { content: `${description} written` };
  });
  const env = cleanEnv({
    OPENAI_API_KEY: "sk-test",
    OPENAI_BASE_URL: fake.url,
    OPENAI_MAX_RETRIES: "0",
    SUBAGENT_GRAPH_MCP: mcpFile,
    ...options.extraEnv,
  });
  const adminDir = options.dataDir ?? (await mkdtemp(join(tmpdir(), "gated-mail-admin-")));
  if (!options.dataDir) dirs.push(adminDir);
  const admin = await createRuntime({ dataDir: adminDir, env });
  await admin.users.add("alice");
  const { token } = await admin.users.issueToken("alice");
  const gate = { interrupt_on: { [SEND]: true }, mcp_servers: ["mail"] };
  await admin.agents.create("alice", subagentPayload("writer", "openai:writer-model", gate));
  await admin.agents.create(
    "alice",
    subagentPayload("reader", "openai:reader-model", { mcp_servers: [] }),
  );
  const boss = await admin.agents.create(
    "alice",
    mainAgentPayload("boss", "openai:boss-model", ["writer", "reader"], gate),
  );
  const keepAdmin = options.dataDir === undefined;
  if (!keepAdmin) await admin.close();
  const aborted = () => new Set(fake.aborted);
  return {
    fake,
    env,
    token,
    bossId: boss.id,
    admin: keepAdmin ? admin : undefined,
    hanging,
    async sent() {
      const text = await readFile(log, "utf8");
      return text
        .split("\n")
        .filter((line) => line !== "")
        .map((line) => line.replace(/^send /, ""));
    },
    answered(agent) {
      const cut = aborted();
      return fake.requests.filter((request, index) => {
        if (cut.has(index)) return false;
        if (agent === "boss") return request.model === "boss-model";
        if (agent === "reader") return request.model === "reader-model";
        return request.model === "writer-model" && firstUserText(request) === agent;
      }).length;
    },
    async start(startOptions = {}) {
      let dataDir = startOptions.dataDir;
      if (!dataDir) {
        dataDir = await mkdtemp(join(tmpdir(), "gated-mail-server-"));
        dirs.push(dataDir);
      }
      const server = startServerProcess(dataDir, env, { serveArgs: startOptions.serveArgs ?? [] });
      servers.push(server);
      await until(() => server.base() !== "" || server.child.exitCode !== null, 60_000);
      if (server.base() === "") throw new Error(`the server did not start:\n${server.output()}`);
      return server;
    },
    sdk: (server) => new Client({ apiUrl: server.base(), apiKey: token, defaultHeaders: {} }),
    async close() {
      hanging.clear();
      for (const server of servers) server.child.kill("SIGKILL");
      await Promise.all(servers.map((server) => server.exited));
      if (keepAdmin) await admin.close();
      await fake.close();
      for (const dir of dirs) await rm(dir, { recursive: true, force: true });
    },
  };
}

/** Kills `server` as a crash does (SIGKILL) and waits for it to be gone. */
export async function crash(server: ServerProcess): Promise<void> {
  server.child.kill("SIGKILL");
  await server.exited;
}
