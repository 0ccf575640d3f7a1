import { createAgent } from "langchain";
import type { AgentRecord } from "../agents/schema.js";
import { subAgentContextSchema } from "./context.js";
import { type BackendDeps, normaliseResources } from "./resources.js";
import { withoutForbiddenTools } from "./subagent-tools.js";

/**
 * `SubAgentBackend`: an agent run only through a parent's `task` call. Same resource
 * normalisation as a chat agent, but it never mounts the task middleware (it takes no extra
 * middleware at all) and never gets a tool a subagent may not have: subagents never nest.
 */
export function buildSubAgent(record: AgentRecord, deps: BackendDeps) {
  const resources = normaliseResources(record, deps);
  return createAgent({
    name: record.slug,
    model: resources.model,
    tools: withoutForbiddenTools(resources.tools),
    systemPrompt: resources.systemPrompt,
    contextSchema: subAgentContextSchema,
    checkpointer: deps.checkpointer,
  });
}
