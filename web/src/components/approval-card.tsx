import {
  type ActionDraft,
  type ActionRequest,
  allowedDecisions,
  approvalElementId,
  type DecisionType,
  editDraft,
  type PendingApproval,
} from "../approvals.js";

/** What a card holds while the person decides: a draft per call, the last refusal, sending. */
export interface ApprovalCardState {
  drafts: (ActionDraft | undefined)[];
  /** Why the answer was not sent (not valid JSON) or was refused (the server's message). */
  error: string | undefined;
  /** Which call the error is about, when it is about one. */
  errorIndex: number | undefined;
  sending: boolean;
}

/** A card's state before anything is chosen. */
export function initialCardState(): ApprovalCardState {
  return { drafts: [], error: undefined, errorIndex: undefined, sending: false };
}

const LABELS: Record<DecisionType, string> = { approve: "Approve", edit: "Edit", reject: "Reject" };

/** langchain's description of a call when its gate sets none (then followed by tool and args). */
const DEFAULT_DESCRIPTION = "Tool execution requires approval";

/** The gate's own description of a call (`interrupt_on.<tool>.description`), if it has one. */
function descriptionOf(action: ActionRequest): string | undefined {
  const text = action.description?.trim();
  return text && !text.startsWith(`${DEFAULT_DESCRIPTION}\n\nTool: `) ? text : undefined;
}

/**
 * One pending request for approval: who asks (the agent, or a subagent with its task), each
 * gated call (tool and arguments) with the decisions its gate allows, an editor for the
 * arguments (JSON) and an optional message for a rejection. A request of one call is answered
 * by its Approve button at once; Edit and Reject open their field first. A request of several
 * calls takes a decision for each, then one Send. Controlled: the list keeps its state, so a
 * refused answer comes back with what was typed.
 */
export function ApprovalCard(props: {
  approval: PendingApproval;
  /** The agent or subagent that asks, as people know it. */
  who: string;
  state: ApprovalCardState;
  /** A run goes on in this conversation: nothing can be answered until it ends. */
  busy: boolean;
  onChange: (state: ApprovalCardState) => void;
  /** Sends the drafts (the card's state says which). */
  onSend: (drafts: (ActionDraft | undefined)[]) => void;
}) {
  const { approval, state } = props;
  const { id, value } = approval;
  const actions = value.actionRequests;
  const single = actions.length === 1;
  const disabled = props.busy || state.sending;
  const setDraft = (index: number, draft: ActionDraft | undefined) => {
    const drafts = [...state.drafts];
    drafts[index] = draft;
    props.onChange({ ...state, drafts, error: undefined, errorIndex: undefined });
  };
  const choose = (index: number, type: DecisionType, action: ActionRequest) => {
    if (single && type === "approve") {
      props.onSend([{ type: "approve" }]);
      return;
    }
    if (state.drafts[index]?.type === type) return;
    setDraft(
      index,
      type === "approve"
        ? { type }
        : type === "edit"
          ? editDraft(action)
          : { type: "reject", message: "" },
    );
  };
  const fieldId = (index: number, kind: string) => `${approvalElementId(id)}-${index}-${kind}`;
  const chosen = state.drafts.filter((draft) => draft !== undefined).length;
  const onlyDraft = single ? state.drafts[0] : undefined;
  const sendLabel = single
    ? onlyDraft?.type === "edit"
      ? "Send edited call"
      : "Send rejection"
    : "Send decisions";
  const showSend = single ? onlyDraft !== undefined : true;
  const headingId = `${approvalElementId(id)}-heading`;
  const errorId = `${approvalElementId(id)}-error`;
  return (
    <article
      class="approval-card"
      id={approvalElementId(id)}
      tabIndex={-1}
      data-approval-card=""
      data-approval-id={id}
      data-subagent-slug={value.subagent?.subagent_type}
      aria-labelledby={headingId}
    >
      <header>
        <h2 id={headingId}>
          Approval needed: {props.who}
          {value.subagent ? " (subagent)" : ""}
        </h2>
      </header>
      {value.subagent && (
        <p class="task-description" title={value.subagent.description}>
          Task: {value.subagent.description}
        </p>
      )}
      <form
        onSubmit={(event) => {
          event.preventDefault();
          if (!disabled) props.onSend(state.drafts);
        }}
      >
        {actions.map((action, index) => {
          const draft = state.drafts[index];
          const description = descriptionOf(action);
          const invalid = state.error !== undefined && state.errorIndex === index;
          return (
            <fieldset key={index} class="approval-action" data-approval-tool={action.name}>
              <legend class="approval-tool">
                Tool <code>{action.name}</code>
              </legend>
              {description && <p class="muted approval-description">{description}</p>}
              <p class="tool-label">Arguments</p>
              <pre>{JSON.stringify(action.args ?? {}, null, 2)}</pre>
              <div class="decision-buttons">
                {allowedDecisions(value, index).map((type) => (
                  <button
                    key={type}
                    type="button"
                    class={type === "approve" ? "" : type === "reject" ? "danger" : "secondary"}
                    aria-pressed={single && type === "approve" ? undefined : draft?.type === type}
                    disabled={disabled}
                    onClick={() => choose(index, type, action)}
                  >
                    {LABELS[type]}
                  </button>
                ))}
              </div>
              {draft?.type === "edit" && (
                <div class="field">
                  <label for={fieldId(index, "args")}>Arguments of {action.name} (JSON)</label>
                  <textarea
                    id={fieldId(index, "args")}
                    class="approval-args"
                    rows={Math.min(12, Math.max(3, draft.argsText.split("\n").length))}
                    spellcheck={false}
                    aria-invalid={invalid ? "true" : undefined}
                    aria-describedby={invalid ? errorId : undefined}
                    value={draft.argsText}
                    disabled={disabled}
                    onInput={(event) =>
                      setDraft(index, {
                        type: "edit",
                        argsText: (event.target as HTMLTextAreaElement).value,
                      })
                    }
                  />
                </div>
              )}
              {draft?.type === "reject" && (
                <div class="field">
                  <label for={fieldId(index, "message")}>Why (optional, the agent reads it)</label>
                  <textarea
                    id={fieldId(index, "message")}
                    rows={2}
                    value={draft.message}
                    disabled={disabled}
                    onInput={(event) =>
                      setDraft(index, {
                        type: "reject",
                        message: (event.target as HTMLTextAreaElement).value,
                      })
                    }
                  />
                </div>
              )}
            </fieldset>
          );
        })}
        {state.error && (
          <p role="alert" class="error" id={errorId}>
            {state.error}
          </p>
        )}
        {props.busy && !state.sending && (
          <p class="muted">A run is going on in this conversation: answer when it has ended.</p>
        )}
        {state.sending && (
          <p class="working" aria-busy="true">
            Sending…
          </p>
        )}
        {showSend && (
          <div class="form-actions">
            <button type="submit" disabled={disabled || (!single && chosen < actions.length)}>
              {sendLabel}
            </button>
            {single && (
              <button
                type="button"
                class="secondary"
                disabled={disabled}
                onClick={() => setDraft(0, undefined)}
              >
                Back
              </button>
            )}
          </div>
        )}
      </form>
    </article>
  );
}
