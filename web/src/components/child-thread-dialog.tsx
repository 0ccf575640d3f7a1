import { useEffect, useRef, useState } from "preact/hooks";
import type { Api } from "../api.js";
import { type ChatMessage, type SubagentCard, toChatMessage } from "../chat-state.js";
import { MessageList } from "./message-list.js";

/**
 * A subagent's own thread (its messages, from its first human message to its answer), read
 * through the parent thread, in a modal dialog.
 */
export function ChildThreadDialog(props: {
  api: Api;
  threadId: string;
  card: SubagentCard;
  onClose: () => void;
}) {
  const dialog = useRef<HTMLDialogElement>(null);
  const [messages, setMessages] = useState<ChatMessage[] | undefined>();
  const [error, setError] = useState<string | undefined>();
  const childThreadId = props.card.childThreadId ?? "";

  useEffect(() => {
    dialog.current?.showModal();
  }, []);

  useEffect(() => {
    props.api.childThread(props.threadId, childThreadId).then(
      (child) => {
        const raw = (child.values as { messages?: unknown[] } | undefined)?.messages ?? [];
        setMessages(raw.map(toChatMessage).filter((message) => message !== undefined));
      },
      (caught: Error) => setError(caught.message),
    );
  }, [props.api, props.threadId, childThreadId]);

  return (
    <dialog
      ref={dialog}
      class="child-thread"
      aria-labelledby="child-thread-title"
      onClose={props.onClose}
    >
      <h2 id="child-thread-title">Subagent thread: {props.card.subagentType}</h2>
      <p class="muted">
        <code>{childThreadId}</code>
      </p>
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      {messages === undefined && !error && <p aria-busy="true">Loading…</p>}
      {messages && <MessageList messages={messages} />}
      <form method="dialog">
        <button type="submit">Close</button>
      </form>
    </dialog>
  );
}
