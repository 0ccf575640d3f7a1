import type { StructuredToolInterface } from "@langchain/core/tools";
import { type AgentMiddleware, createAgent } from "langchain";
import type { AgentRecord } from "../agents/schema.js";
import { agentStateOption } from "../checkpoints/channel-storage.js";
import { subagentRunContextSchema } from "../run-context.js";
import { type BackendDeps, normaliseResources } from "./resources.js";
import { withoutForbiddenTools } from "./subagent-tools.js";

/**
 * `SubAgentBackend`: an agent run only through a parent's `task` call. Same resource
 * normalisation as a chat agent, but it never gets a tool a subagent may not have (so never
 * `task`: subagents never nest; `mcp_` tools stay). The graph layer hands it its bounding
 * middleware (rounds, allowed tools, execution guard), never the task middleware, and its MCP
 * tools (`extraTools`).
 */
export function buildSubAgent(
  record: AgentRecord,
  deps: BackendDeps,
  middleware: readonly AgentMiddleware[],
  extraTools: readonly StructuredToolInterface[] = [],
) {
  const resources = normaliseResources(record, deps, extraTools);
  return createAgent({
    name: record.slug,
    model: resources.model,
    tools: withoutForbiddenTools(resources.tools),
    systemPrompt: resources.systemPrompt,
    middleware: [...middleware],
    contextSchema: subagentRunContextSchema,
    checkpointer: deps.checkpointer,
    ...agentStateOption(deps.storage),
  });
}
