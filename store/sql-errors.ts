/**
 * Recognising database errors by meaning, whatever the driver.
 *
 * Drivers report constraint violations with their own codes; repositories ask this module so
 * they stay free of engine details.
 */

/** Driver codes of a unique-constraint violation: better-sqlite3, then PostgreSQL (SQLSTATE). */
const UNIQUE_VIOLATION_CODES: ReadonlySet<unknown> = new Set(["SQLITE_CONSTRAINT_UNIQUE", "23505"]);

/** True when `error` is a driver's report that a unique index or constraint was violated. */
export function isUniqueViolation(error: unknown): boolean {
  return (
    typeof error === "object" &&
    error !== null &&
    UNIQUE_VIOLATION_CODES.has(Reflect.get(error, "code"))
  );
}
