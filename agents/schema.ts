/**
 * Agent records and the payloads that create or change them (README.md "Configuration").
 *
 * Payloads come from outside (HTTP bodies, CLI input), so they are checked with zod: every
 * object is strict (an unknown key is an error naming it) and every field carries the fix that
 * its error message will suggest. Cross-field rules (backend ⇔ subagent, defaults) live in
 * `rules.ts`; this file only checks shapes.
 */

import { z } from "zod";
import { interruptOnSchema } from "./interrupt-on.js";
import { parseOrThrow } from "./validation.js";

/**
 * What a slug must look like. No `_`: child thread ids are `<parent>_sub_<slug>_<hex>`, which
 * parse unambiguously only because a slug cannot contain `_`.
 */
export const SLUG_PATTERN = /^[a-z0-9][a-z0-9-]{0,62}$/;

const SLUG_FIX = 'use 1-63 lowercase letters, digits or "-", starting with a letter or digit';
const NAMES_FIX = "use a list of non-empty names, or leave it out for the default";
const LIMIT_FIX = "use a positive whole number, or leave it out for the default";
const BOOLEAN_FIX = "use true or false";
const UIDS_FIX = "use a list of non-empty user ids";

/** The backends an agent can run on. */
export const BACKEND_IDS = ["ChatAgentBackend", "SubAgentBackend"] as const;
export type BackendId = (typeof BACKEND_IDS)[number];

/** Who may see an agent (`mode`, `uids`) and who may change it besides its owner (`editors`). */
export const SHARE_MODES = ["private", "users", "public"] as const;
export type ShareMode = (typeof SHARE_MODES)[number];

const slugSchema = z.string({ error: SLUG_FIX }).regex(SLUG_PATTERN, { error: SLUG_FIX });

/** The slug of the built-in general-purpose subagent; no stored agent may take it. */
export const GENERAL_PURPOSE_SLUG = "general-purpose";

/** A stored agent's own slug: a valid slug that is not reserved for a built-in. */
const agentSlugSchema = slugSchema.refine((slug) => slug !== GENERAL_PURPOSE_SLUG, {
  error: `"${GENERAL_PURPOSE_SLUG}" is reserved for the built-in general-purpose subagent: choose another slug`,
});
const booleanSchema = z.boolean({ error: BOOLEAN_FIX });
const namesSchema = z.array(z.string({ error: NAMES_FIX }).min(1, { error: NAMES_FIX }), {
  error: NAMES_FIX,
});
const uidsSchema = z.array(z.string({ error: UIDS_FIX }).min(1, { error: UIDS_FIX }), {
  error: UIDS_FIX,
});
const limitSchema = z
  .number({ error: LIMIT_FIX })
  .int({ error: LIMIT_FIX })
  .positive({ error: LIMIT_FIX });

const backendIdSchema = z.enum(BACKEND_IDS, {
  error: `use ${BACKEND_IDS.map((id) => `"${id}"`).join(" or ")}`,
});

/**
 * An agent's sharing settings. Missing keys take their defaults (private, nobody), so `{}` is a
 * private agent.
 */
export const shareConfigSchema = z.strictObject(
  {
    mode: z.enum(SHARE_MODES, { error: 'use "private", "users" or "public"' }).default("private"),
    /** With mode "users": who may see the agent. */
    uids: uidsSchema.default(() => []),
    /** Who may see and change the agent besides its owner, whatever the mode. */
    editors: uidsSchema.default(() => []),
  },
  { error: "use an object with mode, uids and editors" },
);
export type ShareConfig = z.output<typeof shareConfigSchema>;

/** The share config of an agent nobody but its owner may see: the default. */
export function privateShareConfig(): ShareConfig {
  return { mode: "private", uids: [], editors: [] };
}

/**
 * The runtime config of an agent (`config_json.context`). An absent list means "the default"
 * and stays absent (never turned into `[]`): for `tools`, `mcp_servers`, `skills` and
 * `knowledge_bases` the default is everything the user may use, for `subagents` and `async_subagents` it is none.
 */
export const runtimeContextSchema = z.strictObject(
  {
    /** Model spec, e.g. `openai:gpt-4o-mini` or `offline`. */
    model: z
      .string({ error: 'use a model spec such as "openai:gpt-4o-mini" or "offline"' })
      .min(1, { error: 'use a model spec such as "openai:gpt-4o-mini" or "offline"' })
      .optional(),
    system_prompt: z.string({ error: "use a string" }).optional(),
    tools: namesSchema.optional(),
    mcp_servers: namesSchema.optional(),
    skills: namesSchema.optional(),
    /**
     * Knowledge bases (names or ids) the agent searches; unset = every one the running user may
     * read, `[]` = none. One the user cannot see fails the run at its start.
     */
    knowledge_bases: namesSchema.optional(),
    /** Slugs of the subagents this agent may call; absent or empty = none. */
    subagents: z.array(slugSchema, { error: "use a list of subagent slugs" }).optional(),
    max_rounds: limitSchema.optional(),
    max_result_chars: limitSchema.optional(),
    max_parallel_subagents: limitSchema.optional(),
    subagent_timeout_ms: limitSchema.optional(),
    /**
     * Slugs of the subagents this agent may start in the background (`start_async_task`, README
     * "Background subagents"); absent or empty = none, so no background tools. A slug may also
     * be in `subagents`.
     */
    async_subagents: z.array(slugSchema, { error: "use a list of subagent slugs" }).optional(),
    /** Background tasks that may be active at once on one of this agent's threads (default 3). */
    max_async_tasks: limitSchema.optional(),
    /** Time limit of one background task's running (never its wait for a person), in ms. */
    async_task_timeout_ms: limitSchema.optional(),
    /**
     * When a background task of this agent's thread ends, start a run on the thread for it (its
     * notice as the message), through the queue: a busy thread is never run twice at once.
     */
    notify_parent: z.boolean({ error: "use true or false" }).optional(),
    /**
     * Tool calls that wait for a person's approval before they run: tool name → `true` (any
     * decision), `false`, or `{ allowed_decisions, description? }` (README "Approvals").
     */
    interrupt_on: interruptOnSchema.optional(),
  },
  { error: "use an object of runtime settings (model, tools, subagents, …)" },
);
export type RuntimeContext = z.output<typeof runtimeContextSchema>;

const configJsonInputSchema = z.strictObject(
  { context: runtimeContextSchema.optional() },
  { error: "use an object { context }" },
);

/** `config_json` as stored: the context is always present (possibly `{}`). */
export const storedConfigJsonSchema = z.strictObject({ context: runtimeContextSchema });

const PAYLOAD_FIX = "send a JSON object with the agent's fields";
/** PostgreSQL's text cannot hold U+0000, so no database accepts it (see `store/portable-text.ts`). */
const NUL_FIX = "remove the NUL character (U+0000): text columns cannot store it";
const withoutNul = (text: string) => !text.includes("\0");
const nameSchema = z
  .string({ error: "use a string of 1 to 200 characters" })
  .min(1, { error: "use a string of 1 to 200 characters" })
  .max(200, { error: "use a string of 1 to 200 characters" })
  .refine(withoutNul, { error: NUL_FIX });
const descriptionSchema = z
  .string({ error: "use a string" })
  .refine(withoutNul, { error: NUL_FIX });

/** The body of a create request. `backend_id`/`is_subagent` are reconciled in `rules.ts`. */
export const agentCreateSchema = z.strictObject(
  {
    slug: agentSlugSchema,
    name: nameSchema,
    description: descriptionSchema.default(""),
    backend_id: backendIdSchema.optional(),
    is_subagent: booleanSchema.optional(),
    is_default: booleanSchema.default(false),
    share_config: shareConfigSchema.default(privateShareConfig),
    config_json: configJsonInputSchema.optional(),
  },
  { error: PAYLOAD_FIX },
);
export type AgentCreatePayload = z.output<typeof agentCreateSchema>;

/**
 * The body of an update request. Every field is optional; a field that is present replaces the
 * stored one as a whole (`share_config` gets its defaults for missing keys, `config_json.context`
 * is replaced, not merged, so a list can be unset again).
 */
export const agentUpdateSchema = z.strictObject(
  {
    slug: agentSlugSchema.optional(),
    name: nameSchema.optional(),
    description: descriptionSchema.optional(),
    backend_id: backendIdSchema.optional(),
    is_subagent: booleanSchema.optional(),
    is_default: booleanSchema.optional(),
    share_config: shareConfigSchema.optional(),
    config_json: configJsonInputSchema.optional(),
    /** The `version` the client last read; the update fails with VERSION_CONFLICT if stale. */
    expected_version: z
      .number({ error: "use the version number of the record you read" })
      .int({ error: "use the version number of the record you read" })
      .positive({ error: "use the version number of the record you read" })
      .optional(),
  },
  { error: PAYLOAD_FIX },
);
export type AgentUpdatePayload = z.output<typeof agentUpdateSchema>;

/** A stored agent, as every layer above the repository sees it. */
export interface AgentRecord {
  /** A UUID. */
  id: string;
  /** Unique per owner; matches {@link SLUG_PATTERN}. */
  slug: string;
  name: string;
  description: string;
  backend_id: BackendId;
  /** Always `backend_id === "SubAgentBackend"`. */
  is_subagent: boolean;
  /** At most one per owner; never true for a subagent. */
  is_default: boolean;
  owner_uid: string;
  share_config: ShareConfig;
  /** For a subagent, `context.subagents` is always `[]`. */
  config_json: { context: RuntimeContext };
  /** 1 on creation, +1 on every update. */
  version: number;
  /** ISO-8601, UTC. */
  created_at: string;
  /** ISO-8601, UTC. */
  updated_at: string;
}

/**
 * Checks a create payload's shape.
 * @throws SubagentGraphError `VALIDATION_FAILED` naming the field, the value and the fix.
 */
export function parseAgentCreate(payload: unknown): AgentCreatePayload {
  return parseOrThrow(agentCreateSchema, payload);
}

/**
 * Checks an update payload's shape.
 * @throws SubagentGraphError `VALIDATION_FAILED` naming the field, the value and the fix.
 */
export function parseAgentUpdate(payload: unknown): AgentUpdatePayload {
  return parseOrThrow(agentUpdateSchema, payload);
}
