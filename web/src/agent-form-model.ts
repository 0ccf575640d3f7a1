/**
 * The agent form's values, and their translation to and from `/api/agent` records and payloads.
 * Pure (no DOM), so it is unit-tested without a browser. The server validates; this only shapes.
 */

import type { AgentRecord, BackendId, RuntimeContext } from "../../agents/schema.js";

export type { AgentRecord, BackendId, RuntimeContext };

/** The limits the form edits as text (empty = the default). */
export const LIMIT_FIELDS = [
  "max_rounds",
  "max_result_chars",
  "max_parallel_subagents",
  "subagent_timeout_ms",
] as const;
export type LimitField = (typeof LIMIT_FIELDS)[number];

/** The lists where "unset" means "all" (the design's default-all rule). */
export const ALL_BY_DEFAULT_LISTS = ["tools", "skills", "mcp_servers", "knowledge_bases"] as const;
export type AllByDefaultList = (typeof ALL_BY_DEFAULT_LISTS)[number];

/** What the form holds. */
export interface AgentFormValues {
  backend_id: BackendId;
  slug: string;
  name: string;
  description: string;
  share_mode: "private" | "users" | "public";
  /** Comma-separated user ids. */
  share_uids: string;
  share_editors: string;
  is_default: boolean;
  system_prompt: string;
  model: string;
  /** `null` = every one (the list is left out of the config). */
  tools: string[] | null;
  skills: string[] | null;
  mcp_servers: string[] | null;
  /** Knowledge base names (`null` = every one the running user may read). */
  knowledge_bases: string[] | null;
  subagents: string[];
  limits: Record<LimitField, string>;
}

/** The form's values for a new agent, or for editing `agent`. */
export function formValues(agent?: AgentRecord): AgentFormValues {
  const context = agent?.config_json.context ?? {};
  const limits = {} as Record<LimitField, string>;
  for (const field of LIMIT_FIELDS) {
    limits[field] = context[field] === undefined ? "" : String(context[field]);
  }
  return {
    backend_id: agent?.backend_id ?? "ChatAgentBackend",
    slug: agent?.slug ?? "",
    name: agent?.name ?? "",
    description: agent?.description ?? "",
    share_mode: agent?.share_config.mode ?? "private",
    share_uids: agent?.share_config.uids.join(", ") ?? "",
    share_editors: agent?.share_config.editors.join(", ") ?? "",
    is_default: agent?.is_default ?? false,
    system_prompt: context.system_prompt ?? "",
    model: context.model ?? "",
    tools: context.tools ?? null,
    skills: context.skills ?? null,
    mcp_servers: context.mcp_servers ?? null,
    knowledge_bases: context.knowledge_bases ?? null,
    subagents: context.subagents ?? [],
    limits,
  };
}

/**
 * The create (or update, with `expected_version`) payload for the form's values. A subagent's
 * context has no `subagents` (no nesting). Limits that are not whole numbers are sent as typed,
 * so the server's error names the field.
 */
export function agentPayload(values: AgentFormValues, editing?: AgentRecord) {
  const context: Record<string, unknown> = {};
  if (values.model.trim()) context.model = values.model.trim();
  if (values.system_prompt.trim()) context.system_prompt = values.system_prompt;
  for (const list of ALL_BY_DEFAULT_LISTS) {
    const chosen = values[list];
    if (chosen !== null) context[list] = chosen;
  }
  if (values.backend_id === "ChatAgentBackend") context.subagents = values.subagents;
  for (const field of LIMIT_FIELDS) {
    const text = values.limits[field].trim();
    if (!text) continue;
    const number = Number(text);
    context[field] = Number.isFinite(number) ? number : text;
  }
  return {
    slug: values.slug.trim(),
    name: values.name.trim(),
    description: values.description,
    backend_id: values.backend_id,
    // A subagent is never the default (the form hides the box; a stale tick is not sent).
    is_default: values.backend_id === "ChatAgentBackend" && values.is_default,
    share_config: {
      mode: values.share_mode,
      uids: splitList(values.share_uids),
      editors: splitList(values.share_editors),
    },
    config_json: { context },
    ...(editing ? { expected_version: editing.version } : {}),
  };
}

/**
 * The form field an API error's `field` belongs to: `config_json.context.tools.2` → `tools`,
 * `share_config.uids` → `share_uids`, `is_subagent` → `backend_id` (the form sets the backend,
 * which decides it). Undefined when no field of the form matches.
 */
export function formFieldOf(apiField: string | undefined): string | undefined {
  if (!apiField) return undefined;
  const path = apiField.split(".").filter((part) => !/^\d+$/.test(part));
  const [head, second, third] = path;
  if (head === "config_json" && second === "context") return third ?? "config_json";
  if (head === "context") return second;
  if (head === "share_config") return `share_${second ?? "mode"}`;
  if (head === "is_subagent") return "backend_id";
  if (head === "expected_version") return undefined;
  return head;
}

/** Comma-separated user ids as a list, blanks dropped. */
export function splitList(text: string): string[] {
  return text
    .split(",")
    .map((item) => item.trim())
    .filter((item) => item !== "");
}
