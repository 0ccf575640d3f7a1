/**
 * A knowledge base's embedding model: any OpenAI-compatible `/v1/embeddings` endpoint through
 * `@langchain/openai`'s `OpenAIEmbeddings`. Vectors come back checked (their count, their
 * length against the settings' `dimensions`, finite numbers) and scaled to unit length, so
 * both engines compare them by a dot product. The API key is read from the environment
 * variable the settings name, at each use; it never appears in a message.
 */

import { OpenAIEmbeddings } from "@langchain/openai";
import { ErrorCode, messageOf, SubagentGraphError } from "../errors.js";
import type { EmbedderSettings } from "./schema.js";

/** Settings of a knowledge base that has an embedder (model and dimensions both set). */
export interface ActiveEmbedder {
  model: string;
  dimensions: number;
  base_url?: string | undefined;
  api_key_env?: string | undefined;
}

/** Turns texts into unit-length vectors of the settings' length. */
export interface Embedder {
  readonly key: string;
  readonly dimensions: number;
  /**
   * One vector per text, in order.
   * @throws SubagentGraphError `EMBEDDING_DIMENSION_MISMATCH` (vectors of another length),
   *   `EMBEDDING_FAILED` (the endpoint failed or answered something else than vectors).
   */
  embed(texts: readonly string[]): Promise<Float32Array[]>;
}

/** Builds the {@link Embedder} of a knowledge base's settings. */
export type EmbedderFactory = (settings: ActiveEmbedder) => Embedder;

/** The settings, when they name an embedder; undefined for `{}` (full-text search only). */
export function activeEmbedder(settings: EmbedderSettings): ActiveEmbedder | undefined {
  const { model, dimensions } = settings;
  if (model === undefined || dimensions === undefined) return undefined;
  return { ...settings, model, dimensions };
}

/**
 * What identifies the vectors an embedder makes: model, length and endpoint. Vectors of two
 * keys are never compared; a knowledge base whose key changes is reindexed. (`api_key_env`
 * is not part of it: another key to the same model makes the same vectors.)
 */
export function embedderKey(settings: ActiveEmbedder): string {
  return JSON.stringify([settings.model, settings.dimensions, settings.base_url ?? ""]);
}

/** Texts sent per request: small enough for local servers' limits. */
const REQUEST_BATCH = 64;
/** Retries of a failed request (langchain's caller, exponential back-off). */
const MAX_RETRIES = 2;
const TIMEOUT_MS = 60_000;

/**
 * The factory of real embedders over `env` (where `api_key_env`, default `OPENAI_API_KEY`, and
 * `OPENAI_BASE_URL` are read).
 */
export function openAIEmbedderFactory(env: Readonly<Record<string, string | undefined>>) {
  return (settings: ActiveEmbedder): Embedder => {
    const baseURL = settings.base_url ?? (env.OPENAI_BASE_URL?.trim() || undefined);
    const apiKey = env[settings.api_key_env ?? "OPENAI_API_KEY"]?.trim() || undefined;
    const client = new OpenAIEmbeddings({
      model: settings.model,
      // Base64 is the client's default: a server that answers float arrays anyway had its
      // answer decoded as bytes (2-dimensional vectors). Floats are read as they come.
      encodingFormat: "float",
      batchSize: REQUEST_BATCH,
      maxRetries: MAX_RETRIES,
      timeout: TIMEOUT_MS,
      // A local server needs no key, but the client refuses to start without one.
      apiKey: apiKey ?? "not-needed",
      configuration: baseURL === undefined ? {} : { baseURL },
    });
    const where = baseURL ?? "https://api.openai.com/v1";
    return {
      key: embedderKey(settings),
      dimensions: settings.dimensions,
      async embed(texts) {
        if (texts.length === 0) return [];
        let vectors: unknown;
        try {
          vectors = await client.embedDocuments([...texts]);
        } catch (error) {
          const reason = messageOf(error);
          throw new SubagentGraphError(
            ErrorCode.EmbeddingFailed,
            `embedding model "${settings.model}" at ${where} failed: ${scrub(reason, apiKey)}; check that the server is up, that the model name is right and that ${settings.api_key_env ?? "OPENAI_API_KEY"} holds a key it accepts`,
            { field: "embedder" },
          );
        }
        return checkVectors(vectors, texts.length, settings);
      },
    };
  };
}

/**
 * The vectors an endpoint returned, checked and scaled to unit length.
 * @throws SubagentGraphError `EMBEDDING_DIMENSION_MISMATCH`, `EMBEDDING_FAILED`.
 */
export function checkVectors(
  vectors: unknown,
  count: number,
  settings: ActiveEmbedder,
): Float32Array[] {
  const malformed = (what: string) =>
    new SubagentGraphError(
      ErrorCode.EmbeddingFailed,
      `embedding model "${settings.model}" answered ${what}, not ${count} vectors of numbers: check that it is an embedding model and that the server speaks OpenAI's /v1/embeddings`,
      { field: "embedder.model" },
    );
  if (!Array.isArray(vectors) || vectors.length !== count) {
    throw malformed(Array.isArray(vectors) ? `${vectors.length} vectors` : "no vector list");
  }
  return vectors.map((vector: unknown) => {
    if (!Array.isArray(vector)) throw malformed("something else");
    if (vector.length !== settings.dimensions) {
      throw new SubagentGraphError(
        ErrorCode.EmbeddingDimensionMismatch,
        `embedding model "${settings.model}" returns ${vector.length}-dimensional vectors, but the knowledge base expects ${settings.dimensions}: set embedder.dimensions to ${vector.length} (the knowledge base is then reindexed), or use a model with ${settings.dimensions} dimensions`,
        { field: "embedder.dimensions" },
      );
    }
    return unit(vector, malformed);
  });
}

function unit(vector: unknown[], malformed: (what: string) => Error): Float32Array {
  const out = new Float32Array(vector.length);
  let norm = 0;
  for (let i = 0; i < vector.length; i += 1) {
    const value = vector[i];
    if (typeof value !== "number" || !Number.isFinite(value)) throw malformed("a non-number");
    out[i] = value;
    norm += value * value;
  }
  // A zero vector (an empty text, say) stays zero: it is near nothing.
  if (norm > 0) {
    const scale = 1 / Math.sqrt(norm);
    for (let i = 0; i < out.length; i += 1) out[i] = (out[i] as number) * scale;
  }
  return out;
}

function scrub(text: string, secret: string | undefined): string {
  return secret === undefined || secret === "" ? text : text.split(secret).join("***");
}

/**
 * `factory`, building one embedder per distinct settings (model, length, endpoint, key
 * variable) and handing it out again after.
 */
export function memoizedEmbedders(factory: EmbedderFactory): EmbedderFactory {
  const built = new Map<string, Embedder>();
  return (settings) => {
    const id = JSON.stringify([embedderKey(settings), settings.api_key_env ?? ""]);
    let embedder = built.get(id);
    if (embedder === undefined) {
      embedder = factory(settings);
      built.set(id, embedder);
    }
    return embedder;
  };
}
