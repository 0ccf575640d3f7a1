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

const descriptionSchema = z
  .string({ error: "use a string" })
  .max(2000, { error: "use at most 2000 characters" })
  .refine(withoutNul, { error: NUL_FIX });

/**
 * How a knowledge base's chunks are embedded. `{}` (the default) means full-text search only.
 * A change of model or dimensions means a reindex: vectors of two models are never mixed.
 */
export const embedderSchema = z.strictObject(
  {
    /** An OpenAI-compatible embedding model, e.g. `text-embedding-3-small`. */
    model: z.string({ error: "use a model name" }).min(1, { error: "use a model name" }).optional(),
    /** The vectors' length, checked against the first batch the model returns. */
    dimensions: z
      .number({ error: "use a positive whole number" })
      .int({ error: "use a positive whole number" })
      .positive({ error: "use a positive whole number" })
      .optional(),
  },
  { error: "use an object { model, dimensions }, or {} for full-text search only" },
);
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
  created_at: string;
  updated_at: string;
}

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
