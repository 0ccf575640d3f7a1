/**
 * Text rules that make SQLite and PostgreSQL answer alike.
 *
 * - Ordering: SQLite compares text byte by byte (`BINARY`); PostgreSQL uses the database's
 *   collation, which for the usual `en_US.UTF-8` puts `"alice"` before `"Bob"` and may ignore
 *   punctuation. Repositories that promise an order of free text sort with {@link compareText},
 *   which is SQLite's order (and PostgreSQL's `"C"`) whatever the database's collation.
 * - NUL: PostgreSQL's `text` cannot hold U+0000 and rejects a query that passes one as a
 *   parameter, while SQLite stores and compares it like any character. Keys containing it can
 *   never have been stored, so lookups answer "absent" without asking ({@link hasNul}), and
 *   writes refuse it up front.
 */

/** Orders strings by their UTF-8 bytes (= by code point), like SQLite's `BINARY` collation. */
export function compareText(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, "utf8"), Buffer.from(b, "utf8"));
}

/** True when `text` contains U+0000, which PostgreSQL cannot store or compare. */
export function hasNul(text: string): boolean {
  return text.includes("\0");
}
