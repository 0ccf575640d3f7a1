import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { type BaseMessage, HumanMessage, SystemMessage } from "@langchain/core/messages";
import { type StructuredTool, type StructuredToolInterface, tool } from "@langchain/core/tools";
import { type BaseCheckpointSaver, MemorySaver } from "@langchain/langgraph-checkpoint";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import Database from "better-sqlite3";
import { createDeepAgent } from "deepagents";
import { createAgent } from "langchain";
import { z } from "zod";
import type { ProcessSettings } from "../../agents/limits.js";
import { ForkSafePostgresSaver } from "../../checkpoints/postgres-saver.js";
import { DeltaHistorySqliteSaver } from "../../checkpoints/sqlite-saver.js";
import type { RunResult } from "../../runs/events.js";
import { createRuntime, type Runtime } from "../../runtime.js";
import { mainAgentPayload, subagentPayload } from "../../test/support/runtime-fixture.js";
import { messageText } from "../../util/message-text.js";
import { freshPostgresDatabase } from "./postgres.js";
import { CHILD_NAME, CHILD_PROMPT, MAIN_PROMPT } from "./scripts.js";

/** The checkpoint savers every saver-dependent scenario runs on. */
export type SaverName = "memory" | "sqlite" | "postgres";
export const SAVERS: readonly SaverName[] = ["memory", "sqlite", "postgres"];

/** The savers a comma-separated variable names, in the bench's order; undefined when unset. */
export function namedSavers(names: string | undefined): SaverName[] | undefined {
  const named = names?.split(",").map((name) => name.trim());
  return named && SAVERS.filter((saver) => named.includes(saver));
}

/** The bench user and agents. */
export const UID = "bench";
export const MAIN_SLUG = "boss";
/** What the subagent record's description says (also Deep Agents' subagent description). */
export const CHILD_DESCRIPTION = subagentPayload(CHILD_NAME, "x").description;

/** Our runtime with the bench agents: `boss` (main, may call `worker`) and `worker`. */
export interface OurSystem {
  runtime: Runtime;
  saver: BaseCheckpointSaver;
  /**
   * The same storage through the saver class without our `Send` compaction (memory: the same
   * saver): what a Deep Agents user, or a bare createAgent, would run on. Their runs go there.
   */
  stockSaver: BaseCheckpointSaver;
  saverName: SaverName;
  dataDir: string;
  /** The checkpoint database's URL (Postgres saver only). */
  postgresUrl: string | undefined;
  warnings: string[];
  /** One run of `boss` on a fresh thread (or `threadId`). */
  run(input: string, threadId?: string): Promise<RunResult>;
  dispose(): Promise<void>;
}

export interface OurSystemOptions {
  saver: SaverName;
  mainModel: BaseChatModel;
  childModel: BaseChatModel;
  /** Process-wide limits (e.g. `max_parallel_subagents`). */
  limits?: Partial<ProcessSettings>;
  /** The main agent's own tools (`context.tools`); default none; `"all"`: left unset. */
  mainTools?: string[] | "all";
  /** The subagent's own tools; default none; `"all"`: left unset (every registered tool). */
  childTools?: string[] | "all";
  /** Extra tools to register. */
  tools?: StructuredToolInterface[];
  /** Extra models to register, by spec name (e.g. `bench:writer`). */
  models?: Record<string, BaseChatModel>;
  /**
   * The main agent's subagents in place of the one `worker`: each a slug, a model spec and extra
   * `context` (its `tools`, `interrupt_on`…; `tools` unset = every registered tool).
   */
  subagents?: BenchSubagent[];
  /**
   * The agent store: a SQLite database in memory (default, the same for every saver), or
   * `"data-dir"`: the runtime's default `<dataDir>/agents.sqlite`, as a deployed service has it.
   */
  store?: "memory" | "data-dir";
  /**
   * How the agents' append-only channels (`messages`, `subagent_runs`) are checkpointed:
   * `"delta"` (writes plus periodic snapshots) or `"full"` (LangGraph's stock storage, the whole
   * value in every checkpoint). Default: the runtime's default.
   */
  checkpointStorage?: "full" | "delta";
  /** Updates of a delta channel between full snapshots. Default: the runtime's default. */
  deltaSnapshotFrequency?: number;
}

/** A subagent record of the bench (see {@link OurSystemOptions.subagents}). */
export interface BenchSubagent {
  slug: string;
  /** A model spec registered with the runtime. */
  model: string;
  /** Extra `config_json.context` entries. */
  context?: Record<string, unknown>;
}

/**
 * Our runtime on a fresh temp data dir, offline, on the named saver as a user opens it (Postgres:
 * `DATABASE_URL` naming a fresh database of the private cluster, so the runtime opens its own
 * saver), with the agent store in memory unless told otherwise. Undefined when the saver is
 * Postgres and it is not installed.
 */
export async function openOurs(options: OurSystemOptions): Promise<OurSystem | undefined> {
  let postgresUrl: string | undefined;
  if (options.saver === "postgres") {
    postgresUrl = await freshPostgresDatabase();
    if (!postgresUrl) return undefined;
  }
  const dataDir = mkdtempSync(join(tmpdir(), "subagent-graph-bench-"));
  const warnings: string[] = [];
  const runtime = await createRuntime({
    dataDir,
    checkpointer: options.saver,
    ...(options.store === "data-dir" ? {} : { database: ":memory:" }),
    env: postgresUrl ? { DATABASE_URL: postgresUrl } : {},
    warn: (message) => warnings.push(message),
    models: {
      "bench:main": options.mainModel,
      "bench:child": options.childModel,
      ...options.models,
    },
    ...(options.tools ? { tools: options.tools } : {}),
    ...(options.limits ? { limits: options.limits } : {}),
    ...(options.checkpointStorage ? { checkpointStorage: options.checkpointStorage } : {}),
    ...(options.deltaSnapshotFrequency !== undefined
      ? { deltaSnapshotFrequency: options.deltaSnapshotFrequency }
      : {}),
  });
  const subagents = options.subagents ?? [
    { slug: CHILD_NAME, model: "bench:child", context: toolsConfig(options.childTools) },
  ];
  await createBenchAgents(runtime, UID, subagents, toolsConfig(options.mainTools));
  const stock = await openStockSaver(runtime.checkpointer, dataDir, postgresUrl);
  return {
    runtime,
    saver: runtime.checkpointer,
    stockSaver: stock.saver,
    saverName: options.saver,
    dataDir,
    postgresUrl,
    warnings,
    run: (input, threadId) =>
      runtime.run({ uid: UID, agent: MAIN_SLUG, threadId: threadId ?? randomUUID(), input }),
    async dispose() {
      try {
        await stock.close();
        await runtime.close();
      } finally {
        rmSync(dataDir, { recursive: true, force: true });
      }
    },
  };
}

/**
 * `uid`'s bench agents on `runtime`: the `subagents` and `boss`, its default main agent, allowed
 * to call them, with `mainContext` (e.g. its `tools`).
 */
export async function createBenchAgents(
  runtime: Runtime,
  uid: string,
  subagents: readonly BenchSubagent[],
  mainContext: Record<string, unknown>,
): Promise<void> {
  for (const { slug, model, context } of subagents) {
    await runtime.agents.create(uid, subagentPayload(slug, model, context));
  }
  await runtime.agents.create(uid, {
    ...mainAgentPayload(
      MAIN_SLUG,
      "bench:main",
      subagents.map((subagent) => subagent.slug),
      mainContext,
    ),
    is_default: true,
  });
}

/** A second saver on `saver`'s storage, of the class before our `Send` compaction. */
async function openStockSaver(
  saver: BaseCheckpointSaver,
  dataDir: string,
  postgresUrl: string | undefined,
): Promise<{ saver: BaseCheckpointSaver; close(): Promise<void> }> {
  if (postgresUrl) {
    const stock = await ForkSafePostgresSaver.open(postgresUrl, { max: 10 });
    return { saver: stock, close: () => stock.close() };
  }
  if (saver instanceof SqliteSaver) {
    const stock = new DeltaHistorySqliteSaver(new Database(join(dataDir, "checkpoints.sqlite")));
    return {
      saver: stock,
      close: async () => {
        stock.db.close();
      },
    };
  }
  // The memory saver keeps its checkpoints in the object: a stock one is a store of its own.
  if (saver instanceof MemorySaver) return { saver: new MemorySaver(), close: async () => {} };
  return { saver, close: async () => {} };
}

/** `context.tools` for a bench agent: none by default, unset for `"all"`. */
function toolsConfig(tools: string[] | "all" | undefined): Record<string, unknown> {
  return tools === "all" ? {} : { tools: tools ?? [] };
}

/**
 * The bare child: one `createAgent` with the subagent's model, prompt and (no) tools, compiled
 * with `saver`, invoked on a fresh thread. Nothing of ours around it: the lower bound of a
 * persisted child run.
 */
export function bareChild(childModel: BaseChatModel, saver: BaseCheckpointSaver) {
  const agent = createAgent({
    model: childModel,
    tools: [],
    systemPrompt: CHILD_PROMPT,
    checkpointer: saver,
  });
  return (description: string) =>
    agent.invoke(
      { messages: [new HumanMessage(description)] },
      { configurable: { thread_id: `bare-${randomUUID()}` } },
    );
}

/**
 * The no-orchestrator floor of a fan-out: one main model call, `k` bare children at once
 * (`Promise.all`), one main model call. No graph around the main model, no checkpoint of it.
 */
export function floor(mainModel: BaseChatModel, child: (description: string) => Promise<unknown>) {
  return async (k: number) => {
    const system = new SystemMessage(MAIN_PROMPT);
    const human = new HumanMessage(`fan out ${k}`);
    const first = await mainModel.invoke([system, human]);
    await Promise.all(
      Array.from({ length: k }, (_, i) => child(`Question ${i + 1}: what is ${i} + 1?`)),
    );
    await mainModel.invoke([system, human, first]);
  };
}

/**
 * The least any orchestrator built on LangGraph pays for the same fan-out: one `createAgent`
 * main agent (no middleware) whose only tool, `task`, invokes the bare child on a fresh thread of
 * the same saver, checkpointed step by step (`durability: "sync"`, as ours runs). No run
 * records, guards, limits or child records: the reference that tells how much of the distance
 * to the floor is LangGraph's own (a graph step and a checkpoint per model or tool step).
 */
export function langGraphMinimum(
  mainModel: BaseChatModel,
  child: (description: string) => Promise<{ messages: BaseMessage[] }>,
  saver: BaseCheckpointSaver,
) {
  const task = tool(
    async ({ description }) => {
      const { messages } = await child(description);
      return messageText(messages.at(-1) ?? new HumanMessage(""));
    },
    {
      name: "task",
      description: CHILD_DESCRIPTION,
      schema: z.object({ description: z.string(), subagent_type: z.string() }),
    },
  );
  const agent = createAgent({
    model: mainModel,
    tools: [task],
    systemPrompt: MAIN_PROMPT,
    checkpointer: saver,
  });
  return (input: string) =>
    agent.invoke(
      { messages: [new HumanMessage(input)] },
      { configurable: { thread_id: `minimum-${randomUUID()}` }, durability: "sync" },
    );
}

/** A Deep Agents subagent spec, as the bench builds them. */
export interface DeepSubagent {
  name: string;
  description: string;
  systemPrompt: string;
  tools: StructuredTool[];
  model: BaseChatModel;
  /** Its gated tools (langchain's `humanInTheLoopMiddleware` semantics). */
  interruptOn?: Record<string, boolean>;
}

/**
 * `createDeepAgent` with the bench's main model and prompt, no tools of its own and `subagents`,
 * compiled with `saver`. Its defaults stay: its filesystem tools, general-purpose subagent,
 * summarization and patch middleware.
 */
export function createDeepSystem(
  mainModel: BaseChatModel,
  saver: BaseCheckpointSaver,
  subagents: DeepSubagent[],
) {
  return createDeepAgent({
    model: mainModel,
    systemPrompt: MAIN_PROMPT,
    tools: [],
    subagents,
    checkpointer: saver,
  });
}

/**
 * Deep Agents with the same main model and prompt and the same subagent (name, description,
 * prompt, tools, model) as our `boss`/`worker`, on `saver`; `run` uses a fresh thread unless
 * given one.
 */
export function deepAgent(
  mainModel: BaseChatModel,
  childModel: BaseChatModel,
  saver: BaseCheckpointSaver,
  childTools: StructuredTool[] = [],
) {
  const agent = createDeepSystem(mainModel, saver, [
    {
      name: CHILD_NAME,
      description: CHILD_DESCRIPTION,
      systemPrompt: CHILD_PROMPT,
      tools: childTools,
      model: childModel,
    },
  ]);
  return {
    agent,
    run: (input: string, threadId?: string) =>
      agent.invoke(
        { messages: [new HumanMessage(input)] },
        { configurable: { thread_id: threadId ?? `deep-${randomUUID()}` } },
      ),
  };
}
