/**
 * Which knowledge bases a run may search: the ids its context snapshotted when it started,
 * re-checked against what the user sees now (a knowledge base deleted or unshared during the run
 * drops out; one created later never joins). A run whose host made its own context (no
 * snapshot) resolves the agent's selection at each use instead.
 */

import { readRunContext } from "../run-context.js";
import type { KnowledgeBaseRecord } from "./schema.js";
import type { KnowledgeBases } from "./service.js";

/** What the knowledge tools and prompt know of the agent they serve. */
export interface KnowledgeAgent {
  slug: string;
  /** Its `context.knowledge_bases`. */
  selection: readonly string[] | undefined;
}

/** The run's user and the knowledge bases it may search now. */
export interface RunKnowledge {
  uid: string;
  bases: KnowledgeBaseRecord[];
}

/**
 * The knowledge bases of the run whose context and config these are.
 * @throws SubagentGraphError `VALIDATION_FAILED` (no run context), `UNKNOWN_KNOWLEDGE_BASE`
 *   (no snapshot, and the agent names one the user cannot see).
 */
export async function runKnowledge(
  api: KnowledgeBases,
  agent: KnowledgeAgent,
  context: unknown,
  configurable: unknown,
): Promise<RunKnowledge> {
  const run = readRunContext(context, configurable, { reader: "knowledge base tools" });
  const snapshot = run.knowledge_base_ids;
  if (snapshot === undefined) {
    return {
      uid: run.uid,
      bases: await api.resolveSelection(run.uid, agent.selection, agent.slug),
    };
  }
  const visible = await api.visibleByIds(run.uid, snapshot);
  // In the snapshot's order (the agent's own order of preference).
  const bases = snapshot.flatMap((id) => visible.find((kb) => kb.id === id) ?? []);
  return { uid: run.uid, bases };
}

/**
 * False when the run's context says it has no knowledge bases (an empty snapshot); true when it
 * has some, or no snapshot at all (a host's own context: resolved at each use).
 */
export function mayHaveKnowledge(context: unknown): boolean {
  const snapshot = (context as { knowledge_base_ids?: unknown } | null)?.knowledge_base_ids;
  return !(Array.isArray(snapshot) && snapshot.length === 0);
}
