import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import type { StructuredToolInterface } from "@langchain/core/tools";
import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";
import type { AgentRecord } from "../agents/schema.js";
import type { ChannelStorage } from "../checkpoints/channel-storage.js";
import type { ModelFactory } from "../models/factory.js";
import type { ToolRegistry } from "../tools/registry.js";

/** What a backend needs to turn an agent record into a graph. */
export interface BackendDeps {
  models: ModelFactory;
  tools: ToolRegistry;
  /** Saver the graph is compiled with; undefined = the caller's (e.g. the dev server's). */
  checkpointer: BaseCheckpointSaver | undefined;
  /**
   * Graphs for a LangGraph server (`langgraph.json`, Studio): main agents then carry the context
   * schema of Studio's configuration panel (`hostedAgentContextSchema`, every field optional)
   * instead of the runtime's own (whose `uid` the runtime always sets).
   */
  hosted?: boolean | undefined;
  /** A model that replaces the one an agent's config names (replay tests); undefined = none. */
  modelFor?: ((record: AgentRecord) => BaseChatModel | undefined) | undefined;
  /** How the agents' growing channels are checkpointed (the runtime's `checkpointStorage`). */
  storage: ChannelStorage;
}

/** An agent's model, tools and system prompt, resolved from its runtime config. */
export interface AgentResources {
  model: BaseChatModel;
  tools: StructuredToolInterface[];
  systemPrompt: string;
}

/**
 * Resource normalisation shared by every backend: the model from `context.model` (process default
 * when unset), the tools from `context.tools` (every registered tool when unset) plus `extraTools`
 * (the MCP tools of `context.mcp_servers`, resolved by the graph layer before the build, since
 * they are discovered when a server connects), the system prompt from `context.system_prompt` (a
 * prompt built from the name and description when unset).
 */
export function normaliseResources(
  record: AgentRecord,
  deps: BackendDeps,
  extraTools: readonly StructuredToolInterface[] = [],
): AgentResources {
  const context = record.config_json.context;
  return {
    model: deps.modelFor?.(record) ?? deps.models(context.model),
    tools: [...deps.tools.select(context.tools, record.slug), ...extraTools],
    systemPrompt: context.system_prompt?.trim() || defaultSystemPrompt(record),
  };
}

function defaultSystemPrompt(record: AgentRecord): string {
  const description = record.description.trim();
  return description ? `You are ${record.name}. ${description}` : `You are ${record.name}.`;
}
