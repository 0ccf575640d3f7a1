import { SystemMessage } from "@langchain/core/messages";
import type { StructuredToolInterface } from "@langchain/core/tools";
import { type AgentMiddleware, createMiddleware } from "langchain";
import type { AgentRecord } from "../agents/schema.js";
import { generalPurposePrompt, isGeneralPurpose } from "../backends/general-purpose.js";
import { type AgentGraph, backendFor } from "../backends/registry.js";
import type { BackendDeps } from "../backends/resources.js";
import { ASYNC_TASK_TOOL_NAMES } from "../contract.js";
import { mayHaveKnowledge } from "../knowledge/run-knowledge.js";
import type { KnowledgeBases } from "../knowledge/service.js";
import { createKnowledgeTools, KNOWLEDGE_TOOL_NAMES } from "../knowledge/tools.js";
import { createApprovalsMiddleware } from "../middleware/approvals.js";
import type { AsyncTaskHost } from "../middleware/async-task-host.js";
import { createAsyncTaskMiddleware } from "../middleware/async-tasks.js";
import { createFileScopeMiddleware } from "../middleware/file-scope.js";
import { createKnowledgeMiddleware } from "../middleware/knowledge.js";
import { createModelCallGuardMiddleware } from "../middleware/model-call-guard.js";
import type { ParentRunScope } from "../middleware/parent-scope.js";
import { createRequestRecorderMiddleware } from "../middleware/record-requests.js";
import {
  createSubagentLimitsMiddleware,
  type SubagentBounds,
} from "../middleware/subagent-limits.js";
import { subagentRunsField } from "../middleware/subagent-runs.js";
import {
  createTaskMiddleware,
  type DispatchLimits,
  type LoadedChild,
  TASK_TOOL_NAME,
} from "../middleware/task.js";
import { createToolCallAnswersMiddleware } from "../middleware/tool-call-answers.js";
import type { ModelRequestLog } from "../models/request-log.js";
import { readSubagentRunContext } from "../run-context.js";
import type { SkillSummary } from "../sandbox/skills/library.js";

/** What {@link buildAgentGraph} needs besides the record. */
export interface AgentGraphDeps extends BackendDeps {
  /** Loads a subagent of `parent` at dispatch time, re-checking visibility. */
  loadChild(
    parent: AgentRecord,
    slug: string,
    scope: ParentRunScope,
  ): Promise<LoadedChild | undefined>;
  /** The calling agent's current dispatch limits. */
  dispatchLimits(parent: AgentRecord, scope: ParentRunScope): Promise<DispatchLimits>;
  /** How long one model call may take now, in ms (the process-wide `model_timeout_ms`). */
  modelTimeoutMs(): number;
  /** Materialises the agent's configured skills into a skills scope and returns them. */
  prepareSkills(record: AgentRecord, skillsThreadId: string): Promise<SkillSummary[]>;
  /** Where every model call's request is noted, when the runtime records them; else none. */
  requestLog?: ModelRequestLog | undefined;
  /** The knowledge bases agents search; absent = agents get no knowledge tools. */
  knowledge?: KnowledgeBases | undefined;
  /** The background tasks of a main agent's threads, bound to it; absent = no background tools. */
  asyncTasks?: ((parent: AgentRecord) => AsyncTaskHost) | undefined;
}

/**
 * Builds an agent's graph from its backend's agent plus composed middleware:
 * - a backend that accepts subagents (chat agents) gets the task middleware iff the resolved
 *   allow-list (`context.subagents` ∩ subagents visible to the user) is non-empty;
 * - any other (subagents) gets the rounds / allowed-tools / execution-guard middleware, and the
 *   built-in general-purpose subagent also its per-call prompt;
 * - both get the tool-call answers (every call the model makes gets a tool message, even a
 *   malformed or unknown one), then the file-scope middleware, so its sections are appended to
 *   the final system message and it sees the tools left after the allowed-set filter, then
 *   (when the runtime records model requests) the request recorder, which so sees the request
 *   as the model gets it, and innermost the model-call guard (timeout, typed failures), which
 *   wraps the model call alone.
 *
 * `mcpTools` are the agent's MCP tools (from `context.mcp_servers`), resolved by the caller: they
 * are known only once the servers are connected, which is async, while building is not. For a
 * subagent they join its allowed set like any tool.
 */
export function buildAgentGraph(
  record: AgentRecord,
  allowedSubagents: readonly AgentRecord[],
  deps: AgentGraphDeps,
  mcpTools: readonly StructuredToolInterface[] = [],
  backgroundSubagents: readonly AgentRecord[] = [],
): AgentGraph {
  const backend = backendFor(record.backend_id);
  const fileScope = createFileScopeMiddleware({
    prepareSkills: (skillsThreadId) => deps.prepareSkills(record, skillsThreadId),
  });
  const guard = createModelCallGuardMiddleware({ timeoutMs: () => deps.modelTimeoutMs() });
  const innermost = deps.requestLog
    ? [createRequestRecorderMiddleware(deps.requestLog), guard]
    : [guard];
  const knowledge = knowledgeMiddleware(record, deps);
  // Approvals pause after a model turn, before any of its tools run (README "Approvals").
  const approvals = createApprovalsMiddleware(record.config_json.context.interrupt_on);
  if (!backend.acceptsSubagents) {
    const { middleware, toolNames } = subagentMiddleware(record);
    const answers = createToolCallAnswersMiddleware({ toolNames });
    return backend.build(
      record,
      deps,
      [...approvals, ...middleware, ...knowledge, answers, fileScope, ...innermost],
      mcpTools,
    );
  }
  const middleware: AgentMiddleware[] =
    allowedSubagents.length > 0
      ? [
          createTaskMiddleware({
            subagents: listed(allowedSubagents),
            loadChild: (slug, scope) => deps.loadChild(record, slug, scope),
            limits: (scope) => deps.dispatchLimits(record, scope),
            storage: deps.storage,
          }),
        ]
      : [];
  const background =
    backgroundSubagents.length > 0 && deps.asyncTasks
      ? createAsyncTaskMiddleware({
          subagents: listed(backgroundSubagents),
          host: deps.asyncTasks(record),
        })
      : undefined;
  if (background) middleware.push(background);
  // The names an unknown-tool answer lists: the agent's tools, the same selection its backend
  // makes, plus `task` when it may delegate.
  const toolNames = [
    ...deps.tools.select(record.config_json.context.tools, record.slug),
    ...mcpTools,
  ].map((tool) => tool.name);
  if (allowedSubagents.length > 0) toolNames.push(TASK_TOOL_NAME);
  if (background) toolNames.push(...Object.values(ASYNC_TASK_TOOL_NAMES));
  // The knowledge tools count only in runs that have knowledge bases (the model is offered
  // them only then), so an unknown-tool answer never lists tools the model was not given.
  const withKnowledge = [...toolNames, ...KNOWLEDGE_TOOL_NAMES];
  const answers = createToolCallAnswersMiddleware({
    toolNames: (context) =>
      knowledge.length > 0 && mayHaveKnowledge(context) ? withKnowledge : toolNames,
  });
  // A delta `subagent_runs` is declared on the agent, not on the task middleware (see
  // `middleware/subagent-runs.ts`); with full storage the middleware declares it itself.
  const stateFields =
    allowedSubagents.length > 0 && deps.storage.kind === "delta"
      ? { subagent_runs: subagentRunsField(deps.storage) }
      : undefined;
  return backend.build(
    record,
    deps,
    [...approvals, ...middleware, ...knowledge, answers, fileScope, ...innermost],
    mcpTools,
    stateFields,
  );
}

/**
 * The knowledge middleware (tools and prompt section) unless the agent's
 * `context.knowledge_bases` is `[]` or the runtime has no knowledge bases. Whether a run gets
 * the tools is decided per run, from its snapshot (`middleware/knowledge.ts`); a subagent's are
 * also in its allowed set only when its snapshot is non-empty (`CompiledGraphs.loadChild`).
 */
function knowledgeMiddleware(record: AgentRecord, deps: AgentGraphDeps) {
  const selection = record.config_json.context.knowledge_bases;
  if (!deps.knowledge || selection?.length === 0) return [];
  const agent = { slug: record.slug, selection };
  return [
    createKnowledgeMiddleware({
      api: deps.knowledge,
      agent,
      tools: createKnowledgeTools(deps.knowledge, agent),
    }),
  ];
}

function subagentMiddleware(record: AgentRecord) {
  // The bounds of this call, from the context the task tool sets (their defaults, the
  // subagent's own max_rounds else the process's, were applied there: `CompiledGraphs.loadChild`).
  // The graph's context schema refuses a run without them before its first step.
  const readBounds = (context: unknown): SubagentBounds => {
    const run = readSubagentRunContext(context, { reader: "a subagent's bounds" });
    return { maxRounds: run.max_rounds, allowedTools: new Set(run.allowed_tools) };
  };
  const limits = createSubagentLimitsMiddleware(readBounds);
  const toolNames = (context: unknown) => [...readBounds(context).allowedTools];
  if (!isGeneralPurpose(record)) return { middleware: [limits], toolNames };
  const prompt = createMiddleware({
    name: "GeneralPurposePrompt",
    wrapModelCall: async (request, handler) => {
      const run = readSubagentRunContext(request.runtime.context, {
        reader: "the general-purpose prompt",
      });
      return handler({
        ...request,
        systemMessage: new SystemMessage(
          generalPurposePrompt(run.intent ?? "", [...new Set(run.allowed_tools)]),
        ),
      });
    },
  });
  return { middleware: [limits, prompt], toolNames };
}

/**
 * The cache key of a graph: everything that changes what {@link buildAgentGraph} builds, `mcpKey`
 * being the identity of its MCP tool set (`McpToolSet.key`).
 */
export function agentGraphKey(
  record: AgentRecord,
  allowedSubagents: readonly AgentRecord[],
  mcpKey = "",
  backgroundSubagents: readonly AgentRecord[] = [],
): string {
  const versions = (agents: readonly AgentRecord[]) =>
    agents.map((subagent) => `${subagent.id}@${subagent.version}`).join(",");
  const mcp = mcpKey ? `{${mcpKey}}` : "";
  const background = backgroundSubagents.length > 0 ? `<${versions(backgroundSubagents)}>` : "";
  return `${record.id}@${record.version}[${versions(allowedSubagents)}]${background}${mcp}`;
}

/** Subagents as a middleware lists them in the system message. */
function listed(subagents: readonly AgentRecord[]) {
  return subagents.map((subagent) => ({
    slug: subagent.slug,
    description: subagent.description || subagent.name,
  }));
}
