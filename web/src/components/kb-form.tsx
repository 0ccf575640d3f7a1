import { useEffect, useRef, useState } from "preact/hooks";
import { formFieldOf } from "../agent-form-model.js";
import { type Api, ApiError } from "../api.js";
import {
  type KbFormValues,
  type KnowledgeBaseRecord,
  kbFormValues,
  kbPayload,
} from "../kb-model.js";

/** The form's text fields, with their labels and hints. */
const TEXT_FIELDS: {
  field: Exclude<keyof KbFormValues, "share_mode">;
  label: string;
  hint?: string;
}[] = [
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
 * Creates a knowledge base, or edits `kb`: name, description and sharing (the agents' rules:
 * private, listed users, or public; editors may change it and add files). Validation is the
 * server's: its error is shown next to the field it names, with that field focused. `onDone`
 * gets the saved record, or undefined on Cancel.
 */
export function KbForm(props: {
  api: Api;
  kb?: KnowledgeBaseRecord | undefined;
  onDone: (saved: KnowledgeBaseRecord | undefined) => void;
}) {
  const { api, kb } = props;
  const [values, setValues] = useState<KbFormValues>(() => kbFormValues(kb));
  const [error, setError] = useState<FormError | undefined>();
  const [saving, setSaving] = useState(false);
  const form = useRef<HTMLFormElement>(null);

  useEffect(() => {
    form.current?.querySelector<HTMLInputElement>("#kb-name")?.focus();
  }, []);
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

  const set = (field: keyof KbFormValues, value: string) =>
    setValues((current) => ({ ...current, [field]: value }));

  const save = async (event: Event) => {
    event.preventDefault();
    setSaving(true);
    setError(undefined);
    try {
      const payload = kbPayload(values, kb);
      props.onDone(
        kb ? await api.updateKnowledgeBase(kb.id, payload) : await api.createKnowledgeBase(payload),
      );
    } catch (caught) {
      const field = formFieldOf(caught instanceof ApiError ? caught.field : undefined);
      const known = field !== undefined && (field === "share_mode" || field in values);
      setError({ field: known ? field : undefined, message: (caught as Error).message });
    } finally {
      setSaving(false);
    }
  };

  const fieldError = (field: string) =>
    error?.field === field ? (
      <p id={`kb-error-${field}`} class="field-error" data-error-for={field}>
        {error.message}
      </p>
    ) : null;
  const invalid = (field: string) => (error?.field === field ? ("true" as const) : undefined);
  const describedBy = (field: string, hint: boolean) =>
    [hint ? `kb-hint-${field}` : "", error?.field === field ? `kb-error-${field}` : ""]
      .filter(Boolean)
      .join(" ") || undefined;

  return (
    <form ref={form} class="agent-form" aria-labelledby="kb-form-title" onSubmit={save} noValidate>
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
            aria-invalid={invalid("share_mode")}
            aria-describedby={describedBy("share_mode", false)}
            onChange={(event) => set("share_mode", (event.target as HTMLSelectElement).value)}
          >
            <option value="private">private (only me)</option>
            <option value="users">users (the ones listed)</option>
            <option value="public">public (everyone)</option>
          </select>
          {fieldError("share_mode")}
        </div>
        {TEXT_FIELDS.slice(2).map((spec) => textField(spec))}
      </div>
      <div class="form-actions">
        <button type="submit" disabled={saving}>
          {saving ? "Saving…" : kb ? "Save" : "Create"}
        </button>
        <button type="button" class="secondary" onClick={() => props.onDone(undefined)}>
          Cancel
        </button>
      </div>
    </form>
  );

  function textField(spec: (typeof TEXT_FIELDS)[number]) {
    const id = `kb-${spec.field}`;
    return (
      <div class="field" key={spec.field}>
        <label for={id}>{spec.label}</label>
        <input
          id={id}
          value={values[spec.field]}
          required={spec.field === "name"}
          aria-invalid={invalid(spec.field)}
          aria-describedby={describedBy(spec.field, spec.hint !== undefined)}
          onInput={(event) => set(spec.field, (event.target as HTMLInputElement).value)}
        />
        {spec.hint && (
          <p id={`kb-hint-${spec.field}`} class="hint field-hint">
            {spec.hint}
          </p>
        )}
        {fieldError(spec.field)}
      </div>
    );
  }
}
