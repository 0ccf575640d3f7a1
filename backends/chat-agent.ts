import type { StructuredToolInterface } from "@langchain/core/tools";
import type { StateSchemaFields } from "@langchain/langgraph";
import { type AgentMiddleware, createAgent } from "langchain";
import type { AgentRecord } from "../agents/schema.js";
import { agentStateOption } from "../checkpoints/channel-storage.js";
import { mainRunContextSchema } from "../run-context.js";
import { hostedAgentContextSchema } from "./context.js";
import { type BackendDeps, normaliseResources } from "./resources.js";

/** Extra middleware the graph layer composes into a chat agent (e.g. the task middleware). */
export interface ChatAgentExtras {
  middleware: readonly AgentMiddleware[];
  /** Tools besides the registry's selection (the agent's MCP tools). */
  tools?: readonly StructuredToolInterface[];
  /** State fields the agent declares for its middleware (delta channels, see `agentStateOption`). */
  stateFields?: StateSchemaFields;
}

/**
 * `ChatAgentBackend`: a main agent users talk to. The graph layer hands it the task middleware
 * when the agent's subagent allow-list resolves non-empty.
 */
export function buildChatAgent(record: AgentRecord, deps: BackendDeps, extras: ChatAgentExtras) {
  const resources = normaliseResources(record, deps, extras.tools);
  return createAgent({
    name: record.slug,
    model: resources.model,
    tools: resources.tools,
    systemPrompt: resources.systemPrompt,
    middleware: [...extras.middleware],
    contextSchema: deps.hosted ? hostedAgentContextSchema : mainRunContextSchema,
    checkpointer: deps.checkpointer,
    ...agentStateOption(deps.storage, extras.stateFields),
  });
}
