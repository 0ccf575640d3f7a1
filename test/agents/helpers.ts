/** Test helpers shared by the agent and store tests. */

import { expect } from "vitest";
import { type ErrorCode, SubagentGraphError } from "../../errors.js";

/**
 * A clock that moves one second forward on every reading, so records created in a row have
 * distinct, ordered timestamps without any sleeping.
 */
export function steppingClock(start = "2025-01-01T00:00:00.000Z"): () => Date {
  let next = Date.parse(start);
  return () => {
    const now = new Date(next);
    next += 1000;
    return now;
  };
}

/** Asserts that `action` fails with a {@link SubagentGraphError} of `code` (and `field`). */
export async function expectFailure(
  action: Promise<unknown> | (() => unknown),
  code: ErrorCode,
  field?: string,
): Promise<SubagentGraphError> {
  let failure: unknown;
  try {
    await (typeof action === "function" ? action() : action);
  } catch (error) {
    failure = error;
  }
  if (!SubagentGraphError.isInstance(failure)) {
    throw new Error(`expected a SubagentGraphError ${code}, got ${String(failure)}`);
  }
  expect(failure.code).toBe(code);
  if (field !== undefined) expect(failure.field).toBe(field);
  return failure;
}
