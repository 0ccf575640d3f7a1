/**
 * Converting agent records to and from `agents` rows.
 *
 * JSON columns are parsed back with the same zod schemas that accepted them, so a row edited by
 * hand or written by a broken version surfaces as an `INTERNAL` error naming the agent instead of
 * a malformed record travelling further.
 */

import type { Selectable } from "kysely";
import type { z } from "zod";
import { ErrorCode, SubagentGraphError } from "../errors.js";
import type { AgentsTable } from "../store/schema.js";
import {
  type AgentRecord,
  BACKEND_IDS,
  type BackendId,
  privateShareConfig,
  type ShareConfig,
  shareConfigSchema,
  storedConfigJsonSchema,
} from "./schema.js";

/** A row of `agents` as it is read back. */
export type AgentRow = Selectable<AgentsTable>;

/**
 * `share_config` exactly as stored for an agent shared with nobody. Keys are written in a fixed
 * order, so queries can skip such rows of other owners by plain text comparison.
 */
export const UNSHARED_SHARE_CONFIG_JSON = serializeShareConfig(privateShareConfig());

/** The row that stores `record`. */
export function toAgentRow(record: AgentRecord): AgentsTable {
  return {
    id: record.id,
    owner_uid: record.owner_uid,
    slug: record.slug,
    name: record.name,
    description: record.description,
    backend_id: record.backend_id,
    is_subagent: record.is_subagent ? 1 : 0,
    is_default: record.is_default ? 1 : 0,
    share_config: serializeShareConfig(record.share_config),
    config_json: JSON.stringify(record.config_json),
    version: record.version,
    created_at: record.created_at,
    updated_at: record.updated_at,
  };
}

/**
 * The record stored in `row`.
 * @throws SubagentGraphError `INTERNAL` naming the agent id when a column does not decode.
 */
export function fromAgentRow(row: AgentRow): AgentRecord {
  return {
    id: row.id,
    slug: row.slug,
    name: row.name,
    description: row.description,
    backend_id: decodeBackendId(row),
    is_subagent: row.is_subagent === 1,
    is_default: row.is_default === 1,
    owner_uid: row.owner_uid,
    share_config: decodeJson(row, "share_config", shareConfigSchema),
    config_json: decodeJson(row, "config_json", storedConfigJsonSchema),
    version: row.version,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

function serializeShareConfig(share: ShareConfig): string {
  return JSON.stringify({ mode: share.mode, uids: share.uids, editors: share.editors });
}

function decodeBackendId(row: AgentRow): BackendId {
  const backend = BACKEND_IDS.find((id) => id === row.backend_id);
  if (backend === undefined) throw corruptRow(row.id, "backend_id", `unknown "${row.backend_id}"`);
  return backend;
}

function decodeJson<S extends z.ZodType>(
  row: AgentRow,
  column: "share_config" | "config_json",
  schema: S,
): z.output<S> {
  let value: unknown;
  try {
    value = JSON.parse(row[column]);
  } catch (error) {
    throw corruptRow(row.id, column, "not valid JSON", error);
  }
  const result = schema.safeParse(value);
  if (!result.success) {
    const issue = result.error.issues[0];
    const where = issue === undefined ? "" : ` at "${issue.path.join(".")}"`;
    throw corruptRow(row.id, column, `${issue?.message ?? "invalid"}${where}`, result.error);
  }
  return result.data;
}

function corruptRow(
  id: string,
  column: string,
  reason: string,
  cause?: unknown,
): SubagentGraphError {
  return new SubagentGraphError(
    ErrorCode.Internal,
    `agent ${id} is stored corrupt (${column}: ${reason}): repair or delete its row`,
    { cause },
  );
}
