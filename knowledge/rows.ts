/**
 * Converting knowledge base and file records to and from their rows. JSON columns are parsed
 * back with the schemas that accepted them, so a damaged row surfaces as an `INTERNAL` error
 * naming the record instead of a malformed record travelling further.
 */

import type { Selectable } from "kysely";
import { privateShareConfig, type ShareConfig, shareConfigSchema } from "../agents/schema.js";
import { ErrorCode, SubagentGraphError } from "../errors.js";
import type { KbFilesTable, KnowledgeBasesTable } from "../store/schema.js";
import {
  type EmbedderSettings,
  embedderSchema,
  FILE_STATUSES,
  type FileStatus,
  type KbFileRecord,
  type KnowledgeBaseRecord,
  VECTOR_STATES,
  type VectorState,
} from "./schema.js";

/** A share config as stored: keys in a fixed order, so "shared with nobody" compares as text. */
export function serializeShareConfig(share: ShareConfig): string {
  return JSON.stringify({ mode: share.mode, uids: share.uids, editors: share.editors });
}

/** `share_config` exactly as stored for a knowledge base shared with nobody. */
export const UNSHARED_KB_SHARE_JSON = serializeShareConfig(privateShareConfig());

/** The row that stores `record`. */
export function toKbRow(record: KnowledgeBaseRecord): KnowledgeBasesTable {
  return {
    id: record.id,
    owner_uid: record.owner_uid,
    name: record.name,
    description: record.description,
    share_config: serializeShareConfig(record.share_config),
    embedder: JSON.stringify(record.embedder),
    version: record.version,
    created_at: record.created_at,
    updated_at: record.updated_at,
  };
}

/**
 * The record stored in `row`.
 * @throws SubagentGraphError `INTERNAL` naming the knowledge base when a column does not decode.
 */
export function fromKbRow(row: Selectable<KnowledgeBasesTable>): KnowledgeBaseRecord {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    owner_uid: row.owner_uid,
    share_config: decode(row.id, "share_config", row.share_config, (value) =>
      shareConfigSchema.parse(value),
    ),
    embedder: decode(
      row.id,
      "embedder",
      row.embedder,
      (value): EmbedderSettings => embedderSchema.parse(value),
    ),
    version: row.version,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

/** The record stored in a `kb_files` row. */
export function fromFileRow(row: Selectable<KbFilesTable>): KbFileRecord {
  return {
    id: row.id,
    kb_id: row.kb_id,
    name: row.name,
    content_hash: row.content_hash,
    bytes: Number(row.bytes),
    format: row.format,
    status: decodeStatus(row),
    error: row.error,
    chunk_count: Number(row.chunk_count),
    line_count: Number(row.line_count),
    vectors: decodeVectors(row),
    vectors_error: row.vectors_error,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

function decodeVectors(row: Selectable<KbFilesTable>): VectorState {
  return VECTOR_STATES.find((known) => known === row.vectors) ?? "none";
}

function decodeStatus(row: Selectable<KbFilesTable>): FileStatus {
  const status = FILE_STATUSES.find((known) => known === row.status);
  if (status === undefined) {
    throw new SubagentGraphError(
      ErrorCode.Internal,
      `knowledge base file ${row.id} is stored corrupt (status: unknown "${row.status}"): repair or delete its row`,
    );
  }
  return status;
}

function decode<T>(id: string, column: string, text: string, parse: (value: unknown) => T): T {
  try {
    return parse(JSON.parse(text));
  } catch (error) {
    throw new SubagentGraphError(
      ErrorCode.Internal,
      `knowledge base ${id} is stored corrupt (${column} does not decode): repair or delete its row`,
      { cause: error },
    );
  }
}
