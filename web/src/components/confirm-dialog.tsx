import type { ComponentChildren } from "preact";
import { useEffect, useRef } from "preact/hooks";

/**
 * One modal question with a confirm and a cancel button (instead of the browser's `confirm()`,
 * which cannot say what will happen in more than a line, nor be styled, nor be tested like the
 * rest of the page). Escape or Cancel answers no.
 */
export function ConfirmDialog(props: {
  title: string;
  children: ComponentChildren;
  confirmLabel: string;
  onConfirm: () => void;
  onCancel: () => void;
}) {
  const dialog = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    dialog.current?.showModal();
  }, []);
  return (
    <dialog
      ref={dialog}
      class="confirm"
      aria-labelledby="confirm-title"
      onClose={props.onCancel}
      onCancel={props.onCancel}
    >
      <h2 id="confirm-title">{props.title}</h2>
      <div class="confirm-body">{props.children}</div>
      <div class="form-actions">
        <button type="button" class="danger" onClick={props.onConfirm}>
          {props.confirmLabel}
        </button>
        <button type="button" class="secondary" onClick={() => dialog.current?.close()}>
          Cancel
        </button>
      </div>
    </dialog>
  );
}
