/**
 * Whether an error means the database could not be reached, rather than that a statement was
 * wrong: the HTTP layer answers those 503 instead of 500 (see `server/http-errors.ts`).
 */

import { errnoOf } from "../util/errno.js";

/** Socket errors of a connection that could not be made or was lost. */
const NETWORK_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EPIPE",
  "ENOTFOUND",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EAI_AGAIN",
]);

/**
 * PostgreSQL's SQLSTATEs for a server that cannot serve: class 08 (connection exception), 57P01
 * to 57P03 (shut down by an administrator or a crash, not accepting connections yet) and 53300
 * (too many connections).
 */
const UNAVAILABLE_SQLSTATE = /^(08\w{3}|57P0[123]|53300)$/;

/**
 * What node-postgres says, without a code, when its pool gives up waiting for a connection or a
 * connection ends under a query.
 */
const DRIVER_MESSAGES = [
  /^timeout exceeded when trying to connect$/i,
  /^Connection terminated/i,
  /^Client has encountered a connection error and is not queryable$/i,
];

/** How many `cause` links to follow (a wrapped error's own cause, and so on). */
const MAX_CAUSES = 5;

/** True when `error`, or an error it was caused by, is the database being unreachable. */
export function isDatabaseUnavailable(error: unknown): boolean {
  let current = error;
  for (let depth = 0; depth <= MAX_CAUSES && current instanceof Error; depth += 1) {
    const { message } = current;
    const code = errnoOf(current);
    if (code !== undefined && (NETWORK_CODES.has(code) || UNAVAILABLE_SQLSTATE.test(code)))
      return true;
    if (DRIVER_MESSAGES.some((pattern) => pattern.test(message))) return true;
    current = current.cause;
  }
  return false;
}
