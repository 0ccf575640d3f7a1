import { useEffect, useRef, useState } from "preact/hooks";
import type { Api } from "../api.js";
import { type Branch, branchesOf } from "../branches.js";
import { toChatMessage } from "../chat-state.js";
import { MessageList } from "./message-list.js";

/** The first human message of a branch and its last words, to tell branches apart. */
function summary(branch: Branch): string {
  const messages = branch.messages.map(toChatMessage).filter((message) => message !== undefined);
  const asked = messages.filter((message) => message.role === "human").at(-1)?.text ?? "";
  const answered = messages.filter((message) => message.role === "assistant").at(-1)?.text ?? "";
  const clip = (text: string) => (text.length > 60 ? `${text.slice(0, 60)}…` : text);
  return answered ? `${clip(asked)} → ${clip(answered)}` : clip(asked);
}

/**
 * A conversation's branches (read-only): the current one, and every earlier version an edit or
 * a regenerate left in the thread's history, each with its messages.
 */
export function BranchesDialog(props: { api: Api; threadId: string; onClose: () => void }) {
  const dialog = useRef<HTMLDialogElement>(null);
  const [branches, setBranches] = useState<Branch[] | undefined>();
  const [error, setError] = useState<string | undefined>();

  useEffect(() => {
    dialog.current?.showModal();
  }, []);

  useEffect(() => {
    props.api.threadHistory(props.threadId).then(
      (history) => setBranches(branchesOf(history)),
      (caught: Error) => setError(`Cannot read the conversation's history: ${caught.message}`),
    );
  }, [props.api, props.threadId]);

  return (
    <dialog
      ref={dialog}
      class="child-thread"
      aria-labelledby="branches-title"
      onClose={props.onClose}
    >
      <h2 id="branches-title">Branches of this conversation</h2>
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      {branches === undefined && !error && <p aria-busy="true">Loading…</p>}
      {branches?.length === 1 && (
        <p class="hint">One branch: edit a message or regenerate an answer to make another.</p>
      )}
      <ol class="branches">
        {branches?.map((branch) => (
          <li key={branch.checkpointId} data-branch={branch.current ? "current" : "earlier"}>
            <details open={branch.current}>
              <summary>
                {branch.current ? "Current: " : "Earlier: "}
                {summary(branch)}
              </summary>
              <MessageList
                messages={branch.messages.map(toChatMessage).filter((m) => m !== undefined)}
              />
            </details>
          </li>
        ))}
      </ol>
      <form method="dialog">
        <button type="submit">Close</button>
      </form>
    </dialog>
  );
}
