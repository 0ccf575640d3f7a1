/**
 * A conversation's branches, from its checkpoint history: every edit or regenerate runs from an
 * earlier checkpoint, so the history is a tree, and each leaf (a checkpoint no other one follows)
 * is where one branch ends. Pure, so it is unit-tested without a server.
 */

import type { HistoryState } from "./fork-point.js";

/** Where one branch of the conversation ends. */
export interface Branch {
  checkpointId: string;
  /** The branch's messages as stored (wire form). */
  messages: unknown[];
  /** The thread's head: the branch the conversation shows and continues. */
  current: boolean;
}

/**
 * The branches of a history listed newest first (as the API answers), the current one first;
 * branches that hold no message (an empty start) are left out.
 */
export function branchesOf(history: readonly HistoryState[]): Branch[] {
  const parents = new Set(
    history.map((state) => state.parent_checkpoint?.checkpoint_id).filter((id) => id !== undefined),
  );
  const head = history[0]?.checkpoint?.checkpoint_id;
  const branches: Branch[] = [];
  for (const state of history) {
    const id = state.checkpoint?.checkpoint_id;
    if (!id || parents.has(id)) continue;
    const messages = (state.values as { messages?: unknown[] } | undefined)?.messages ?? [];
    if (messages.length === 0) continue;
    branches.push({ checkpointId: id, messages, current: id === head });
  }
  return branches;
}
