import { ErrorCode, SubagentGraphError } from "../errors.js";
import type { Runtime } from "../runtime.js";

/**
 * The chat agent `idOrSlug` names for `uid` (an `assistant_id` may be the id or the slug, as
 * the reference server accepts graph ids). Subagents are not assistants: they run only through
 * a main agent's `task` tool.
 */
export async function chatAgent(runtime: Runtime, uid: string, idOrSlug: string) {
  const agent = await runtime.agents.get(uid, idOrSlug);
  if (agent.is_subagent) {
    throw new SubagentGraphError(
      ErrorCode.NotFound,
      `assistant "${idOrSlug}" not found: "${agent.slug}" is a subagent, which runs only through a main agent's task tool`,
      { field: "assistant_id" },
    );
  }
  return agent;
}
