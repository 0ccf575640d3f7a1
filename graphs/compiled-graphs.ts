import { agentLimits, type ProcessSettings } from "../agents/limits.js";
import type { AgentRepository } from "../agents/repository.js";
import type { AgentRecord } from "../agents/schema.js";
import { GENERAL_PURPOSE_SLUG, generalPurposeRecord } from "../backends/general-purpose.js";
import type { AgentGraph } from "../backends/registry.js";
import type { BackendDeps } from "../backends/resources.js";
import { subagentToolNames } from "../backends/subagent-tools.js";
import type { KnowledgeBases } from "../knowledge/service.js";
import { KNOWLEDGE_TOOL_NAMES } from "../knowledge/tools.js";
import type { AsyncTaskHost } from "../middleware/async-task-host.js";
import type { ParentRunScope } from "../middleware/parent-scope.js";
import type { DispatchLimits, LoadedChild } from "../middleware/task.js";
import type { ModelRequestLog } from "../models/request-log.js";
import type { SkillSummary } from "../sandbox/skills/library.js";
import type { McpToolSet, McpToolSource } from "../tools/mcp/manager.js";
import { type AgentGraphDeps, agentGraphKey, buildAgentGraph } from "./build-agent-graph.js";
import { GraphCache } from "./graph-cache.js";

export interface CompiledGraphsOptions {
  repository: AgentRepository;
  backend: BackendDeps;
  /** Materialises an agent's configured skills into a skills scope (see `prepareAgentSkills`). */
  prepareSkills(record: AgentRecord, skillsThreadId: string): Promise<SkillSummary[]>;
  /** Process-wide settings now (environment, config); called on every dispatch. */
  processLimits(): ProcessSettings;
  warn(message: string): void;
  /** MCP tools of `context.mcp_servers`; absent = no MCP servers. */
  mcp?: McpToolSource | undefined;
  /** Where every model call's request is noted (`recordModelRequests`); absent = not noted. */
  requestLog?: ModelRequestLog | undefined;
  /** The knowledge bases agents search; absent = none. */
  knowledge?: KnowledgeBases | undefined;
  /** The background tasks of a main agent's threads, bound to it; absent = no background tools. */
  asyncTasks?: ((parent: AgentRecord) => AsyncTaskHost) | undefined;
}

const NO_MCP_TOOLS: McpToolSet = { tools: [], key: "" };

/**
 * Compiled graphs of main agents and subagents, cached by everything that shapes them, plus the
 * dispatch-time hooks the task middleware calls: load a subagent (visibility re-checked, its
 * tools and rounds read now) and the caller's limits (its current record and the process
 * settings, read now). So agent updates and setting changes apply to the next `task` call
 * without a restart, while unchanged agents reuse their compiled graph.
 */
export class CompiledGraphs {
  private readonly cache = new GraphCache<AgentGraph>();
  private readonly deps: AgentGraphDeps;

  constructor(private readonly options: CompiledGraphsOptions) {
    this.deps = {
      ...options.backend,
      loadChild: (parent, slug, scope) => this.loadChild(parent, slug, scope),
      dispatchLimits: (parent, scope) => this.dispatchLimits(parent, scope),
      modelTimeoutMs: () => options.processLimits().model_timeout_ms,
      prepareSkills: (record, skillsThreadId) => options.prepareSkills(record, skillsThreadId),
      requestLog: options.requestLog,
      knowledge: options.knowledge,
      asyncTasks: options.asyncTasks,
    };
  }

  /** The graph of main agent `record` as `uid` may use it (task middleware iff allowed ones). */
  async mainGraph(uid: string, record: AgentRecord): Promise<AgentGraph> {
    const allowed = await this.resolveAllowList(uid, record, record.config_json.context.subagents);
    const background = this.options.asyncTasks
      ? await this.resolveAllowList(uid, record, record.config_json.context.async_subagents)
      : [];
    const mcp = await this.mcpTools(record);
    return this.cache.getOrBuild(agentGraphKey(record, allowed, mcp.key, background), () =>
      buildAgentGraph(record, allowed, this.deps, mcp.tools, background),
    );
  }

  /**
   * Subagent `slug` of `parent` as a background task runs it for `uid` now (its record re-read,
   * its tools and rounds as a `task` call would have them); undefined when `uid` may no longer
   * use it, or `parent` no longer lists it in `context.async_subagents`.
   */
  async backgroundChild(
    uid: string,
    parent: AgentRecord,
    slug: string,
  ): Promise<LoadedChild | undefined> {
    const allowed = await this.resolveAllowList(
      uid,
      parent,
      parent.config_json.context.async_subagents,
    );
    if (!allowed.some((agent) => agent.slug === slug)) return undefined;
    return this.loadChild(parent, slug, { uid, threadId: "", fileThreadId: "", overrides: {} });
  }

  /** Process-wide settings now (environment, settings file, options). */
  processLimits(): ProcessSettings {
    return this.options.processLimits();
  }

  clear(): void {
    this.cache.clear();
  }

  /**
   * `context.subagents` ∩ subagents visible to `uid` (plus the built-in general-purpose one when
   * listed), in the listed order; anything else is dropped and logged. Empty when delegation is
   * switched off process-wide (`enabled: false`), which removes the task tool entirely.
   */
  private async resolveAllowList(
    uid: string,
    record: AgentRecord,
    slugs: readonly string[] | undefined,
  ): Promise<AgentRecord[]> {
    const wanted = slugs ?? [];
    if (record.is_subagent || wanted.length === 0) return [];
    if (!this.options.processLimits().enabled) return [];
    const found = await this.options.repository.findSubagents(uid, wanted);
    const allowed = wanted.flatMap((slug) => {
      if (slug === GENERAL_PURPOSE_SLUG) return [generalPurposeRecord(record)];
      return found.filter((agent) => agent.slug === slug);
    });
    const dropped = wanted.filter((slug) => !allowed.some((agent) => agent.slug === slug));
    if (dropped.length > 0) {
      this.options.warn(
        `agent "${record.slug}": subagent(s) ${dropped.map((s) => `"${s}"`).join(", ")} dropped: not a subagent visible to this user`,
      );
    }
    return allowed;
  }

  /**
   * The graph subagent `slug` of `parent` runs with for `uid` now, with its record and MCP
   * tools; undefined when `uid` may not use it (deleted, unshared, not a subagent).
   */
  private async childParts(uid: string, parent: AgentRecord, slug: string) {
    const record =
      slug === GENERAL_PURPOSE_SLUG
        ? generalPurposeRecord(parent)
        : (await this.options.repository.findSubagents(uid, [slug]))[0];
    if (!record) return undefined;
    // A subagent that names its MCP servers is called for their tools: run without them, it
    // would answer as if it had looked. So a server it names that cannot be reached fails the
    // task call (one naming no servers, i.e. all of them, goes on without the ones that are down).
    const mcp = await this.mcpTools(record, record.config_json.context.mcp_servers !== undefined);
    const graph = this.cache.getOrBuild(agentGraphKey(record, [], mcp.key), () =>
      buildAgentGraph(record, [], this.deps, mcp.tools),
    );
    return { record, graph, mcp };
  }

  /**
   * The graph of subagent `slug` as `parent` calls it for `uid` (to check a decision on its
   * paused call against its tools); undefined when `uid` may no longer use it.
   */
  async childGraph(
    uid: string,
    parent: AgentRecord,
    slug: string,
  ): Promise<AgentGraph | undefined> {
    return (await this.childParts(uid, parent, slug))?.graph;
  }

  private async loadChild(
    parent: AgentRecord,
    slug: string,
    scope: ParentRunScope,
  ): Promise<LoadedChild | undefined> {
    const parts = await this.childParts(scope.uid, parent, slug);
    if (!parts) return undefined;
    const { record, graph, mcp } = parts;
    // The child's own selection, for the caller's user (general-purpose: the caller's
    // selection), fixed for this call. One it cannot see fails the call (the task tool records
    // why); none leaves the knowledge tools out of its allowed set.
    const knowledgeBaseIds = await this.knowledgeSnapshot(scope.uid, record);
    const toolNames = subagentToolNames(record, this.options.backend.tools, mcp.tools);
    if (knowledgeBaseIds.length > 0) toolNames.push(...KNOWLEDGE_TOOL_NAMES);
    return {
      graph,
      toolNames,
      knowledgeBaseIds,
      maxRounds:
        scope.overrides.max_rounds ??
        agentLimits(record.config_json.context, this.options.processLimits()).max_rounds,
    };
  }

  /**
   * The ids of the knowledge bases `record` may search when `uid` runs it: its
   * `context.knowledge_bases` resolved now (every visible one when unset, none for `[]`).
   * @throws SubagentGraphError `UNKNOWN_KNOWLEDGE_BASE` for one `uid` cannot see.
   */
  async knowledgeSnapshot(uid: string, record: AgentRecord): Promise<string[]> {
    const knowledge = this.options.knowledge;
    const selection = record.config_json.context.knowledge_bases;
    if (!knowledge || selection?.length === 0) return [];
    const bases = await knowledge.resolveSelection(uid, selection, record.slug);
    return bases.map((kb) => kb.id);
  }

  /**
   * The agent's MCP tools (connecting its servers on first use): resolved before the build,
   * which is synchronous, and part of the cache key. `required`: a server that cannot be
   * reached throws (`MCP_SERVER_UNAVAILABLE`) instead of being left out with a warning.
   */
  private mcpTools(record: AgentRecord, required = false): Promise<McpToolSet> {
    const mcp = this.options.mcp;
    if (!mcp) return Promise.resolve(NO_MCP_TOOLS);
    return mcp.toolsFor(record.config_json.context.mcp_servers, record.slug, { required });
  }

  private async dispatchLimits(
    parent: AgentRecord,
    scope: ParentRunScope,
  ): Promise<DispatchLimits> {
    // The caller's current record: an update made during a run applies to its next dispatch.
    const current = (await this.options.repository.find(scope.uid, parent.id)) ?? parent;
    const limits = {
      ...agentLimits(current.config_json.context, this.options.processLimits()),
      ...scope.overrides,
    };
    return {
      maxResultChars: limits.max_result_chars,
      subagentTimeoutMs: limits.subagent_timeout_ms,
      maxParallelSubagents: limits.max_parallel_subagents,
    };
  }
}
