/**
 * The cross-field rules of an agent record (README.md "Configuration"), as pure functions.
 *
 * The repository runs every payload through these before writing, so every entry point (HTTP,
 * CLI, library) obeys them. Nothing here does I/O: the caller supplies ids and the time.
 */

import { ErrorCode, SubagentGraphError } from "../errors.js";
import type {
  AgentCreatePayload,
  AgentRecord,
  AgentUpdatePayload,
  BackendId,
  RuntimeContext,
} from "./schema.js";

const SUBAGENT_BACKEND: BackendId = "SubAgentBackend";
const CHAT_BACKEND: BackendId = "ChatAgentBackend";

/** What the store decides about a new record, rather than the payload. */
export interface NewAgentFacts {
  id: string;
  owner_uid: string;
  /** ISO-8601 time of creation. */
  now: string;
}

/** The backend of an agent and the subagent flag it implies. */
export interface BackendChoice {
  backend_id: BackendId;
  is_subagent: boolean;
}

/**
 * Reconciles `backend_id` and `is_subagent`: either one implies the other, both absent means
 * `undefined` (the caller picks the default or keeps the stored value).
 *
 * @throws SubagentGraphError `BACKEND_SUBAGENT_MISMATCH` (field `is_subagent`) when both are
 *   given and disagree.
 */
export function resolveBackend(
  backendId: BackendId | undefined,
  isSubagent: boolean | undefined,
): BackendChoice | undefined {
  if (backendId === undefined && isSubagent === undefined) return undefined;
  const backend = backendId ?? (isSubagent === true ? SUBAGENT_BACKEND : CHAT_BACKEND);
  const impliedSubagent = backend === SUBAGENT_BACKEND;
  if (isSubagent !== undefined && isSubagent !== impliedSubagent) {
    throw new SubagentGraphError(
      ErrorCode.BackendMismatch,
      `backend_id "${backend}" and is_subagent ${isSubagent} disagree: ` +
        (impliedSubagent
          ? `a "${SUBAGENT_BACKEND}" agent is a subagent; send is_subagent true or leave it out`
          : `subagents use "${SUBAGENT_BACKEND}"; send that backend_id or leave is_subagent out`),
      { field: "is_subagent" },
    );
  }
  return { backend_id: backend, is_subagent: impliedSubagent };
}

/**
 * Builds the record a create payload describes, applying every rule.
 *
 * @throws SubagentGraphError `BACKEND_SUBAGENT_MISMATCH`, `SUBAGENT_CANNOT_BE_DEFAULT`.
 */
export function buildAgentRecord(payload: AgentCreatePayload, facts: NewAgentFacts): AgentRecord {
  const backend = resolveBackend(payload.backend_id, payload.is_subagent) ?? {
    backend_id: CHAT_BACKEND,
    is_subagent: false,
  };
  assertDefaultAllowed(payload.slug, backend.is_subagent, payload.is_default);
  return {
    id: facts.id,
    slug: payload.slug,
    name: payload.name,
    description: payload.description,
    ...backend,
    is_default: payload.is_default,
    owner_uid: facts.owner_uid,
    share_config: payload.share_config,
    config_json: {
      context: normalizeContext(payload.config_json?.context ?? {}, backend.is_subagent),
    },
    version: 1,
    created_at: facts.now,
    updated_at: facts.now,
  };
}

/**
 * Returns `record` with `patch` applied: present fields replace stored ones, `version` goes up
 * by one and `updated_at` becomes `now`. `record` itself is not modified.
 *
 * @throws SubagentGraphError `VERSION_CONFLICT` (stale `expected_version`),
 *   `BACKEND_SUBAGENT_MISMATCH`, `BACKEND_ID_IMMUTABLE`, `SUBAGENT_CANNOT_BE_DEFAULT`.
 */
export function applyAgentUpdate(
  record: AgentRecord,
  patch: AgentUpdatePayload,
  now: string,
): AgentRecord {
  if (patch.expected_version !== undefined && patch.expected_version !== record.version) {
    throw new SubagentGraphError(
      ErrorCode.VersionConflict,
      `agent "${record.slug}" is at version ${record.version}, but the update was based on ` +
        `version ${patch.expected_version}: reload the agent and apply the change again`,
      { field: "expected_version", details: { agent: record.id, current_version: record.version } },
    );
  }
  const backend = resolveBackend(patch.backend_id, patch.is_subagent);
  if (backend !== undefined && backend.backend_id !== record.backend_id) {
    throw new SubagentGraphError(
      ErrorCode.BackendImmutable,
      `backend_id cannot change after creation: agent "${record.slug}" is ` +
        `"${record.backend_id}" (is_subagent ${record.is_subagent}) and the update asks for ` +
        `"${backend.backend_id}"; create a new agent with that backend instead`,
      { field: patch.backend_id === undefined ? "is_subagent" : "backend_id" },
    );
  }
  const slug = patch.slug ?? record.slug;
  const isDefault = patch.is_default ?? record.is_default;
  assertDefaultAllowed(slug, record.is_subagent, isDefault);
  return {
    ...record,
    slug,
    name: patch.name ?? record.name,
    description: patch.description ?? record.description,
    is_default: isDefault,
    share_config: patch.share_config ?? record.share_config,
    config_json:
      patch.config_json === undefined
        ? record.config_json
        : { context: normalizeContext(patch.config_json.context ?? {}, record.is_subagent) },
    version: record.version + 1,
    updated_at: now,
  };
}

/**
 * Subagents never nest: their allow-lists (in the foreground and the background) are forced
 * empty whatever the payload said.
 */
function normalizeContext(context: RuntimeContext, isSubagent: boolean): RuntimeContext {
  if (!isSubagent) return context;
  const { async_subagents: _background, ...rest } = context;
  return { ...rest, subagents: [] };
}

function assertDefaultAllowed(slug: string, isSubagent: boolean, isDefault: boolean): void {
  if (isSubagent && isDefault) {
    throw new SubagentGraphError(
      ErrorCode.SubagentDefault,
      `is_default true is not allowed for subagent "${slug}": a subagent can never be the ` +
        "default agent; set is_default false, or make a ChatAgentBackend agent the default",
      { field: "is_default" },
    );
  }
}
