import { useState } from "preact/hooks";
import type { Api } from "../api.js";
import { type ActionDraft, decisionsOf } from "../approvals.js";
import {
  ASYNC_TASK_STATUS_TEXT,
  type AsyncTask,
  answerBody,
  isActiveTask,
  taskApproval,
} from "../async-tasks.js";
import { formatElapsed } from "../text.js";
import { ApprovalCard, type ApprovalCardState, initialCardState } from "./approval-card.js";
import { MarkdownText } from "./markdown-text.js";
import { useNow } from "./use-now.js";

/** The full answer, once asked for: loading, read (null: none), or why it cannot be read. */
type FullAnswer = { state: "loading" } | { state: "read"; text: string | null } | { error: string };

/**
 * One background task: its subagent, status, elapsed time, task, the start of its answer (the
 * whole of it on opening "Full answer"), its error, its request for approval while it waits
 * (the console's approval card, answered on the task's own route), Cancel while it is active,
 * and a way into its own thread.
 */
export function AsyncTaskRow(props: {
  api: Api;
  threadId: string;
  task: AsyncTask;
  name: string;
  onChanged: (task: AsyncTask) => void;
  onOpenThread: () => void;
}) {
  const { api, threadId, task, name } = props;
  const active = isActiveTask(task);
  const moving = task.status === "running" || task.status === "pending";
  const now = useNow(active, 1_000);
  const [cancelling, setCancelling] = useState(false);
  const [failure, setFailure] = useState<string | undefined>();
  const [answer, setAnswer] = useState<FullAnswer | undefined>();
  const [card, setCard] = useState<ApprovalCardState>(initialCardState);
  const approval = taskApproval(task);
  const ended = task.finished_at ? Date.parse(task.finished_at) : now;
  const elapsed = formatElapsed(ended - Date.parse(task.created_at));

  const cancel = async () => {
    setCancelling(true);
    setFailure(undefined);
    try {
      props.onChanged(await api.cancelAsyncTask(threadId, task.id));
    } catch (caught) {
      setFailure(`Cannot cancel: ${(caught as Error).message}`);
    } finally {
      setCancelling(false);
    }
  };

  // The answer is read once, when the details are first opened: a finished task's never changes.
  const readAnswer = async () => {
    if (answer && !("error" in answer)) return;
    setAnswer({ state: "loading" });
    try {
      const full = await api.asyncTask(threadId, task.id);
      setAnswer({ state: "read", text: full.result });
    } catch (caught) {
      setAnswer({ error: `Cannot read the answer: ${(caught as Error).message}` });
    }
  };

  const send = async (drafts: (ActionDraft | undefined)[]) => {
    if (!approval) return;
    const result = decisionsOf(approval.value, drafts);
    if (!result.ok) {
      setCard({ ...card, drafts, error: result.message, errorIndex: result.index });
      return;
    }
    setCard({ ...card, drafts, error: undefined, errorIndex: undefined, sending: true });
    try {
      props.onChanged(await api.answerAsyncTask(threadId, task.id, answerBody(result.decisions)));
      setCard(initialCardState());
    } catch (caught) {
      // Refused (422: the decisions do not fit): shown on the card, with what was typed.
      setCard({ drafts, sending: false, error: (caught as Error).message, errorIndex: undefined });
    }
  };

  return (
    <article
      class={`subagent-card async-task status-${task.status}`}
      data-async-task=""
      data-task-id={task.id}
      data-status={task.status}
      data-subagent-slug={task.subagent_type}
      aria-label={`Background task of ${name}: ${task.description}`}
      aria-busy={moving ? "true" : undefined}
    >
      <header>
        <span class="subagent-name" title={task.subagent_type}>
          {name}
        </span>
        <span class="status" role="status">
          {moving && <span class="spinner" aria-hidden="true" />}
          {ASYNC_TASK_STATUS_TEXT[task.status]}
        </span>
      </header>
      <p class="task-description" title={task.description}>
        {task.description}
      </p>
      <dl class="facts">
        <div>
          <dt>Elapsed</dt>
          <dd>{elapsed}</dd>
        </div>
        {task.updates > 0 && (
          <div>
            <dt>Follow-ups</dt>
            <dd>{task.updates}</dd>
          </div>
        )}
      </dl>
      {task.result_preview && <p class="preview">{task.result_preview}</p>}
      {task.error && <p class="error">{task.error}</p>}
      {approval && (
        <ApprovalCard
          approval={approval}
          who={name}
          state={card}
          busy={false}
          onChange={setCard}
          onSend={(drafts) => void send(drafts)}
        />
      )}
      {task.status === "completed" && (
        <details
          class="async-task-answer"
          onToggle={(event) => (event.target as HTMLDetailsElement).open && void readAnswer()}
        >
          <summary>Full answer</summary>
          {answer === undefined || ("state" in answer && answer.state === "loading") ? (
            <p aria-busy="true">Loading…</p>
          ) : "error" in answer ? (
            <p role="alert" class="error">
              {answer.error}
            </p>
          ) : answer.text ? (
            <MarkdownText text={answer.text} />
          ) : (
            <p class="muted">No answer was kept.</p>
          )}
        </details>
      )}
      {failure && (
        <p role="alert" class="error">
          {failure}
        </p>
      )}
      <div class="form-actions">
        {active && (
          <button
            type="button"
            class="danger"
            disabled={cancelling}
            aria-label={`Cancel background task of ${name}: ${task.description}`}
            onClick={() => void cancel()}
          >
            {cancelling ? "Cancelling…" : "Cancel"}
          </button>
        )}
        <button
          type="button"
          class="secondary"
          aria-label={`Open thread of ${name}: ${task.description}`}
          onClick={props.onOpenThread}
        >
          Open thread
        </button>
      </div>
    </article>
  );
}
