/**
 * Where an edited message is sent from: the checkpoint of the conversation just before it. A run
 * started from that checkpoint with the new text forks the thread there (LangGraph keeps the old
 * branch in the history), which is how edit-and-resend and regenerate work without deleting
 * anything. Pure, so it is unit-tested without a server.
 */

/** A state of the thread's history as `POST /threads/:id/history` answers it. */
export interface HistoryState {
  values?: { messages?: { id?: string }[] } | Record<string, unknown>;
  next?: string[];
  checkpoint?: { checkpoint_id?: string };
  parent_checkpoint?: { checkpoint_id?: string } | null;
}

/**
 * The newest checkpoint whose messages are exactly `before` (by id, in order), preferring one
 * where the turn had ended (`next` empty) over one in the middle of a step; undefined when the
 * history (newest first) holds none.
 */
export function checkpointBefore(
  history: readonly HistoryState[],
  before: readonly string[],
): string | undefined {
  let fallback: string | undefined;
  for (const state of history) {
    const id = state.checkpoint?.checkpoint_id;
    const messages = (state.values as { messages?: { id?: string }[] } | undefined)?.messages ?? [];
    if (!id || messages.length !== before.length) continue;
    if (!messages.every((message, index) => message.id === before[index])) continue;
    if ((state.next ?? []).length === 0) return id;
    fallback ??= id;
  }
  return fallback;
}
