/**
 * Users and their API tokens, for the HTTP server (`Authorization: Bearer <token>` or
 * `x-api-key: <token>`) and the CLI that manages them.
 *
 * A token is shown once, when it is issued; the store keeps only its SHA-256, so a copy of the
 * database does not hand out working tokens. Tokens are looked up by that hash, revoked by id,
 * and never deleted (a revoked token stays listed, with when it was revoked).
 */

import { createHash, randomBytes } from "node:crypto";
import type { Kysely } from "kysely";
import { ErrorCode, SubagentGraphError } from "../errors.js";
import { compareText, hasNul } from "./portable-text.js";
import { clockOf, type RepositoryOptions } from "./repository-options.js";
import type { DatabaseSchema, TokensTable, UsersTable } from "./schema.js";

/**
 * Valid user ids: 1-64 characters, letters, digits, `.`, `_`, `@` and `-`, starting with a letter
 * or digit (so an id is safe in a file name, a URL path segment and a log line).
 */
export const USER_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$/;

/** A user, as the repository returns it. */
export interface UserRecord {
  uid: string;
  displayName: string;
  /** ISO-8601, UTC. */
  createdAt: string;
}

/** Options of {@link UserRepository.add} and {@link UserRepository.ensure}. */
export interface AddUserOptions {
  /** Shown in listings; default the uid. 1-100 characters, no control characters. */
  displayName?: string;
}

/** Options of {@link UserRepository.issueToken}. */
export interface IssueTokenOptions {
  /** What the token is for ("laptop", "ci"); default `"default"`. 1-100 characters. */
  label?: string;
}

/** A newly issued token: the only place the token text ever appears. */
export interface IssuedToken {
  /** The token's id (`tok_…`), for listing and revoking; not a secret. */
  id: string;
  uid: string;
  label: string;
  /** ISO-8601, UTC. */
  createdAt: string;
  /** The secret itself (`sgk_…`). It cannot be read back later: hand it to the user now. */
  token: string;
}

/** A token as {@link UserRepository.listTokens} shows it: never the token or its hash. */
export interface TokenSummary {
  id: string;
  label: string;
  /** ISO-8601, UTC. */
  createdAt: string;
  /** ISO-8601, UTC; null until first used. Accurate to a minute (see `authenticate`). */
  lastUsedAt: string | null;
  /** ISO-8601, UTC; null while the token is valid. */
  revokedAt: string | null;
}

/** Every token starts with this, so a leaked one is easy to recognise (and to scan for). */
const TOKEN_PREFIX = "sgk_";
/** Random bytes per token: 256 bits, far beyond guessing. */
const TOKEN_BYTES = 32;
/** Longer inputs are refused before hashing (a real token is 47 characters). */
const MAX_TOKEN_LENGTH = 200;
const TOKEN_ID_PREFIX = "tok_";
const TOKEN_ID_BYTES = 8;
const DEFAULT_LABEL = "default";
const MAX_TEXT_LENGTH = 100;
/** `last_used_at` is written at most this often per token, not on every request. */
const LAST_USED_RESOLUTION_MS = 60_000;
/** Control characters (line breaks, tabs, escapes): they would break the CLI's columns and logs. */
const CONTROL_CHARACTER = /\p{Cc}/u;

/** Reads and writes `users` and `tokens`. */
export class UserRepository {
  readonly #db: Kysely<DatabaseSchema>;
  readonly #now: () => Date;

  constructor(db: Kysely<DatabaseSchema>, options: RepositoryOptions = {}) {
    this.#db = db;
    this.#now = clockOf(options);
  }

  /**
   * Adds a user.
   *
   * @throws SubagentGraphError `VALIDATION_FAILED` for an invalid uid (field `uid`) or display
   *   name (field `displayName`), or when the uid already exists (field `uid`).
   */
  async add(uid: string, options: AddUserOptions = {}): Promise<UserRecord> {
    const row = newUserRow(uid, options, this.#now());
    const result = await this.#db
      .insertInto("users")
      .values(row)
      .onConflict((conflict) => conflict.column("uid").doNothing())
      .executeTakeFirst();
    if (result.numInsertedOrUpdatedRows === 0n) {
      throw new SubagentGraphError(
        ErrorCode.Validation,
        `user "${uid}" already exists: choose another uid (see "users list")`,
        { field: "uid" },
      );
    }
    return toUserRecord(row);
  }

  /**
   * The user `uid`, added first when missing. An existing user is returned as stored (its
   * display name is not changed).
   *
   * Race-safe: concurrent calls all insert with "on conflict do nothing" and read the one row.
   *
   * @throws SubagentGraphError `VALIDATION_FAILED` for an invalid uid or display name.
   */
  async ensure(uid: string, options: AddUserOptions = {}): Promise<UserRecord> {
    await this.#db
      .insertInto("users")
      .values(newUserRow(uid, options, this.#now()))
      .onConflict((conflict) => conflict.column("uid").doNothing())
      .execute();
    const user = await this.get(uid);
    if (user === undefined) {
      throw new SubagentGraphError(
        ErrorCode.Internal,
        `user "${uid}" was neither added nor found: the users table is inconsistent`,
      );
    }
    return user;
  }

  /** The user `uid`, or `undefined` when there is none. */
  async get(uid: string): Promise<UserRecord | undefined> {
    // Such a uid was never stored, and PostgreSQL refuses to compare it.
    if (hasNul(uid)) return undefined;
    const row = await this.#db
      .selectFrom("users")
      .selectAll()
      .where("uid", "=", uid)
      .executeTakeFirst();
    return row === undefined ? undefined : toUserRecord(row);
  }

  /** Every user, by uid (byte order: `"Bob"` before `"alice"`, on every database). */
  async list(): Promise<UserRecord[]> {
    // Sorted here, not in SQL: PostgreSQL would order by the database's collation.
    const rows = await this.#db.selectFrom("users").selectAll().execute();
    return rows.sort((a, b) => compareText(a.uid, b.uid)).map(toUserRecord);
  }

  /**
   * Issues a new API token for `uid`. The returned `token` is the only copy of the secret: the
   * store keeps its SHA-256 alone.
   *
   * @throws SubagentGraphError `NOT_FOUND` when the user does not exist (field `uid`);
   *   `VALIDATION_FAILED` for a bad label (field `label`).
   */
  async issueToken(uid: string, options: IssueTokenOptions = {}): Promise<IssuedToken> {
    const label = checkedText(options.label ?? DEFAULT_LABEL, "label");
    if ((await this.get(uid)) === undefined) {
      throw new SubagentGraphError(
        ErrorCode.NotFound,
        `user "${uid}" not found: add the user first ("users add ${uid}")`,
        { field: "uid" },
      );
    }
    const token = `${TOKEN_PREFIX}${randomBytes(TOKEN_BYTES).toString("base64url")}`;
    const row = {
      id: `${TOKEN_ID_PREFIX}${randomBytes(TOKEN_ID_BYTES).toString("hex")}`,
      uid,
      token_hash: hashToken(token),
      label,
      created_at: this.#now().toISOString(),
      last_used_at: null,
      revoked_at: null,
    } satisfies TokensTable;
    await this.#db.insertInto("tokens").values(row).execute();
    return { id: row.id, uid, label, createdAt: row.created_at, token };
  }

  /**
   * The uid a token belongs to, or `undefined` when the token is unknown, revoked, belongs to a
   * user who no longer exists, or is not a token at all. Never throws on any input (only on a
   * broken database).
   *
   * Marks the token as used (`last_used_at`) at most once a minute, so a busy client does not
   * cost a write per request.
   */
  async authenticate(token: string): Promise<string | undefined> {
    // Cheap refusals first: nothing that fails these was ever issued, and an oversized input is
    // not worth hashing.
    if (typeof token !== "string" || token.length > MAX_TOKEN_LENGTH) return undefined;
    if (!token.startsWith(TOKEN_PREFIX) || token.length === TOKEN_PREFIX.length) return undefined;
    // The lookup compares hashes through an index, so its timing tells a guesser nothing about
    // the stored token's text.
    const row = await this.#db
      .selectFrom("tokens")
      .innerJoin("users", "users.uid", "tokens.uid")
      .select(["tokens.id", "tokens.uid", "tokens.last_used_at"])
      .where("tokens.token_hash", "=", hashToken(token))
      .where("tokens.revoked_at", "is", null)
      .executeTakeFirst();
    if (row === undefined) return undefined;

    const now = this.#now();
    const due =
      row.last_used_at === null ||
      now.getTime() - Date.parse(row.last_used_at) >= LAST_USED_RESOLUTION_MS;
    if (due) {
      // The condition is repeated in SQL so that concurrent requests write it once.
      const stale = new Date(now.getTime() - LAST_USED_RESOLUTION_MS).toISOString();
      await this.#db
        .updateTable("tokens")
        .set({ last_used_at: now.toISOString() })
        .where("id", "=", row.id)
        .where((eb) => eb.or([eb("last_used_at", "is", null), eb("last_used_at", "<=", stale)]))
        .execute();
    }
    return row.uid;
  }

  /** The user's tokens, oldest first, revoked ones included. Never the tokens or their hashes. */
  async listTokens(uid: string): Promise<TokenSummary[]> {
    if (hasNul(uid)) return [];
    // Both keys have one fixed format (ISO-8601 time, `tok_` + hex), so every collation orders
    // them alike.
    const rows = await this.#db
      .selectFrom("tokens")
      .select(["id", "label", "created_at", "last_used_at", "revoked_at"])
      .where("uid", "=", uid)
      .orderBy("created_at")
      .orderBy("id")
      .execute();
    return rows.map((row) => ({
      id: row.id,
      label: row.label,
      createdAt: row.created_at,
      lastUsedAt: row.last_used_at,
      revokedAt: row.revoked_at,
    }));
  }

  /**
   * Revokes one of `uid`'s tokens: it stops authenticating at once. Returns false when the user
   * has no such token (another user's token id counts as none) or it was already revoked.
   */
  async revokeToken(uid: string, tokenId: string): Promise<boolean> {
    if (hasNul(uid) || hasNul(tokenId)) return false;
    const result = await this.#db
      .updateTable("tokens")
      .set({ revoked_at: this.#now().toISOString() })
      .where("id", "=", tokenId)
      .where("uid", "=", uid)
      .where("revoked_at", "is", null)
      .executeTakeFirst();
    return result.numUpdatedRows > 0n;
  }
}

/**
 * Lowercase hex SHA-256 of a token. A fast, unsalted hash is right here, unlike for passwords:
 * a token carries 256 random bits, so no amount of hashing speed makes guessing it from the
 * hash feasible, and a deterministic hash is what lets `authenticate` find the row by index
 * without a slow key-derivation function on every request.
 */
function hashToken(token: string): string {
  return createHash("sha256").update(token, "utf8").digest("hex");
}

function newUserRow(uid: string, options: AddUserOptions, now: Date): UsersTable {
  checkUid(uid);
  return {
    uid,
    display_name: checkedText(options.displayName ?? uid, "displayName"),
    created_at: now.toISOString(),
  };
}

function checkUid(uid: string): void {
  if (typeof uid === "string" && USER_ID_PATTERN.test(uid)) return;
  const shown = typeof uid === "string" ? JSON.stringify(uid.slice(0, 80)) : String(uid);
  throw new SubagentGraphError(
    ErrorCode.Validation,
    `user id ${shown} is invalid: use 1-64 letters, digits, ".", "_", "@" or "-", starting with a letter or digit (${USER_ID_PATTERN})`,
    { field: "uid" },
  );
}

/** `text` trimmed, checked to be 1-100 characters without control characters. */
function checkedText(text: string, field: "label" | "displayName"): string {
  const what = field === "label" ? "token label" : "display name";
  const trimmed = typeof text === "string" ? text.trim() : "";
  if (trimmed === "" || Array.from(trimmed).length > MAX_TEXT_LENGTH) {
    throw new SubagentGraphError(
      ErrorCode.Validation,
      `${what} must be 1-${MAX_TEXT_LENGTH} characters, got ${trimmed === "" ? "an empty one" : Array.from(trimmed).length}`,
      { field },
    );
  }
  if (CONTROL_CHARACTER.test(trimmed)) {
    throw new SubagentGraphError(
      ErrorCode.Validation,
      `${what} ${JSON.stringify(trimmed.slice(0, 80))} contains control characters (such as a line break): use plain text`,
      { field },
    );
  }
  return trimmed;
}

function toUserRecord(row: UsersTable): UserRecord {
  return { uid: row.uid, displayName: row.display_name, createdAt: row.created_at };
}
