import type { ComponentChildren } from "preact";
import { regenerable } from "../chat-requests.js";
import type { ChatMessage } from "../chat-state.js";
import type { Editing } from "../chat-store.js";

/** What `MessageList` puts after a message, or in its place (`replace`). */
type Actions = { node: ComponentChildren; replace?: boolean } | undefined;

/**
 * The actions on a conversation's messages, for `MessageList`'s `renderActions`: Edit on every
 * human message (the message being edited becomes a form that resends it), Regenerate on the last
 * answer. Offer them only while nothing runs.
 */
export function messageActions(props: {
  messages: readonly ChatMessage[];
  editing: Editing | undefined;
  onEdit: (editing: Editing | undefined) => void;
  onResend: (messageId: string, text: string) => void;
}): (message: ChatMessage, index: number) => Actions {
  const { editing, onEdit, onResend } = props;
  return (message, index) => {
    if (editing?.id === message.id) {
      return {
        replace: true,
        node: (
          <form
            class="edit-message"
            onSubmit={(event) => {
              event.preventDefault();
              onResend(message.id, editing.text);
            }}
          >
            <label for="edit-message">Edit message</label>
            <textarea
              id="edit-message"
              rows={3}
              value={editing.text}
              onInput={(event) =>
                onEdit({ id: message.id, text: (event.target as HTMLTextAreaElement).value })
              }
            />
            <div class="form-actions">
              <button type="submit" disabled={!editing.text.trim()}>
                Send edited
              </button>
              <button type="button" class="secondary" onClick={() => onEdit(undefined)}>
                Cancel edit
              </button>
            </div>
          </form>
        ),
      };
    }
    if (message.role === "human") {
      return {
        node: (
          <button
            type="button"
            class="link message-action"
            aria-label={`Edit message: ${message.text.slice(0, 40)}`}
            onClick={() => onEdit({ id: message.id, text: message.text })}
          >
            Edit
          </button>
        ),
      };
    }
    const asked = regenerable(props.messages, index);
    if (!asked) return undefined;
    return {
      node: (
        <button
          type="button"
          class="link message-action"
          onClick={() => onResend(asked.id, asked.text)}
        >
          Regenerate
        </button>
      ),
    };
  };
}
