import { z } from "zod";
import { SHARE_MODES } from "../../agents/schema.js";
import { FILE_STATUSES, VECTOR_STATES } from "../../knowledge/schema.js";
import { errorSchema } from "../schemas.js";
import { storeId } from "./store-text.js";

/** Wire shapes of `/api/kb` (server/routes/knowledge.ts), validated on the way out. */

export const knowledgeBaseSchema = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string(),
  owner_uid: z.string(),
  share_config: z.object({
    mode: z.enum(SHARE_MODES),
    uids: z.array(z.string()),
    editors: z.array(z.string()),
  }),
  embedder: z
    .object({
      model: z.string().optional(),
      dimensions: z.number().optional(),
      base_url: z.string().optional(),
      api_key_env: z
        .string()
        .optional()
        .describe("the environment variable holding the API key (the key is never shown)"),
    })
    .describe("{}: full-text search only; else hybrid search with this embedding model"),
  version: z.number().int(),
  created_at: z.string(),
  updated_at: z.string(),
});

export const kbFileSchema = z.object({
  id: z.string(),
  kb_id: z.string(),
  name: z.string(),
  content_hash: z.string(),
  bytes: z.number().int(),
  format: z.string(),
  status: z.enum(FILE_STATUSES),
  error: z.string().nullable(),
  chunk_count: z.number().int(),
  line_count: z.number().int(),
  vectors: z
    .enum(VECTOR_STATES)
    .describe("none (no embedder), pending, embedding, ready or error (see vectors_error)"),
  vectors_error: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
});

export const kbUploadResultSchema = z.union([
  z.object({
    name: z.string(),
    status: z.literal("accepted"),
    duplicate: z.boolean().describe("same bytes as a file already there: nothing changed"),
    file: kbFileSchema,
  }),
  z.object({
    name: z.string(),
    status: z.literal("rejected"),
    error: z.object({ code: z.string(), message: z.string() }),
  }),
]);

export const kbSearchBodySchema = z.strictObject({
  query: z.string().describe("what to look for; any of its words, best matches first"),
  kb: z
    .union([storeId(), z.array(storeId())])
    .optional()
    .describe("knowledge base name(s) or id(s); default: every one you may see"),
  file: z.string().optional().describe("only files of this name"),
  top_k: z.number().int().optional().describe("hits to return, 1-50 (default 5)"),
});

export const kbSearchHitSchema = z.object({
  kb_id: z.string(),
  kb: z.string(),
  file_id: z.string(),
  file: z.string(),
  line_start: z.number().int(),
  line_end: z.number().int(),
  score: z.number(),
  text: z.string(),
});

export const kbReadSchema = z.object({
  kb: z.string(),
  file_id: z.string(),
  file: z.string(),
  line_start: z.number().int(),
  line_end: z.number().int(),
  line_count: z.number().int(),
  next_line: z.number().int().nullable(),
  text: z.string(),
});

/** The error responses of the knowledge base routes (uploads add 415 for unreadable types). */
export const kbErrorResponses = {
  400: errorSchema,
  401: errorSchema,
  403: errorSchema,
  404: errorSchema,
  409: errorSchema,
  413: errorSchema,
  415: errorSchema,
  422: errorSchema,
  500: errorSchema,
} as const;
