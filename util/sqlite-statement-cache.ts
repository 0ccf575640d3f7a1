import type SQLite from "better-sqlite3";

/** How many distinct statements one connection keeps compiled; the least recently used go first. */
export const STATEMENT_CACHE_SIZE = 256;

/**
 * `db` whose `prepare` answers from a cache of compiled statements, keyed by their SQL text;
 * everything else is `db`'s own (`db` stays the connection: closing either closes both).
 *
 * better-sqlite3 compiles every `prepare` anew, and neither kysely's SQLite driver nor
 * LangGraph's `SqliteSaver` keeps statements (they prepare one per query, per `put`, per
 * `putWrites`). Compiling costs more than most of our statements take to run: the ten
 * statements of a run's records went from about 1.0 to 0.4 ms with this cache (bench/README.md,
 * "Scenario: dispatch"). A compiled statement stays valid across schema
 * changes (SQLite recompiles it when it must).
 *
 * A cached statement is shared by every caller of the same SQL, so callers must not change its
 * modes (`raw`, `pluck`, `expand`, `safeIntegers`); neither kysely nor the saver does. One busy
 * with an `iterate` still open is not handed out again: that call gets a fresh statement.
 */
export function withStatementCache(
  db: SQLite.Database,
  size = STATEMENT_CACHE_SIZE,
): SQLite.Database {
  const statements = new Map<string, SQLite.Statement>();
  const prepare = (source: string): SQLite.Statement => {
    const kept = statements.get(source);
    if (kept?.busy) return db.prepare(source);
    if (kept !== undefined) {
      // Map keeps insertion order: re-inserting makes this the most recently used.
      statements.delete(source);
      statements.set(source, kept);
      return kept;
    }
    const statement = db.prepare(source);
    statements.set(source, statement);
    if (statements.size > size) {
      const oldest = statements.keys().next().value as string;
      statements.delete(oldest);
    }
    return statement;
  };
  return new Proxy(db, {
    get(target, property) {
      if (property === "prepare") return prepare;
      const value: unknown = Reflect.get(target, property, target);
      // better-sqlite3's methods are native and need the real connection as `this`.
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}
