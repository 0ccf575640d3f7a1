import { baseName } from "../text.js";

/**
 * The message box: Enter sends (Shift+Enter is a new line), a file can be attached (uploaded at
 * once; the message names it), and Cancel stops the run going on.
 */
export function ChatComposer(props: {
  draft: string;
  /** Paths of the files attached since the last send. */
  attached: readonly string[];
  attaching: boolean;
  /** Sending is refused now (a run goes on, the thread waits for approval, or one is sent). */
  blocked: boolean;
  /** The run going on, if any: Cancel shows while there is one. */
  live: { runId: string | undefined; cancelRequested: boolean } | undefined;
  onDraft: (draft: string) => void;
  onSend: () => void;
  onAttach: (file: File) => Promise<void>;
  onCancel: () => void;
}) {
  const { draft, attached, attaching, live } = props;
  const attach = async (input: HTMLInputElement) => {
    const file = input.files?.[0];
    if (!file) return;
    try {
      await props.onAttach(file);
    } finally {
      input.value = "";
    }
  };
  return (
    <form
      class="composer"
      onSubmit={(event) => {
        event.preventDefault();
        props.onSend();
      }}
    >
      <label for="message">Message</label>
      <textarea
        id="message"
        rows={3}
        value={draft}
        placeholder="Enter sends, Shift+Enter for a new line"
        onInput={(event) => props.onDraft((event.target as HTMLTextAreaElement).value)}
        onKeyDown={(event) => {
          if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
            event.preventDefault();
            props.onSend();
          }
        }}
      />
      {attached.length > 0 && (
        <p class="attached muted" data-attached="">
          Attached: {attached.map((path) => baseName(path)).join(", ")}
        </p>
      )}
      <div class="form-actions">
        <label class="attach secondary" for="attach">
          {attaching ? "Attaching…" : "Attach file"}
        </label>
        <input
          id="attach"
          class="attach-input"
          type="file"
          disabled={attaching}
          onChange={(event) => void attach(event.target as HTMLInputElement)}
        />
        <button type="submit" disabled={props.blocked || !draft.trim()}>
          Send
        </button>
        {live && (
          <button
            type="button"
            class="danger"
            disabled={!live.runId || live.cancelRequested}
            onClick={props.onCancel}
          >
            Cancel
          </button>
        )}
      </div>
    </form>
  );
}
