import type { EmbedderFormValues } from "../kb-embedder-model.js";
import { TextField } from "./text-field.js";

type TextKey = Exclude<keyof EmbedderFormValues, "embedder_on">;

/** The embedder's text fields, with their labels and hints. */
const FIELDS: { field: TextKey; label: string; hint: string; numeric?: boolean }[] = [
  { field: "embedder_model", label: "Embedding model", hint: "e.g. text-embedding-3-small" },
  {
    field: "embedder_dimensions",
    label: "Dimensions",
    hint: "the length of the model's vectors, e.g. 1536",
    numeric: true,
  },
  {
    field: "embedder_base_url",
    label: "Base URL (optional)",
    hint: "an OpenAI-compatible API, …/v1; blank: OPENAI_BASE_URL, else OpenAI's",
  },
  {
    field: "embedder_api_key_env",
    label: "API key variable (optional)",
    hint: "the NAME of the server's environment variable holding the key; blank: OPENAI_API_KEY",
  },
];

/**
 * The knowledge base form's embedder settings: a checkbox turns vectors on (hybrid search) or
 * off (words only, the embedder `{}`), and when on, the model, its vectors' length, and the
 * optional endpoint and key variable. `error` is the server's message for the field it names.
 */
export function KbEmbedderFields(props: {
  values: EmbedderFormValues;
  onChange: (patch: Partial<EmbedderFormValues>) => void;
  error: { field: string | undefined; message: string } | undefined;
}) {
  const { values, onChange, error } = props;
  return (
    <fieldset class="kb-embedder">
      <legend>Vector search</legend>
      <div class="checkbox">
        <input
          id="kb-embedder_on"
          type="checkbox"
          checked={values.embedder_on}
          aria-describedby="kb-hint-embedder_on"
          onChange={(event) =>
            onChange({ embedder_on: (event.target as HTMLInputElement).checked })
          }
        />
        <label for="kb-embedder_on">Search by meaning too (an embedding model)</label>
        <p id="kb-hint-embedder_on" class="hint field-hint">
          Unticked: words only (full-text search).
        </p>
      </div>
      {values.embedder_on && (
        <div class="grid">
          {FIELDS.map((spec) => (
            <TextField
              key={spec.field}
              prefix="kb"
              field={spec.field}
              label={spec.label}
              hint={spec.hint}
              value={values[spec.field]}
              inputMode={spec.numeric ? "numeric" : undefined}
              error={error?.field === spec.field ? error.message : undefined}
              onInput={(value) => onChange({ [spec.field]: value })}
            />
          ))}
        </div>
      )}
    </fieldset>
  );
}
