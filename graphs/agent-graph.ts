import type { AgentRecord } from "../agents/schema.js";
import { type AgentGraph, backendFor } from "../backends/registry.js";
import type { BackendDeps } from "../backends/resources.js";
import { createTaskMiddleware, type TaskMiddlewareOptions } from "../middleware/task.js";

/** What {@link buildAgentGraph} needs besides the record. */
export interface AgentGraphDeps extends BackendDeps {
  /** Builds a subagent's graph at dispatch time (see {@link TaskMiddlewareOptions.loadChild}). */
  loadChild: TaskMiddlewareOptions["loadChild"];
  /** The calling agent's current dispatch limits. */
  dispatchLimits(record: AgentRecord): ReturnType<TaskMiddlewareOptions["limits"]>;
}

/**
 * Builds an agent's graph: its backend's agent, plus the task middleware iff the backend accepts
 * subagents and the resolved allow-list (`context.subagents` ∩ subagents visible to the user) is
 * non-empty.
 */
export function buildAgentGraph(
  record: AgentRecord,
  allowedSubagents: readonly AgentRecord[],
  deps: AgentGraphDeps,
): AgentGraph {
  const backend = backendFor(record.backend_id);
  const mountTask = backend.acceptsSubagents && allowedSubagents.length > 0;
  const middleware = mountTask
    ? [
        createTaskMiddleware({
          subagents: allowedSubagents.map((subagent) => ({
            slug: subagent.slug,
            description: subagent.description || subagent.name,
          })),
          loadChild: deps.loadChild,
          limits: () => deps.dispatchLimits(record),
        }),
      ]
    : [];
  return backend.build(record, deps, middleware);
}

/** The cache key of a graph: everything that changes what {@link buildAgentGraph} builds. */
export function agentGraphKey(
  record: AgentRecord,
  allowedSubagents: readonly AgentRecord[],
): string {
  const subagents = allowedSubagents.map((subagent) => `${subagent.id}@${subagent.version}`);
  return `${record.id}@${record.version}[${subagents.join(",")}]`;
}
