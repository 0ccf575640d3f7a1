/**
 * The knowledge base form's embedder settings (README "Vectors and hybrid search"): the form's
 * values for stored settings, the settings a payload sends, what saving a change does to the
 * files' vectors, and how far their re-embedding is. Pure (no DOM); the server validates, so
 * values the schema refuses (a dimension of "0" or "many") are sent as typed for its message
 * to name the field.
 */

import type { EmbedderSettings, KbFileRecord, VectorState } from "../../knowledge/schema.js";

/** The embedder part of the knowledge base form. */
export interface EmbedderFormValues {
  /** False: full-text search only (the embedder `{}`). */
  embedder_on: boolean;
  embedder_model: string;
  /** As typed: the server judges it. */
  embedder_dimensions: string;
  /** Blank: `OPENAI_BASE_URL`, else OpenAI's. */
  embedder_base_url: string;
  /** Blank: `OPENAI_API_KEY`. */
  embedder_api_key_env: string;
}

/** The form's values for stored settings (`{}` or none: vectors off). */
export function embedderFormValues(settings?: EmbedderSettings): EmbedderFormValues {
  return {
    embedder_on: settings?.model !== undefined,
    embedder_model: settings?.model ?? "",
    embedder_dimensions: settings?.dimensions === undefined ? "" : String(settings.dimensions),
    embedder_base_url: settings?.base_url ?? "",
    embedder_api_key_env: settings?.api_key_env ?? "",
  };
}

/**
 * The `embedder` a payload sends: `{}` when vectors are off, else the model (even blank, so
 * the server names it), the dimensions (a number when they are digits, else as typed; left out
 * when blank, which the server names as missing) and the optional fields that are filled in.
 */
export function embedderPayload(values: EmbedderFormValues): Record<string, unknown> {
  if (!values.embedder_on) return {};
  const dimensions = values.embedder_dimensions.trim();
  const baseUrl = values.embedder_base_url.trim();
  const keyEnv = values.embedder_api_key_env.trim();
  return {
    model: values.embedder_model.trim(),
    ...(dimensions === ""
      ? {}
      : { dimensions: /^\d{1,9}$/.test(dimensions) ? Number(dimensions) : dimensions }),
    ...(baseUrl === "" ? {} : { base_url: baseUrl }),
    ...(keyEnv === "" ? {} : { api_key_env: keyEnv }),
  };
}

/**
 * What saving `next` over `stored` does to the files' vectors: nothing (`none`: same settings;
 * `key`: only the key's variable changed, which makes the same vectors), `reindex` (a new
 * model, length or endpoint, or vectors turned on: every file is embedded again) or `drop`
 * (vectors turned off). The same rule as the server's embedder key (`knowledge/embedder.ts`).
 */
export type EmbedderChange = "none" | "key" | "reindex" | "drop";

export function embedderChange(
  stored: EmbedderSettings,
  next: Record<string, unknown>,
): EmbedderChange {
  const vectorsOf = (settings: Record<string, unknown>) =>
    settings.model === undefined
      ? undefined
      : JSON.stringify([settings.model, settings.dimensions, settings.base_url ?? ""]);
  const before = vectorsOf(stored);
  const after = vectorsOf(next);
  if (before !== after) return after === undefined ? "drop" : "reindex";
  return (stored.api_key_env ?? "") === (next.api_key_env ?? "") ? "none" : "key";
}

/** What a change does to `fileCount` files, said before it is saved; undefined: nothing to say. */
export function embedderChangeWarning(
  change: EmbedderChange,
  fileCount: number,
): string | undefined {
  if (fileCount === 0) return undefined;
  const files = fileCount === 1 ? "its file" : `its ${fileCount} files`;
  if (change === "reindex") {
    return `Saving reindexes ${files}: their vectors are dropped now and made again with the new embedder, file by file. Until every file is ready, searches use words only.`;
  }
  if (change === "drop") {
    return `Saving drops the vectors of ${files}: searches use words only. Turning vectors on again embeds every file again.`;
  }
  return undefined;
}

/** A file's vector states, in the order a file goes through them (`none` is not shown). */
const VECTOR_ORDER: Record<Exclude<VectorState, "none">, number> = {
  pending: 0,
  embedding: 1,
  ready: 2,
  error: 3,
};
const SHOWN_STATES = (Object.keys(VECTOR_ORDER) as Exclude<VectorState, "none">[]).sort(
  (a, b) => VECTOR_ORDER[a] - VECTOR_ORDER[b],
);

/** True when some file has vectors (or is losing them): the list shows a Vectors column. */
export function hasVectors(files: readonly KbFileRecord[]): boolean {
  return files.some((file) => file.vectors !== "none");
}

/** True while a file's vectors are `pending` or `embedding`: the page keeps polling. */
export function isEmbedding(files: readonly KbFileRecord[]): boolean {
  return files.some((file) => file.vectors === "pending" || file.vectors === "embedding");
}

/** The vectors' progress in one line ("Vectors: 1 pending, 2 ready."), or "" without any. */
export function vectorSummary(files: readonly KbFileRecord[]): string {
  if (!hasVectors(files)) return "";
  const parts = SHOWN_STATES.map(
    (state) => [state, files.filter((file) => file.vectors === state).length] as const,
  )
    .filter(([, count]) => count > 0)
    .map(([state, count]) => `${count} ${state}`);
  return `Vectors: ${parts.join(", ")}.`;
}

/** How the knowledge base is searched, for its page: "words and meaning (hash-16, 16 dimensions)". */
export function searchMode(settings: EmbedderSettings): string {
  return settings.model === undefined
    ? "words only"
    : `words and meaning (${settings.model}, ${settings.dimensions} dimensions)`;
}
