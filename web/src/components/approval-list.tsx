import { useState } from "preact/hooks";
import {
  type ActionDraft,
  approvalElementId,
  type Decision,
  decisionsOf,
  type PendingApproval,
} from "../approvals.js";
import { ApprovalCard, type ApprovalCardState, initialCardState } from "./approval-card.js";

/** Brings request `id`'s card into view and moves the focus to it. */
export function showApproval(id: string): void {
  const card = document.getElementById(approvalElementId(id));
  card?.scrollIntoView?.({ block: "center" });
  card?.focus();
}

/**
 * The requests for approval a conversation waits on, one card each. It keeps each card's state
 * by request id, so a refused answer (its card hidden while it was sent) comes back with what
 * was typed and the server's reason. Render it keyed by the thread: another conversation starts
 * afresh.
 */
export function ApprovalList(props: {
  approvals: readonly PendingApproval[];
  /** The name of whoever asks: the conversation's agent, or the subagent a request names. */
  who: (approval: PendingApproval) => string;
  /** A run goes on in this conversation. */
  busy: boolean;
  /**
   * Sends the answer to request `id` (a run resuming the thread); resolves with why the server
   * refused it, or undefined once the answer was taken.
   */
  onAnswer: (id: string, decisions: Decision[]) => Promise<string | undefined>;
}) {
  const [states, setStates] = useState<Record<string, ApprovalCardState>>({});
  if (props.approvals.length === 0) return null;
  const stateOf = (id: string) => states[id] ?? initialCardState();
  const update = (id: string, change: Partial<ApprovalCardState>) =>
    setStates((current) => ({
      ...current,
      [id]: { ...(current[id] ?? initialCardState()), ...change },
    }));

  const send = async (approval: PendingApproval, drafts: (ActionDraft | undefined)[]) => {
    const result = decisionsOf(approval.value, drafts);
    if (!result.ok) {
      update(approval.id, { drafts, error: result.message, errorIndex: result.index });
      return;
    }
    update(approval.id, { drafts, error: undefined, errorIndex: undefined, sending: true });
    const refused = await props.onAnswer(approval.id, result.decisions);
    update(approval.id, { sending: false, error: refused, errorIndex: undefined });
  };

  return (
    <section class="approvals" aria-label="Requests for approval">
      {props.approvals.map((approval) => (
        <ApprovalCard
          key={approval.id}
          approval={approval}
          who={props.who(approval)}
          state={stateOf(approval.id)}
          busy={props.busy}
          onChange={(state) => update(approval.id, state)}
          onSend={(drafts) => void send(approval, drafts)}
        />
      ))}
    </section>
  );
}
