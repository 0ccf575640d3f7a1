import { useEffect, useRef, useState } from "preact/hooks";
import { type Api, ApiError } from "../api.js";
import {
  type EmbedderChange,
  embedderChange,
  embedderChangeWarning,
  embedderPayload,
} from "../kb-embedder-model.js";
import {
  type KbFormValues,
  type KnowledgeBaseRecord,
  kbFormFieldOf,
  kbFormValues,
  kbPayload,
} from "../kb-model.js";
import { ConfirmDialog } from "./confirm-dialog.js";
import { KbEmbedderFields } from "./kb-embedder-fields.js";
import { TextField } from "./text-field.js";
import { useFirstFocus } from "./use-first-focus.js";

type TextKey = "name" | "description" | "share_uids" | "share_editors";

/** The form's text fields, with their labels and hints. */
const TEXT_FIELDS: { field: TextKey; label: string; hint?: string }[] = [
  { field: "name", label: "Name", hint: "how agents' knowledge_bases name it" },
  { field: "description", label: "Description", hint: "shown to the model" },
  { field: "share_uids", label: "Shared with", hint: "user ids, comma-separated" },
  { field: "share_editors", label: "Editors", hint: "user ids, comma-separated" },
];

/** An API error, placed next to the form field it names (or at the top of the form). */
interface FormError {
  field: string | undefined;
  message: string;
}

/**
 * Creates a knowledge base, or edits `kb`: name, description, sharing (the agents' rules:
 * private, listed users, or public; editors may change it and add files) and the embedder.
 * Validation is the server's: its error is shown next to the field it names, with that field
 * focused. An edit that reindexes or drops the vectors of `fileCount` files says so and asks
 * first. `onDone` gets the saved record, or undefined on Cancel.
 */
export function KbForm(props: {
  api: Api;
  kb?: KnowledgeBaseRecord | undefined;
  /** How many files the edited knowledge base has (0 or unknown: nothing to warn about). */
  fileCount?: number | undefined;
  onDone: (saved: KnowledgeBaseRecord | undefined) => void;
}) {
  const { api, kb } = props;
  const [values, setValues] = useState<KbFormValues>(() => kbFormValues(kb));
  const [error, setError] = useState<FormError | undefined>();
  const [saving, setSaving] = useState(false);
  /** A change to the vectors waiting for the user's yes, with what it does. */
  const [confirming, setConfirming] = useState<
    { change: EmbedderChange; warning: string } | undefined
  >();
  const form = useRef<HTMLFormElement>(null);

  useFirstFocus(form, "#kb-name");
  useEffect(() => {
    if (!error || !form.current) return;
    const input = error.field
      ? form.current.querySelector<HTMLElement>(`#kb-${error.field}`)
      : null;
    (input ?? form.current.querySelector<HTMLElement>('[role="alert"]'))?.scrollIntoView?.({
      block: "center",
    });
    input?.focus({ preventScroll: true });
  }, [error]);

  const set = <K extends keyof KbFormValues>(field: K, value: KbFormValues[K]) =>
    setValues((current) => ({ ...current, [field]: value }));

  const submit = async () => {
    setSaving(true);
    setError(undefined);
    try {
      const payload = kbPayload(values, kb);
      props.onDone(
        kb ? await api.updateKnowledgeBase(kb.id, payload) : await api.createKnowledgeBase(payload),
      );
    } catch (caught) {
      const field = kbFormFieldOf(caught instanceof ApiError ? caught.field : undefined);
      const known = field !== undefined && (field === "share_mode" || field in values);
      setError({ field: known ? field : undefined, message: (caught as Error).message });
    } finally {
      setSaving(false);
    }
  };

  const save = (event: Event) => {
    event.preventDefault();
    const change = kb ? embedderChange(kb.embedder, embedderPayload(values)) : "none";
    const warning = embedderChangeWarning(change, props.fileCount ?? 0);
    if (warning) setConfirming({ change, warning });
    else void submit();
  };

  const errorFor = (field: string) => (error?.field === field ? error.message : undefined);

  return (
    <>
      <form
        ref={form}
        class="agent-form"
        aria-labelledby="kb-form-title"
        onSubmit={save}
        noValidate
      >
        <h2 id="kb-form-title">{kb ? `Edit ${kb.name}` : "New knowledge base"}</h2>
        {error && error.field === undefined && (
          <p role="alert" class="error">
            {error.message}
          </p>
        )}
        <div class="grid">
          {TEXT_FIELDS.slice(0, 2).map((spec) => textField(spec))}
          <div class="field">
            <label for="kb-share_mode">Sharing</label>
            <select
              id="kb-share_mode"
              value={values.share_mode}
              aria-invalid={errorFor("share_mode") ? "true" : undefined}
              aria-describedby={errorFor("share_mode") ? "kb-error-share_mode" : undefined}
              onChange={(event) =>
                set(
                  "share_mode",
                  (event.target as HTMLSelectElement).value as KbFormValues["share_mode"],
                )
              }
            >
              <option value="private">private (only me)</option>
              <option value="users">users (the ones listed)</option>
              <option value="public">public (everyone)</option>
            </select>
            {errorFor("share_mode") && (
              <p id="kb-error-share_mode" class="field-error" data-error-for="share_mode">
                {errorFor("share_mode")}
              </p>
            )}
          </div>
          {TEXT_FIELDS.slice(2).map((spec) => textField(spec))}
        </div>
        <KbEmbedderFields
          values={values}
          error={error}
          onChange={(patch) => setValues((current) => ({ ...current, ...patch }))}
        />
        <div class="form-actions">
          <button type="submit" disabled={saving}>
            {saving ? "Saving…" : kb ? "Save" : "Create"}
          </button>
          <button type="button" class="secondary" onClick={() => props.onDone(undefined)}>
            Cancel
          </button>
        </div>
      </form>
      {confirming && (
        <ConfirmDialog
          title={
            confirming.change === "drop"
              ? `Turn vectors off for "${kb?.name ?? ""}"?`
              : `Reindex "${kb?.name ?? ""}"?`
          }
          confirmLabel={confirming.change === "drop" ? "Save and drop vectors" : "Save and reindex"}
          onConfirm={() => {
            setConfirming(undefined);
            void submit();
          }}
          onCancel={() => setConfirming(undefined)}
        >
          <p data-embedder-warning>{confirming.warning}</p>
        </ConfirmDialog>
      )}
    </>
  );

  function textField(spec: (typeof TEXT_FIELDS)[number]) {
    return (
      <TextField
        key={spec.field}
        prefix="kb"
        field={spec.field}
        label={spec.label}
        hint={spec.hint}
        value={values[spec.field]}
        required={spec.field === "name"}
        error={errorFor(spec.field)}
        onInput={(value) => set(spec.field, value)}
      />
    );
  }
}
