/**
 * The `code` of a Node system error (`ENOENT`, `ELOOP`, …), read one way everywhere.
 *
 * Node's system errors are plain `Error`s with a string `code`, but a rejection can carry
 * anything, so a cast like `(error as NodeJS.ErrnoException).code` is a guess: it throws on
 * `null` and lets a non-string code through. This leaf module (no imports) is below every
 * floor, so `util/`, the sandbox's file-system guard and the rest can share it.
 */

/**
 * The string `code` of `error`, or `undefined` when it has none (not an object, no `code`, or
 * a code that is not a string, such as an MCP error's number).
 *
 * @example
 * errnoOf(Object.assign(new Error("gone"), { code: "ENOENT" })); // "ENOENT"
 * errnoOf(null); // undefined
 */
export function errnoOf(error: unknown): string | undefined {
  if (typeof error !== "object" || error === null || !("code" in error)) return undefined;
  return typeof error.code === "string" ? error.code : undefined;
}

/** True when `error` carries one of `codes` (for example `hasErrno(error, "ENOTEMPTY", "EEXIST")`). */
export function hasErrno(error: unknown, ...codes: readonly string[]): boolean {
  const code = errnoOf(error);
  return code !== undefined && codes.includes(code);
}

/**
 * True for an `Error` carrying a string `code`: a failure the file system reported (a missing
 * file, a permission), as opposed to a bug in our own code.
 */
export function isSystemError(error: unknown): error is Error & { code: string } {
  return error instanceof Error && errnoOf(error) !== undefined;
}
