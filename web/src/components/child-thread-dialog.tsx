import { useEffect, useRef, useState } from "preact/hooks";
import { type Api, ApiError } from "../api.js";
import { type ChatMessage, type SubagentCard, toChatMessage } from "../chat-state.js";
import { MessageList } from "./message-list.js";

/** How often a running child's thread is read again while its dialog is open. */
const REFRESH_MS = 1_000;

/**
 * A subagent's own thread (its messages and tool calls, from its first human message to its
 * answer), read through the parent thread, in a modal dialog. While the child runs the thread is
 * read again every second, so the dialog follows it; once the card says it ended, once more.
 */
export function ChildThreadDialog(props: {
  api: Api;
  threadId: string;
  card: SubagentCard;
  name?: string | undefined;
  onClose: () => void;
}) {
  const dialog = useRef<HTMLDialogElement>(null);
  const [messages, setMessages] = useState<ChatMessage[] | undefined>();
  const [error, setError] = useState<string | undefined>();
  const childThreadId = props.card.childThreadId ?? "";
  const running = props.card.status === "running";
  const name = props.name ?? props.card.subagentType;

  useEffect(() => {
    dialog.current?.showModal();
  }, []);

  // `status` is a dependency so the thread is read once more when the child ends.
  useEffect(() => {
    let current = true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const read = () =>
      props.api.childThread(props.threadId, childThreadId).then(
        (child) => {
          if (!current) return;
          const raw = (child.values as { messages?: unknown[] } | undefined)?.messages ?? [];
          setMessages(raw.map(toChatMessage).filter((message) => message !== undefined));
          setError(undefined);
        },
        (caught: Error) => {
          if (!current) return;
          setError(
            caught instanceof ApiError && caught.status === 404
              ? "This subagent's thread cannot be read (its conversation was deleted or changed)."
              : `Cannot read the subagent's thread: ${caught.message}`,
          );
        },
      );
    const loop = async () => {
      await read();
      if (current && running) timer = setTimeout(() => void loop(), REFRESH_MS);
    };
    void loop();
    return () => {
      current = false;
      if (timer) clearTimeout(timer);
    };
  }, [props.api, props.threadId, childThreadId, running]);

  return (
    <dialog
      ref={dialog}
      class="child-thread"
      aria-labelledby="child-thread-title"
      onClose={props.onClose}
    >
      <h2 id="child-thread-title">Subagent thread: {name}</h2>
      <p class="muted">
        {running ? "Running: updates as it goes. " : ""}
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
