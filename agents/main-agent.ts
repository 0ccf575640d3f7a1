import type { AgentRepository } from "./repository.js";
import type { AgentRecord } from "./schema.js";
import { ErrorCode, SubagentGraphError } from "../errors.js";

/** Finds the chat agent a run or an upload names for `uid` (default: their default agent). */
export type MainAgentResolver = (uid: string, agent: string | undefined) => Promise<AgentRecord>;

/**
 * The main agent `uid` named, refusing subagents: they run only through a main agent's task
 * tool, on a child thread.
 */
export function mainAgentResolver(repository: AgentRepository): MainAgentResolver {
  return async (uid, agent) => {
    const record = agent ? await repository.get(uid, agent) : await repository.getDefault(uid);
    if (!record) {
      throw new SubagentGraphError(
        ErrorCode.NotFound,
        `user "${uid}" has no default agent: pass an agent id or slug, or mark one of your agents is_default`,
        { field: "agent" },
      );
    }
    if (record.is_subagent) {
      throw new SubagentGraphError(
        ErrorCode.AgentIsSubagent,
        `agent "${record.slug}" is a subagent (SubAgentBackend): it runs only through a main agent's task tool; run a chat agent that lists it in context.subagents`,
        { field: "agent" },
      );
    }
    return record;
  };
}

/**
 * The record with its subagent allow-list narrowed to `allowed` (never widened); the record
 * itself when `allowed` is undefined. A hosted graph narrows this way per run.
 */
export function narrowSubagents(
  record: AgentRecord,
  allowed: readonly string[] | undefined,
): AgentRecord {
  if (allowed === undefined) return record;
  const context = record.config_json.context;
  const subagents = (context.subagents ?? []).filter((slug) => allowed.includes(slug));
  return { ...record, config_json: { context: { ...context, subagents } } };
}
