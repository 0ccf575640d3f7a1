import type { BaseMessage } from "@langchain/core/messages";
import type { StructuredToolInterface } from "@langchain/core/tools";
import type {
  LangGraphRunnableConfig,
  StateSchemaFields,
  StateSnapshot,
} from "@langchain/langgraph";
import type { AgentMiddleware } from "langchain";
import type { AgentRecord, BackendId } from "../agents/schema.js";
import { buildChatAgent } from "./chat-agent.js";
import type { BackendDeps } from "./resources.js";
import { buildSubAgent } from "./sub-agent.js";

/**
 * A compiled agent graph, as the layers above use it. `createAgent`'s own type is generic over
 * every middleware's state and context; above the backends only this common surface matters,
 * so each backend's graph is viewed through it once, here.
 */
export interface AgentGraph {
  invoke(input: unknown, config?: LangGraphRunnableConfig): Promise<{ messages: BaseMessage[] }>;
  stream(input: unknown, config?: AgentStreamConfig): Promise<AsyncIterable<unknown>>;
  getState(config: LangGraphRunnableConfig): Promise<StateSnapshot>;
  getStateHistory(
    config: LangGraphRunnableConfig,
    options?: { limit?: number; before?: LangGraphRunnableConfig },
  ): AsyncIterableIterator<StateSnapshot>;
  updateState(
    config: LangGraphRunnableConfig,
    values: Record<string, unknown>,
    asNode?: string,
  ): Promise<unknown>;
}

/** Stream options on top of the run config. */
export type AgentStreamConfig = LangGraphRunnableConfig & {
  streamMode?: string[];
  subgraphs?: boolean;
};

function asAgentGraph(graph: unknown): AgentGraph {
  return graph as AgentGraph;
}

/** How one `backend_id` turns a record into a graph. */
export interface AgentBackend {
  id: BackendId;
  /**
   * Whether the graph layer may mount the task middleware on this backend's agents; a backend
   * that does not is bounded as a subagent instead.
   */
  acceptsSubagents: boolean;
  /**
   * `extraTools`: tools besides the registry's selection (the agent's MCP tools); `stateFields`:
   * state the agent declares for its middleware (a chat agent's delta `subagent_runs`).
   */
  build(
    record: AgentRecord,
    deps: BackendDeps,
    middleware: readonly AgentMiddleware[],
    extraTools?: readonly StructuredToolInterface[],
    stateFields?: StateSchemaFields,
  ): AgentGraph;
}

const BACKENDS: Readonly<Record<BackendId, AgentBackend>> = {
  ChatAgentBackend: {
    id: "ChatAgentBackend",
    acceptsSubagents: true,
    build: (record, deps, middleware, extraTools, stateFields) =>
      asAgentGraph(
        buildChatAgent(record, deps, {
          middleware,
          tools: extraTools ?? [],
          ...(stateFields ? { stateFields } : {}),
        }),
      ),
  },
  SubAgentBackend: {
    id: "SubAgentBackend",
    acceptsSubagents: false,
    build: (record, deps, middleware, extraTools) =>
      asAgentGraph(buildSubAgent(record, deps, middleware, extraTools)),
  },
};

/** The backend of `backendId`. */
export function backendFor(backendId: BackendId): AgentBackend {
  return BACKENDS[backendId];
}

/**
 * Every tool an agent's graph was built with: its own and its middleware's (the task tool, the
 * knowledge tools). langchain's agent keeps them on its `options`; a graph without them (one
 * not built by a backend) has none.
 */
export function agentTools(graph: AgentGraph): readonly StructuredToolInterface[] {
  const options = (graph as { options?: AgentToolOptions }).options;
  const own = options?.tools ?? [];
  const middleware = (options?.middleware ?? []).flatMap((entry) => entry.tools ?? []);
  return [...own, ...middleware].filter(
    (tool): tool is StructuredToolInterface =>
      typeof tool === "object" &&
      tool !== null &&
      typeof (tool as { name?: unknown }).name === "string",
  );
}

interface AgentToolOptions {
  tools?: readonly unknown[];
  middleware?: readonly { tools?: readonly unknown[] }[];
}
