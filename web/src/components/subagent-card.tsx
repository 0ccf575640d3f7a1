import type { SubagentCard as Card, ChatMessage } from "../chat-state.js";
import { baseName, formatElapsed } from "../text.js";
import { useNow } from "./use-now.js";

const STATUS_TEXT: Record<Card["status"], string> = {
  running: "running",
  waiting: "waiting for approval",
  completed: "completed",
  failed: "failed",
  cancelled: "cancelled",
  timeout: "timed out",
};

/**
 * One `task` call: which subagent, its status, the time it has taken (ticking while it runs), its
 * rounds, its latest words, and a way into its own thread. A child waiting for approval links to
 * the card of its request.
 */
export function SubagentCard(props: {
  card: Card;
  /** The subagent's name, when the user may see its record (else its slug is shown). */
  name?: string | undefined;
  /** The run's stream is lost and being retried: a running card's state is not live. */
  connectionLost?: boolean;
  onOpenThread: (card: Card) => void;
  /** The pending request this card's child waits on (its status is `waiting`). */
  approvalId?: string | undefined;
  onShowApproval?: (approvalId: string) => void;
}) {
  const { card } = props;
  const running = card.status === "running";
  const lost = running && props.connectionLost === true;
  const now = useNow(running && !lost);
  const name = props.name ?? card.subagentType;
  const started = card.startedAt ? Date.parse(card.startedAt) : undefined;
  const ended = card.finishedAt ? Date.parse(card.finishedAt) : now;
  const elapsed = started === undefined ? undefined : formatElapsed(ended - started);
  return (
    <article
      class={`subagent-card status-${card.status}`}
      data-subagent-card=""
      data-status={card.status}
      data-subagent-slug={card.subagentType}
      data-connection={lost ? "lost" : undefined}
      aria-label={`Subagent ${name}`}
      aria-busy={running && !lost ? "true" : undefined}
    >
      <header>
        <span class="subagent-name" title={card.subagentType}>
          {name}
        </span>
        <span class="status" role="status">
          {running && !lost && <span class="spinner" aria-hidden="true" />}
          {lost ? "connection lost" : STATUS_TEXT[card.status]}
        </span>
      </header>
      <p class="task-description" title={card.description}>
        {card.description}
      </p>
      <dl class="facts">
        <div>
          <dt>Elapsed</dt>
          <dd>{elapsed ?? "starting…"}</dd>
        </div>
        <div>
          <dt class="visually-hidden">Rounds</dt>
          <dd>
            Rounds: {card.rounds}
            {card.maxRoundsReached && " (limit reached)"}
          </dd>
        </div>
      </dl>
      {card.preview && <p class="preview">{card.preview}</p>}
      {card.messages.length > 0 && <OwnMessages messages={card.messages} name={name} />}
      {card.error && <p class="error">{card.error}</p>}
      {card.artifacts.length > 0 && (
        <p class="muted">Wrote: {card.artifacts.map((path) => baseName(path)).join(", ")}</p>
      )}
      {card.status === "waiting" && props.approvalId && (
        <button
          type="button"
          class="link"
          onClick={() => props.approvalId && props.onShowApproval?.(props.approvalId)}
        >
          Go to the request for approval of {name}
        </button>
      )}
      <button
        type="button"
        class="secondary"
        disabled={!card.childThreadId}
        aria-label={`Open thread of ${name}`}
        onClick={() => props.onOpenThread(card)}
      >
        Open thread
      </button>
    </article>
  );
}

/**
 * The subagent's own messages as its run streamed them (folded: the preview above shows the
 * latest). Plain text, and marked apart from the conversation's messages.
 */
function OwnMessages(props: { messages: ChatMessage[]; name: string }) {
  const { messages, name } = props;
  return (
    <details class="subagent-messages" data-subagent-messages={messages.length}>
      <summary>
        Messages of {name} ({messages.length})
      </summary>
      <ol>
        {messages.map((message) => {
          const calls = message.toolCalls.map((call) => call.name);
          const who =
            message.role === "assistant"
              ? name
              : message.role === "tool"
                ? `Result of ${message.toolName ?? "a tool"}`
                : "Task";
          return (
            <li key={message.id} data-subagent-message={message.role}>
              <span class="who">{who}:</span>{" "}
              {message.text || (calls.length ? `calls ${calls.join(", ")}` : "")}
            </li>
          );
        })}
      </ol>
    </details>
  );
}
