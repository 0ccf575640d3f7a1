/**
 * Agent records in the shared database, with every rule of README.md "Configuration" enforced.
 *
 * Every method takes the acting user's `uid` first and answers as that user sees the store: an
 * agent they may not see does not exist for them (`NOT_FOUND`, with the same message as a truly
 * absent one), an agent they may see but not change is `FORBIDDEN`.
 *
 * Lookups by slug: slugs are unique per owner only, so several visible agents may share one.
 * The user's own agent wins; otherwise the oldest visible one (by `created_at`, then `id`), so
 * the answer does not change when someone shares a newer agent with the same slug. An id always
 * wins over a slug.
 */

import { randomUUID } from "node:crypto";
import type { Kysely, Transaction } from "kysely";
import { ErrorCode, SubagentGraphError } from "../errors.js";
import type { ModelSpecCheck } from "../models/model-spec.js";
import { compareText, hasNul } from "../store/portable-text.js";
import { clockOf, type RepositoryOptions } from "../store/repository-options.js";
import type { DatabaseSchema } from "../store/schema.js";
import { isUniqueViolation } from "../store/sql-errors.js";
import type { StampedReads } from "../store/stamped-reads.js";
import { canonicalJson } from "../util/canonical-json.js";
import { canEdit, canView } from "./permissions.js";
import { fromAgentRow, toAgentRow, UNSHARED_SHARE_CONFIG_JSON } from "./rows.js";
import { applyAgentUpdate, buildAgentRecord } from "./rules.js";
import { type AgentRecord, parseAgentCreate, parseAgentUpdate } from "./schema.js";

/** Options of {@link AgentRepository.list}. */
export interface ListAgentsOptions {
  /** Include subagents (management views); chat pickers leave them out. Default false. */
  include_subagents?: boolean;
}

type Executor = Kysely<DatabaseSchema> | Transaction<DatabaseSchema>;

/** Options of an {@link AgentRepository}. */
export interface AgentRepositoryOptions extends RepositoryOptions {
  /**
   * Checks `context.model` of an agent being created, or updated with another model (a stored
   * agent is not refused for a model that has since gone). Unchecked without it.
   */
  checkModel?: ModelSpecCheck;
  /**
   * Keeps lookups (`find`, `get`, `findSubagents`, `getDefault`) until an agent is written
   * (`store/stamped-reads.ts`). Every lookup reads the database without it.
   */
  reads?: StampedReads;
}

/** Reads and writes `agents` on behalf of a user. */
export class AgentRepository {
  readonly #db: Kysely<DatabaseSchema>;
  readonly #now: () => Date;
  readonly #checkModel: ModelSpecCheck;
  readonly #reads: StampedReads | undefined;

  constructor(db: Kysely<DatabaseSchema>, options: AgentRepositoryOptions = {}) {
    this.#db = db;
    this.#now = clockOf(options);
    this.#checkModel = options.checkModel ?? (() => undefined);
    this.#reads = options.reads;
  }

  /** `load`, kept by `reads` under `key` when the repository has them. */
  #kept<T>(key: unknown[], load: () => Promise<T>): Promise<T> {
    return this.#reads ? this.#reads.read(JSON.stringify(["agents", ...key]), load) : load();
  }

  /** Checks the record's model unless it is the one `previous` already had. */
  #checkModelOf(record: AgentRecord, previous?: AgentRecord): void {
    const model = record.config_json.context.model;
    if (model === undefined || model === previous?.config_json.context.model) return;
    this.#checkModel(model);
  }

  /**
   * Creates an agent owned by `uid`. Making it the default clears the owner's previous default
   * (whose version goes up, as for any change).
   *
   * @param payload untrusted input; see `agentCreateSchema`.
   * @throws SubagentGraphError `VALIDATION_FAILED`, `BACKEND_SUBAGENT_MISMATCH`,
   *   `SUBAGENT_CANNOT_BE_DEFAULT`, `SLUG_TAKEN`. Nothing is written when it throws.
   */
  async create(uid: string, payload: unknown): Promise<AgentRecord> {
    const now = this.#now().toISOString();
    const record = buildAgentRecord(parseAgentCreate(payload), {
      id: randomUUID(),
      owner_uid: uid,
      now,
    });
    this.#checkModelOf(record);
    await this.#transaction(record.slug, async (trx) => {
      if (record.is_default) await clearOtherDefaults(trx, record, now);
      await trx.insertInto("agents").values(toAgentRow(record)).execute();
    });
    return record;
  }

  /**
   * Declares an agent: creates `uid`'s agent with the payload's slug, or brings the one `uid`
   * already owns to exactly the payload (a field the payload leaves out gets its creation
   * default, as `create` would give it). Nothing is written, and the version stays, when the
   * stored agent already matches, so code that declares its agents at every start-up can run
   * any number of times. Agents shared by others with the same slug are not touched.
   *
   * @param payload untrusted input; see `agentCreateSchema`.
   * @throws SubagentGraphError as {@link create} and {@link update} do; `BACKEND_ID_IMMUTABLE`
   *   when the owned agent has another backend (delete it first, or choose another slug).
   */
  async ensure(uid: string, payload: unknown): Promise<AgentRecord> {
    const wanted = buildAgentRecord(parseAgentCreate(payload), { id: "", owner_uid: uid, now: "" });
    // Two tries: a concurrent `ensure` may create the slug between the read and our insert.
    for (let attempt = 1; ; attempt += 1) {
      const current = await this.#owned(uid, wanted.slug);
      if (current === undefined) {
        try {
          return await this.create(uid, payload);
        } catch (error) {
          const raced = SubagentGraphError.isInstance(error) && error.code === ErrorCode.SlugTaken;
          if (raced && attempt === 1) continue;
          throw error;
        }
      }
      if (sameDefinition(current, wanted)) return current;
      return this.update(uid, current.id, {
        name: wanted.name,
        description: wanted.description,
        backend_id: wanted.backend_id,
        is_default: wanted.is_default,
        share_config: wanted.share_config,
        config_json: wanted.config_json,
        expected_version: current.version,
      });
    }
  }

  /**
   * The agent with this id or slug that `uid` may see.
   * @throws SubagentGraphError `NOT_FOUND` when there is none (absent or invisible alike).
   */
  async get(uid: string, idOrSlug: string): Promise<AgentRecord> {
    const record = await this.find(uid, idOrSlug);
    if (record === undefined) throw notFound(idOrSlug);
    return record;
  }

  /** Like {@link get}, but `undefined` instead of `NOT_FOUND`. */
  async find(uid: string, idOrSlug: string): Promise<AgentRecord | undefined> {
    // No id or slug contains NUL, and PostgreSQL refuses to compare one that does.
    if (hasNul(idOrSlug)) return undefined;
    return this.#kept(["find", uid, idOrSlug], async () => {
      const visible = await this.#visible(uid, (query) =>
        query.where((eb) => eb.or([eb("id", "=", idOrSlug), eb("slug", "=", idOrSlug)])),
      );
      return visible.find((record) => record.id === idOrSlug) ?? pickBySlug(visible, uid, idOrSlug);
    });
  }

  /** Every agent `uid` may see, oldest first (`created_at`, then `id`). */
  async list(uid: string, options: ListAgentsOptions = {}): Promise<AgentRecord[]> {
    return this.#visible(uid, (query) =>
      options.include_subagents === true ? query : query.where("is_subagent", "=", 0),
    );
  }

  /**
   * Applies `patch` to the agent `id`, raising its version by one.
   *
   * @param patch untrusted input; see `agentUpdateSchema` (present fields replace stored ones).
   * @throws SubagentGraphError `NOT_FOUND` (absent or invisible), `FORBIDDEN` (visible but not
   *   editable), `VALIDATION_FAILED`, `VERSION_CONFLICT` (stale `expected_version`, or another
   *   writer changed the agent meanwhile), `BACKEND_ID_IMMUTABLE`, `BACKEND_SUBAGENT_MISMATCH`,
   *   `SUBAGENT_CANNOT_BE_DEFAULT`, `SLUG_TAKEN`. Nothing is written when it throws.
   */
  async update(uid: string, id: string, patch: unknown): Promise<AgentRecord> {
    const parsed = parseAgentUpdate(patch);
    return this.#transaction(parsed.slug, async (trx) => {
      const current = await loadEditable(trx, uid, id);
      const now = this.#now().toISOString();
      const next = applyAgentUpdate(current, parsed, now);
      this.#checkModelOf(next, current);
      if (next.is_default) await clearOtherDefaults(trx, next, now);
      // Guarded by the version read above, so a concurrent writer (PostgreSQL, several
      // processes) cannot be overwritten silently.
      const { id: _id, owner_uid: _owner, created_at: _created, ...changes } = toAgentRow(next);
      const result = await trx
        .updateTable("agents")
        .set(changes)
        .where("id", "=", id)
        .where("version", "=", current.version)
        .executeTakeFirst();
      if (result.numUpdatedRows !== 1n) {
        throw new SubagentGraphError(
          ErrorCode.VersionConflict,
          `agent "${current.slug}" was changed by someone else during this update: reload it and apply the change again`,
          { field: "expected_version", details: { agent: id } },
        );
      }
      return next;
    });
  }

  /**
   * Deletes the agent `id`. Its threads keep their owner (see `store/schema.ts`).
   *
   * A subagent that main agents of its owner list in `context.subagents` is not deleted
   * silently: without `detach` the call is refused naming those agents; with `detach` its slug
   * is removed from their lists (each gets a new version) in the same transaction. Other users'
   * agents refer to it by slug only and drop it (logged) at their next run.
   *
   * @throws SubagentGraphError `NOT_FOUND` (absent or invisible), `FORBIDDEN` (not editable),
   *   `AGENT_IN_USE` (listed by main agents and `detach` not set).
   */
  async delete(uid: string, id: string, options: { detach?: boolean } = {}): Promise<void> {
    await this.#transaction(undefined, async (trx) => {
      const record = await loadEditable(trx, uid, id);
      if (record.is_subagent) {
        await detachSubagent(trx, uid, record, options.detach === true, this.#now());
      }
      await trx.deleteFrom("agents").where("id", "=", id).execute();
    });
  }

  /** The default agent `uid` owns (shared agents never count), or `undefined`. */
  getDefault(uid: string): Promise<AgentRecord | undefined> {
    return this.#kept(["default", uid], () => this.#loadDefault(uid));
  }

  async #loadDefault(uid: string): Promise<AgentRecord | undefined> {
    const row = await this.#db
      .selectFrom("agents")
      .selectAll()
      .where("owner_uid", "=", uid)
      .where("is_default", "=", 1)
      .where("is_subagent", "=", 0)
      // One default per owner is kept by every write; if a race ever left two, pick the latest.
      .orderBy("updated_at", "desc")
      .orderBy("id")
      .limit(1)
      .executeTakeFirst();
    return row === undefined ? undefined : fromAgentRow(row);
  }

  /**
   * The subagents named by `slugs` that `uid` may see, in the order of `slugs`. Unknown or
   * invisible slugs, agents that are not subagents and repeated slugs are dropped. Each slug is
   * resolved like a slug lookup (own agent first, else the oldest visible).
   */
  async findSubagents(uid: string, slugs: readonly string[]): Promise<AgentRecord[]> {
    const wanted = [...new Set(slugs)].filter((slug) => !hasNul(slug));
    if (wanted.length === 0) return [];
    return this.#kept(["subagents", uid, ...wanted], async () => {
      const visible = await this.#visible(uid, (query) =>
        query.where("is_subagent", "=", 1).where("slug", "in", wanted),
      );
      return wanted.flatMap((slug) => pickBySlug(visible, uid, slug) ?? []);
    });
  }

  /** The agent `uid` owns with `slug` (never one shared by someone else). */
  async #owned(uid: string, slug: string): Promise<AgentRecord | undefined> {
    if (hasNul(slug)) return undefined;
    const row = await selectAgents(this.#db)
      .where("owner_uid", "=", uid)
      .where("slug", "=", slug)
      .executeTakeFirst();
    return row === undefined ? undefined : fromAgentRow(row);
  }

  /**
   * Agents `uid` may see among those `narrow` selects, oldest first. Other owners' agents
   * shared with nobody are skipped in SQL (a plain text comparison that works on every
   * dialect); every remaining row is then checked with {@link canView}, which decides.
   */
  async #visible(uid: string, narrow: (query: AgentQuery) => AgentQuery): Promise<AgentRecord[]> {
    // Ordered in SQL: `created_at` (ISO-8601) and `id` (lowercase UUID) have one fixed format,
    // which every collation orders alike.
    const rows = await narrow(
      selectAgents(this.#db).where((eb) =>
        eb.or([eb("owner_uid", "=", uid), eb("share_config", "<>", UNSHARED_SHARE_CONFIG_JSON)]),
      ),
    )
      .orderBy("created_at")
      .orderBy("id")
      .execute();
    return rows.map(fromAgentRow).filter((record) => canView(record, uid));
  }

  /** Runs `work` in a transaction; a unique-index violation there means `slug` is taken. */
  async #transaction<T>(
    slug: string | undefined,
    work: (trx: Transaction<DatabaseSchema>) => Promise<T>,
  ): Promise<T> {
    try {
      return await this.#db.transaction().execute(work);
    } catch (error) {
      // The only unique index besides the random primary key is (owner_uid, slug).
      if (slug !== undefined && isUniqueViolation(error)) {
        throw new SubagentGraphError(
          ErrorCode.SlugTaken,
          `slug "${slug}" is taken: the owner already has an agent with that slug; choose another slug or update that agent`,
          { field: "slug", cause: error },
        );
      }
      throw error;
    }
  }
}

type AgentQuery = ReturnType<typeof selectAgents>;

function selectAgents(db: Executor) {
  return db.selectFrom("agents").selectAll();
}

/** Whether `stored` already is what `wanted` declares (ids, versions and times aside). */
function sameDefinition(stored: AgentRecord, wanted: AgentRecord): boolean {
  const definition = (record: AgentRecord) =>
    canonicalJson([
      record.slug,
      record.name,
      record.description,
      record.backend_id,
      record.is_subagent,
      record.is_default,
      record.share_config,
      record.config_json,
    ]);
  return definition(stored) === definition(wanted);
}

/** The user's own agent with `slug`, else the oldest visible one (`visible` is oldest first). */
function pickBySlug(
  visible: readonly AgentRecord[],
  uid: string,
  slug: string,
): AgentRecord | undefined {
  const matches = visible.filter((record) => record.slug === slug);
  return matches.find((record) => record.owner_uid === uid) ?? matches[0];
}

/** Loads `id` for a change by `uid`, telling "does not exist for you" from "read-only for you". */
async function loadEditable(trx: Executor, uid: string, id: string): Promise<AgentRecord> {
  if (hasNul(id)) throw notFound(id);
  const row = await selectAgents(trx).where("id", "=", id).executeTakeFirst();
  const record = row === undefined ? undefined : fromAgentRow(row);
  if (record === undefined || !canView(record, uid)) throw notFound(id);
  if (!canEdit(record, uid)) {
    throw new SubagentGraphError(
      ErrorCode.Forbidden,
      `agent "${record.slug}" is read-only for you: only its owner and its editors may change or delete it; ask the owner to add you to share_config.editors`,
    );
  }
  return record;
}

/**
 * The main agents of `subagent`'s owner that list its slug: refused unless `detach`, in which
 * case the slug is removed from each list (version bumped, guarded like any update). An editor
 * deleting someone else's subagent learns only the slugs of the agents they may see, and may
 * detach it only from agents they may edit.
 */
async function detachSubagent(
  trx: Executor,
  uid: string,
  subagent: AgentRecord,
  detach: boolean,
  now: Date,
): Promise<void> {
  const rows = await selectAgents(trx)
    .where("owner_uid", "=", subagent.owner_uid)
    .where("is_subagent", "=", 0)
    .execute();
  // By slug in byte order (not SQL's collation-dependent order): the message and the order of
  // the writes are the same on every database.
  const referencing = rows
    .sort((a, b) => compareText(a.slug, b.slug))
    .map(fromAgentRow)
    .filter((agent) => agent.config_json.context.subagents?.includes(subagent.slug));
  if (referencing.length === 0) return;
  const shown = referencing.filter((agent) => canView(agent, uid)).map((a) => `"${a.slug}"`);
  const hidden = referencing.length - shown.length;
  const named = [...shown, ...(hidden > 0 ? [`${hidden} agent(s) you cannot see`] : [])].join(", ");
  if (!detach) {
    throw new SubagentGraphError(
      ErrorCode.AgentInUse,
      `subagent "${subagent.slug}" is listed in context.subagents of ${named}: remove it from those agents first, or delete with detach (?detach=true) to remove it from their lists`,
      { field: "id" },
    );
  }
  if (referencing.some((agent) => !canEdit(agent, uid))) {
    throw new SubagentGraphError(
      ErrorCode.AgentInUse,
      `subagent "${subagent.slug}" is listed in context.subagents of ${named}, and you may not edit all of them: ask the owner "${subagent.owner_uid}" to remove it there first`,
      { field: "id" },
    );
  }
  for (const agent of referencing) {
    const context = {
      ...agent.config_json.context,
      subagents: (agent.config_json.context.subagents ?? []).filter((s) => s !== subagent.slug),
    };
    const result = await trx
      .updateTable("agents")
      .set({
        config_json: JSON.stringify({ ...agent.config_json, context }),
        version: agent.version + 1,
        updated_at: now.toISOString(),
      })
      .where("id", "=", agent.id)
      .where("version", "=", agent.version)
      .executeTakeFirst();
    if (result.numUpdatedRows !== 1n) {
      throw new SubagentGraphError(
        ErrorCode.VersionConflict,
        `agent "${agent.slug}" changed while "${subagent.slug}" was being detached from it: try the delete again`,
        { field: "id", details: { agent: agent.id } },
      );
    }
  }
}

/** Keeps one default per owner: every other default agent of `record`'s owner loses the flag. */
async function clearOtherDefaults(trx: Executor, record: AgentRecord, now: string): Promise<void> {
  await trx
    .updateTable("agents")
    .set((eb) => ({ is_default: 0, version: eb("version", "+", 1), updated_at: now }))
    .where("owner_uid", "=", record.owner_uid)
    .where("is_default", "=", 1)
    .where("id", "<>", record.id)
    .execute();
}

function notFound(idOrSlug: string): SubagentGraphError {
  return new SubagentGraphError(
    ErrorCode.NotFound,
    `agent "${idOrSlug}" not found: check the id or slug, or ask the agent's owner to share it with you`,
  );
}
