/**
 * Knowledge base records and the payloads that create or change them (README "Knowledge
 * bases"). Payloads come from outside (HTTP bodies, CLI input), so they are checked with strict
 * zod objects whose messages carry the fix; sharing follows the agents' `share_config` exactly.
 */

import { z } from "zod";
import { privateShareConfig, type ShareConfig, shareConfigSchema } from "../agents/schema.js";
import { parseOrThrow } from "../agents/validation.js";

const NUL_FIX = "remove the NUL character (U+0000): text columns cannot store it";
const withoutNul = (text: string) => !text.includes("\0");
const NAME_FIX =
  "use 1 to 100 characters, not starting with a space; names are unique per owner and are how agents' context.knowledge_bases names it";

/** A knowledge base's name: what agents' `context.knowledge_bases` and the tools use. */
export const kbNameSchema = z
  .string({ error: NAME_FIX })
  .min(1, { error: NAME_FIX })
  .max(100, { error: NAME_FIX })
  .refine((name) => name.trim() === name, { error: NAME_FIX })
  .refine(withoutNul, { error: NUL_FIX });

function isHttpUrl(text: string): boolean {
  try {
    const url = new URL(text);
    return url.protocol === "http:" || url.protocol === "https:";
  } catch {
    return false;
  }
}

const descriptionSchema = z
  .string({ error: "use a string" })
  .max(2000, { error: "use at most 2000 characters" })
  .refine(withoutNul, { error: NUL_FIX });

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;
const MODEL_FIX = "use the embedding model's name, e.g. text-embedding-3-small";
const DIMENSIONS_FIX =
  "use the length of the model's vectors, a whole number from 1 to 8192 (e.g. 1536 for text-embedding-3-small)";
const BASE_URL_FIX =
  "use the http(s) URL of an OpenAI-compatible API, ending before /embeddings, e.g. http://127.0.0.1:8000/v1";
const KEY_ENV_FIX =
  "use the NAME of an environment variable holding the API key (e.g. OPENAI_API_KEY), never the key itself";

/**
 * How a knowledge base's chunks are embedded: `{}` (the default) means full-text search only;
 * else `model` and `dimensions` together, with an optional `base_url` (default: the
 * `OPENAI_BASE_URL` environment variable, else OpenAI's) and `api_key_env`, the name of the
 * environment variable holding the API key (default `OPENAI_API_KEY`): the key itself is never
 * stored nor shown. A change of model, dimensions or base URL means a reindex (vectors of two
 * models are never mixed).
 *
 * @example
 * { model: "text-embedding-3-small", dimensions: 1536 }
 * { model: "bge-m3", dimensions: 1024, base_url: "http://127.0.0.1:8000/v1", api_key_env: "VLLM_KEY" }
 */
export const embedderSchema = z
  .strictObject(
    {
      /** An OpenAI-compatible embedding model, e.g. `text-embedding-3-small`. */
      model: z
        .string({ error: MODEL_FIX })
        .min(1, { error: MODEL_FIX })
        .max(200, { error: MODEL_FIX })
        .refine(withoutNul, { error: NUL_FIX })
        .optional(),
      /** The vectors' length, checked against the first batch the model returns. */
      dimensions: z
        .number({ error: DIMENSIONS_FIX })
        .int({ error: DIMENSIONS_FIX })
        .min(1, { error: DIMENSIONS_FIX })
        .max(8192, { error: DIMENSIONS_FIX })
        .optional(),
      /** The API's base URL (`…/v1`). */
      base_url: z
        .string({ error: BASE_URL_FIX })
        .max(2000, { error: BASE_URL_FIX })
        .refine(isHttpUrl, { error: BASE_URL_FIX })
        .optional(),
      /** The environment variable that holds the API key. */
      api_key_env: z
        .string({ error: KEY_ENV_FIX })
        .regex(ENV_NAME, { error: KEY_ENV_FIX })
        .optional(),
    },
    {
      error:
        "use an object { model, dimensions, base_url?, api_key_env? }, or {} for full-text search only",
    },
  )
  .superRefine((value, context) => {
    const set = Object.keys(value).length > 0;
    if (!set) return;
    if (value.model === undefined) {
      context.addIssue({
        code: "custom",
        path: ["model"],
        message: `${MODEL_FIX} (an embedder needs model and dimensions; {} means full-text search only)`,
      });
    } else if (value.dimensions === undefined) {
      context.addIssue({
        code: "custom",
        path: ["dimensions"],
        message: `${DIMENSIONS_FIX} (an embedder needs model and dimensions; {} means full-text search only)`,
      });
    }
  });
export type EmbedderSettings = z.output<typeof embedderSchema>;

const PAYLOAD_FIX = "send a JSON object with the knowledge base's fields";

/** The body of a create request. */
export const kbCreateSchema = z.strictObject(
  {
    name: kbNameSchema,
    description: descriptionSchema.default(""),
    share_config: shareConfigSchema.default(privateShareConfig),
    embedder: embedderSchema.default(() => ({})),
  },
  { error: PAYLOAD_FIX },
);
export type KbCreatePayload = z.output<typeof kbCreateSchema>;

/** The body of an update request: present fields replace stored ones. */
export const kbUpdateSchema = z.strictObject(
  {
    name: kbNameSchema.optional(),
    description: descriptionSchema.optional(),
    share_config: shareConfigSchema.optional(),
    embedder: embedderSchema.optional(),
    /** The `version` the client last read; the update fails with VERSION_CONFLICT if stale. */
    expected_version: z
      .number({ error: "use the version number of the record you read" })
      .int({ error: "use the version number of the record you read" })
      .positive({ error: "use the version number of the record you read" })
      .optional(),
  },
  { error: PAYLOAD_FIX },
);
export type KbUpdatePayload = z.output<typeof kbUpdateSchema>;

/** A stored knowledge base, as every layer above the repository sees it. */
export interface KnowledgeBaseRecord {
  /** A UUID. */
  id: string;
  /** Unique per owner. */
  name: string;
  description: string;
  owner_uid: string;
  /** Who may see it (and so search it) and who may change it: the agents' rules. */
  share_config: ShareConfig;
  embedder: EmbedderSettings;
  /** 1 on creation, +1 on every update. */
  version: number;
  /** ISO-8601, UTC. */
  created_at: string;
  /** ISO-8601, UTC. */
  updated_at: string;
}

/** Where a file's ingest is: waiting, being indexed, searchable, or failed (see `error`). */
export const FILE_STATUSES = ["queued", "indexing", "indexed", "error"] as const;
export type FileStatus = (typeof FILE_STATUSES)[number];

/** A file of a knowledge base. */
export interface KbFileRecord {
  /** A UUID: what `kb_read` takes as `file_id`. */
  id: string;
  kb_id: string;
  name: string;
  /** Lowercase hex SHA-256 of the bytes: the same content twice is one file. */
  content_hash: string;
  bytes: number;
  format: string;
  status: FileStatus;
  /** Why ingest failed, naming the file and the fix; null unless `status` is "error". */
  error: string | null;
  chunk_count: number;
  line_count: number;
  /**
   * Where its vectors are (knowledge bases with an embedder): `none` (no embedder), `pending`
   * (waiting to be embedded: after an embedder change), `embedding`, `ready`, or `error` (see
   * `vectors_error`). Full-text search finds an `indexed` file whatever this says; vector search
   * is used for a knowledge base only while every indexed file of it is `ready`.
   */
  vectors: VectorState;
  /** Why embedding failed; null unless `vectors` is "error". */
  vectors_error: string | null;
  created_at: string;
  updated_at: string;
}

/** Where a file's vectors are. */
export const VECTOR_STATES = ["none", "pending", "embedding", "ready", "error"] as const;
export type VectorState = (typeof VECTOR_STATES)[number];

/**
 * Checks a create payload's shape.
 * @throws SubagentGraphError `VALIDATION_FAILED` naming the field, the value and the fix.
 */
export function parseKbCreate(payload: unknown): KbCreatePayload {
  return parseOrThrow(kbCreateSchema, payload);
}

/**
 * Checks an update payload's shape.
 * @throws SubagentGraphError `VALIDATION_FAILED` naming the field, the value and the fix.
 */
export function parseKbUpdate(payload: unknown): KbUpdatePayload {
  return parseOrThrow(kbUpdateSchema, payload);
}
