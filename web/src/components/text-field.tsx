/**
 * One labelled text input of a form, with its hint and, when the server named it, its error
 * (`data-error-for`, `aria-invalid`, and described by both). Ids are `<prefix>-<field>`,
 * `<prefix>-hint-<field>` and `<prefix>-error-<field>`, so a form can focus the field an
 * error names.
 */
export function TextField(props: {
  prefix: string;
  field: string;
  label: string;
  value: string;
  onInput: (value: string) => void;
  hint?: string | undefined;
  /** The server's message for this field; undefined when it has none. */
  error?: string | undefined;
  required?: boolean;
  inputMode?: "numeric" | undefined;
  placeholder?: string;
}) {
  const { prefix, field } = props;
  const id = `${prefix}-${field}`;
  const hintId = `${prefix}-hint-${field}`;
  const errorId = `${prefix}-error-${field}`;
  const describedBy =
    [props.hint ? hintId : "", props.error ? errorId : ""].filter(Boolean).join(" ") || undefined;
  return (
    <div class="field">
      <label for={id}>{props.label}</label>
      <input
        id={id}
        value={props.value}
        required={props.required}
        inputMode={props.inputMode}
        placeholder={props.placeholder}
        aria-invalid={props.error ? "true" : undefined}
        aria-describedby={describedBy}
        onInput={(event) => props.onInput((event.target as HTMLInputElement).value)}
      />
      {props.hint && (
        <p id={hintId} class="hint field-hint">
          {props.hint}
        </p>
      )}
      {props.error && (
        <p id={errorId} class="field-error" data-error-for={field}>
          {props.error}
        </p>
      )}
    </div>
  );
}
