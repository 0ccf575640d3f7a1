/**
 * Knowledge base records in the shared database, with the agents' sharing rules: every method
 * takes the acting user's `uid` first and answers as that user sees the store. A knowledge base
 * they may not see does not exist for them (`NOT_FOUND`, the same message as a truly absent
 * one); one they may see but not change is `FORBIDDEN`.
 *
 * Lookups by name: names are unique per owner only. The user's own wins, else the oldest
 * visible one (`created_at`, then `id`). An id always wins over a name.
 */

import { randomUUID } from "node:crypto";
import type { Kysely, SelectQueryBuilder } from "kysely";
import { canEdit, canView } from "../agents/permissions.js";
import { ErrorCode, SubagentGraphError } from "../errors.js";
import type { Database } from "../store/database.js";
import { hasNul } from "../store/portable-text.js";
import { clockOf, type RepositoryOptions } from "../store/repository-options.js";
import type { DatabaseSchema, KnowledgeBasesTable } from "../store/schema.js";
import { isUniqueViolation } from "../store/sql-errors.js";
import type { StampedReads } from "../store/stamped-reads.js";
import { activeEmbedder, embedderKey } from "./embedder.js";
import { deleteChunksWhere } from "./fts.js";
import { fromKbRow, toKbRow, UNSHARED_KB_SHARE_JSON } from "./rows.js";
import { type KnowledgeBaseRecord, parseKbCreate, parseKbUpdate } from "./schema.js";
import { resetVectors } from "./vector-store.js";

type KbQuery = SelectQueryBuilder<
  DatabaseSchema,
  "knowledge_bases",
  KnowledgeBasesTable & Record<string, unknown>
>;

/** Reads and writes `knowledge_bases` on behalf of a user. */
export class KnowledgeBaseRepository {
  readonly #db: Kysely<DatabaseSchema>;
  readonly #database: Database;
  readonly #now: () => Date;
  readonly #reads: StampedReads | undefined;

  /**
   * @param options.reads keeps `find`, `get`, `list` and `findByIds` until a knowledge base is written
   *   (`store/stamped-reads.ts`); every lookup reads the database without it.
   */
  constructor(database: Database, options: RepositoryOptions & { reads?: StampedReads } = {}) {
    this.#database = database;
    this.#db = database.db;
    this.#now = clockOf(options);
    this.#reads = options.reads;
  }

  /** `load`, kept by `reads` under `key` when the repository has them. */
  #kept<T>(key: unknown[], load: () => Promise<T>): Promise<T> {
    return this.#reads ? this.#reads.read(JSON.stringify(["kb", ...key]), load) : load();
  }

  /**
   * Creates a knowledge base owned by `uid`.
   * @param payload untrusted input; see `kbCreateSchema`.
   * @throws SubagentGraphError `VALIDATION_FAILED`, `ALREADY_EXISTS` (the owner has one by that
   *   name).
   */
  async create(uid: string, payload: unknown): Promise<KnowledgeBaseRecord> {
    const parsed = parseKbCreate(payload);
    const now = this.#now().toISOString();
    const record: KnowledgeBaseRecord = {
      id: randomUUID(),
      owner_uid: uid,
      ...parsed,
      version: 1,
      created_at: now,
      updated_at: now,
    };
    await this.#write(record.name, (db) =>
      db.insertInto("knowledge_bases").values(toKbRow(record)).execute(),
    );
    return record;
  }

  /**
   * The knowledge base with this id or name that `uid` may see.
   * @throws SubagentGraphError `NOT_FOUND` when there is none (absent or invisible alike).
   */
  async get(uid: string, idOrName: string): Promise<KnowledgeBaseRecord> {
    const record = await this.find(uid, idOrName);
    if (record === undefined) throw kbNotFound(idOrName);
    return record;
  }

  /** Like {@link get}, but `undefined` instead of `NOT_FOUND`. */
  async find(uid: string, idOrName: string): Promise<KnowledgeBaseRecord | undefined> {
    if (hasNul(idOrName)) return undefined;
    return this.#kept(["find", uid, idOrName], async () => {
      const visible = await this.#visible(uid, (query) =>
        query.where((eb) => eb.or([eb("id", "=", idOrName), eb("name", "=", idOrName)])),
      );
      return visible.find((kb) => kb.id === idOrName) ?? pickByName(visible, uid, idOrName);
    });
  }

  /** Every knowledge base `uid` may see, oldest first. */
  list(uid: string): Promise<KnowledgeBaseRecord[]> {
    return this.#kept(["list", uid], () => this.#visible(uid, (query) => query));
  }

  /** The knowledge bases with these ids that `uid` may see (unknown ids are left out). */
  async findByIds(uid: string, ids: readonly string[]): Promise<KnowledgeBaseRecord[]> {
    const wanted = [...new Set(ids)].filter((id) => !hasNul(id));
    if (wanted.length === 0) return [];
    return this.#kept(["ids", uid, ...wanted], () =>
      this.#visible(uid, (query) => query.where("id", "in", wanted)),
    );
  }

  /**
   * Applies `patch` to the knowledge base, raising its version by one.
   * @throws SubagentGraphError `NOT_FOUND`, `FORBIDDEN`, `VALIDATION_FAILED`,
   *   `VERSION_CONFLICT`, `ALREADY_EXISTS`.
   */
  async update(uid: string, idOrName: string, patch: unknown): Promise<KnowledgeBaseRecord> {
    const parsed = parseKbUpdate(patch);
    const current = await this.editable(uid, idOrName);
    if (parsed.expected_version !== undefined && parsed.expected_version !== current.version) {
      throw versionConflict(current.name);
    }
    const { expected_version: _expected, ...changes } = parsed;
    const next: KnowledgeBaseRecord = {
      ...current,
      ...changes,
      version: current.version + 1,
      updated_at: this.#now().toISOString(),
    };
    const { id: _id, owner_uid: _owner, created_at: _created, ...row } = toKbRow(next);
    const before = keyOf(current);
    const after = keyOf(next);
    const updated = await this.#write(next.name, (db) =>
      db.transaction().execute(async (trx) => {
        const result = await trx
          .updateTable("knowledge_bases")
          .set(row)
          .where("id", "=", current.id)
          .where("version", "=", current.version)
          .executeTakeFirst();
        if (result.numUpdatedRows !== 1n) return false;
        // Another model, length or endpoint: the old vectors go in the same transaction, and
        // every file waits for new ones (README "Knowledge bases", reindex).
        if (before !== after) {
          await resetVectors(trx, this.#database.dialect, current.id, after !== undefined);
        }
        return true;
      }),
    );
    if (!updated) throw versionConflict(current.name);
    return next;
  }

  /**
   * Deletes the knowledge base with its files and chunks. Runs that have it in their snapshot
   * find it gone at their next search (the tools say so and name what is left).
   * @throws SubagentGraphError `NOT_FOUND`, `FORBIDDEN`.
   */
  async delete(uid: string, idOrName: string): Promise<void> {
    const record = await this.editable(uid, idOrName);
    await this.#db.transaction().execute(async (trx) => {
      await deleteChunksWhere(trx, this.#database.dialect, { kbId: record.id });
      const files = trx.selectFrom("kb_files").select("id").where("kb_id", "=", record.id);
      await trx.deleteFrom("kb_file_contents").where("file_id", "in", files).execute();
      await trx.deleteFrom("kb_files").where("kb_id", "=", record.id).execute();
      await trx.deleteFrom("knowledge_bases").where("id", "=", record.id).execute();
    });
  }

  /**
   * The knowledge base `uid` may change (owner or editor).
   * @throws SubagentGraphError `NOT_FOUND` (absent or invisible), `FORBIDDEN` (visible only).
   */
  async editable(uid: string, idOrName: string): Promise<KnowledgeBaseRecord> {
    const record = await this.get(uid, idOrName);
    if (!canEdit(record, uid)) {
      throw new SubagentGraphError(
        ErrorCode.Forbidden,
        `knowledge base "${record.name}" is shared with you read-only: ask its owner (${record.owner_uid}) to add you to share_config.editors`,
      );
    }
    return record;
  }

  /**
   * Knowledge bases `uid` may see among those `narrow` selects, oldest first. Other owners'
   * unshared rows are skipped in SQL; {@link canView} decides for the rest.
   */
  async #visible(uid: string, narrow: (query: KbQuery) => KbQuery): Promise<KnowledgeBaseRecord[]> {
    const base = this.#db
      .selectFrom("knowledge_bases")
      .selectAll()
      .where((eb) =>
        eb.or([eb("owner_uid", "=", uid), eb("share_config", "<>", UNSHARED_KB_SHARE_JSON)]),
      ) as KbQuery;
    const rows = await narrow(base).orderBy("created_at").orderBy("id").execute();
    return rows.map(fromKbRow).filter((record) => canView(record, uid));
  }

  /** Runs a write; a unique-index violation there means the owner already uses `name`. */
  async #write<T>(name: string, work: (db: Kysely<DatabaseSchema>) => Promise<T>): Promise<T> {
    try {
      return await work(this.#db);
    } catch (error) {
      if (isUniqueViolation(error)) {
        throw new SubagentGraphError(
          ErrorCode.AlreadyExists,
          `knowledge base name "${name}" is taken: you already have a knowledge base by that name; choose another name or update that one`,
          { field: "name" },
        );
      }
      throw error;
    }
  }
}

/** The NOT_FOUND error for a knowledge base: the same for absent and invisible ones. */
export function kbNotFound(idOrName: string): SubagentGraphError {
  return new SubagentGraphError(
    ErrorCode.NotFound,
    `knowledge base "${idOrName}" not found: list yours with GET /api/kb (or \`kb list\`)`,
  );
}

function versionConflict(name: string): SubagentGraphError {
  return new SubagentGraphError(
    ErrorCode.VersionConflict,
    `knowledge base "${name}" was changed by someone else: reload it and apply the change again`,
    { field: "expected_version" },
  );
}

/** The embedder key of a knowledge base's settings; undefined without an embedder. */
export function keyOf(record: KnowledgeBaseRecord): string | undefined {
  const active = activeEmbedder(record.embedder);
  return active === undefined ? undefined : embedderKey(active);
}

function pickByName(
  visible: readonly KnowledgeBaseRecord[],
  uid: string,
  name: string,
): KnowledgeBaseRecord | undefined {
  const named = visible.filter((kb) => kb.name === name);
  return named.find((kb) => kb.owner_uid === uid) ?? named[0];
}
