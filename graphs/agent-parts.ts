import { join } from "node:path";
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import type { StructuredToolInterface } from "@langchain/core/tools";
import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";
import type { ProcessSettings } from "../agents/limits.js";
import { settingsSource } from "../agents/process-settings.js";
import type { AgentRepository } from "../agents/repository.js";
import type { AgentRecord } from "../agents/schema.js";
import type { ChannelStorage, CheckpointStorage } from "../checkpoints/channel-storage.js";
import type { KnowledgeBases } from "../knowledge/service.js";
import type { AsyncTaskHost } from "../middleware/async-task-host.js";
import { createModelFactory } from "../models/factory.js";
import { ModelRequestLog } from "../models/request-log.js";
import type { SandboxLayout } from "../sandbox/layout.js";
import { DEFAULT_FILE_TOOL_LIMITS, type FileToolLimits } from "../sandbox/limits.js";
import { prepareAgentSkills } from "../sandbox/skills/agent-skills.js";
import { SkillLibrary } from "../sandbox/skills/library.js";
import { createFileTools } from "../sandbox/tools/file-tools.js";
import { builtinTools } from "../tools/builtin.js";
import { MCP_CONFIG_ENV, type McpServerConfig, type McpServers } from "../tools/mcp/config.js";
import { McpManager } from "../tools/mcp/manager.js";
import { ToolRegistry } from "../tools/registry.js";
import { CompiledGraphs } from "./compiled-graphs.js";

/** The options of `createRuntime` that shape agents (every field optional). */
export interface AgentPartsOptions {
  /** Extra models by spec, e.g. `{ "scripted:main": model }`, usable in `context.model`. */
  models?: Record<string, BaseChatModel>;
  /**
   * A model to use instead of the one an agent's config names, per agent (e.g. a `ReplayModel`
   * serving a recorded thread back); return undefined to keep the configured one.
   */
  modelFor?: (agent: AgentRecord) => BaseChatModel | undefined;
  /** Extra tools, registered beside the built-in ones. */
  tools?: StructuredToolInterface[];
  /**
   * MCP servers by name (`^[a-z0-9][a-z0-9-]{0,30}$`): `{ command, args?, env?, cwd? }` for a
   * local process over stdio, or `{ url, headers? }` for Streamable HTTP. Wins over the file
   * `SUBAGENT_GRAPH_MCP` names, else `<dataDir>/mcp.json` (`{ "servers": { … } }`), read once
   * here. Agents get their tools as `mcp_<server>_<tool>` through `context.mcp_servers`.
   */
  mcpServers?: Record<string, McpServerConfig>;
  /**
   * Process-wide setting overrides (limits, `enabled`); a function is called again on every
   * dispatch. They override the environment and the settings file (`SUBAGENT_GRAPH_SETTINGS`,
   * default `<dataDir>/settings.json`), which are also read on every dispatch.
   */
  limits?: Partial<ProcessSettings> | (() => Partial<ProcessSettings>);
  /**
   * Registers the sandboxed file tools (`ls`, `read_file`, `write_file`, `edit_file`, `glob`,
   * `grep`). Default true.
   */
  fileTools?: boolean;
  /** Bounds of the file tools (read/write sizes, result caps, search time). */
  fileToolLimits?: Partial<FileToolLimits>;
  /**
   * Note what every model call is sent (system prompt, subagents listed, tools, input
   * messages), so `recordThread` can record a thread for a replay test that fails when any of
   * it changes. Kept in memory for the life of the runtime: switch it on in a recording script
   * or test, not in a server. Default false.
   */
  recordModelRequests?: boolean;
  /**
   * How agents' conversations are checkpointed: `"delta"` stores what each step wrote, with a
   * full snapshot every `deltaSnapshotFrequency` updates (reads replay the writes since); `"full"`
   * is LangGraph's stock storage (the whole conversation in every checkpoint: no replay on
   * reads, but bytes grow with the square of the length). Default: the environment's
   * `SUBAGENT_GRAPH_CHECKPOINT_STORAGE`, else `"delta"` on our memory, SQLite and PostgreSQL
   * savers and under a LangGraph server (Studio), `"full"` on a saver passed in (a stock saver
   * stores tool-routing packets whole and rebuilds a delta channel ancestor by ancestor).
   * Threads written either way stay readable after a switch. See README "Checkpoint storage".
   */
  checkpointStorage?: CheckpointStorage;
  /** With `"delta"`: channel updates between full snapshots. Default 250 (~60 turns). */
  deltaSnapshotFrequency?: number;
}

/** What agents are built from, opened together: their tools, models, MCP servers and skills. */
export interface AgentParts {
  graphs: CompiledGraphs;
  tools: ToolRegistry;
  mcp: McpManager;
  skillLibrary: SkillLibrary;
  fileLimits: FileToolLimits;
  /** Present when model requests are noted (`recordModelRequests`). */
  requestLog: ModelRequestLog | undefined;
}

/** Where the parts are opened, beside the runtime's options. */
export interface AgentPartsContext {
  dataDir: string;
  env: NodeJS.ProcessEnv;
  warn(message: string): void;
  layout: SandboxLayout;
  repository: AgentRepository;
  /** The runtime's saver; undefined when a server hosting the graphs brings its own. */
  checkpointer: BaseCheckpointSaver | undefined;
  /** The MCP servers, already read and checked (`loadMcpServers`). */
  mcpServers: McpServers;
  /** The checkpoint storage, already checked (`resolveChannelStorage`). */
  storage: ChannelStorage;
  /** The knowledge bases agents search (`context.knowledge_bases`); absent = none. */
  knowledge?: KnowledgeBases | undefined;
  /**
   * The background tasks of a main agent's threads (`context.async_subagents`), bound to it;
   * absent = no background tools (a runtime hosting graphs for another server).
   */
  asyncTasks?: ((parent: AgentRecord) => AsyncTaskHost) | undefined;
}

/**
 * Opens the parts agents are built from, as `createRuntime`'s options configure them: the tool
 * registry (built-ins, the sandboxed file tools unless `fileTools: false`, the caller's), the
 * model factory, the MCP servers (connected on first use), the skill library, and the graphs
 * over them, which re-read the process settings on every dispatch.
 */
export function openAgentParts(options: AgentPartsOptions, context: AgentPartsContext): AgentParts {
  const { dataDir, env, warn, layout, repository } = context;
  const fileLimits: FileToolLimits = { ...DEFAULT_FILE_TOOL_LIMITS, ...options.fileToolLimits };
  const skillLibrary = new SkillLibrary(layout.skillLibrary());
  const tools = new ToolRegistry([
    ...builtinTools(),
    ...(options.fileTools === false ? [] : createFileTools(layout, fileLimits)),
    ...(options.tools ?? []),
  ]);
  const models = createModelFactory({ env, ...(options.models ? { models: options.models } : {}) });
  const source =
    options.mcpServers !== undefined
      ? "the mcpServers option"
      : env[MCP_CONFIG_ENV]?.trim() || join(dataDir, "mcp.json");
  const mcp = new McpManager(context.mcpServers, { reservedNames: tools.names(), source, warn });
  const requestLog = options.recordModelRequests ? new ModelRequestLog() : undefined;
  const graphs = new CompiledGraphs({
    repository,
    requestLog,
    backend: {
      models,
      tools,
      checkpointer: context.checkpointer,
      hosted: context.checkpointer === undefined,
      modelFor: options.modelFor,
      storage: context.storage,
    },
    processLimits: settingsSource({ env, dataDir, overrides: options.limits, warn }),
    mcp,
    knowledge: context.knowledge,
    asyncTasks: context.asyncTasks,
    prepareSkills: (record, skillsThreadId) =>
      prepareAgentSkills(
        skillLibrary,
        layout,
        { slug: record.slug, skills: record.config_json.context.skills },
        skillsThreadId,
      ),
    warn,
  });
  return { graphs, tools, mcp, skillLibrary, fileLimits, requestLog };
}
