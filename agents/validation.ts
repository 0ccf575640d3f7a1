/**
 * Turning zod failures into {@link SubagentGraphError}s that a person can act on.
 *
 * The schemas in `schema.ts` attach a fix to every field ("use true or false"); this module adds
 * the field's dotted path and the offending value, so a message reads
 * `slug "My_Agent" is invalid: use 1-63 lowercase letters, …`.
 */

import type { z } from "zod";
import { ErrorCode, SubagentGraphError } from "../errors.js";

/**
 * For a value no option of a union accepts, the problem inside the option whose shape it has
 * (`{ "allowed_decisions": ["maybe"] }` is an object with a bad entry, not "neither true nor an
 * object"), else the union's own message.
 */
function innermost(issue: z.core.$ZodIssue): z.core.$ZodIssue {
  if (issue.code !== "invalid_union") return issue;
  for (const option of issue.errors) {
    const nested = option.find((inner) => inner.path.length > 0);
    if (nested) return innermost({ ...nested, path: [...issue.path, ...nested.path] });
  }
  return issue;
}

/** Longest rendering of a bad value inside a message; longer ones are cut with "…". */
const MAX_SHOWN_VALUE = 40;

/**
 * Parses `input` with `schema`, throwing a `VALIDATION_FAILED` error about the first problem.
 *
 * @throws SubagentGraphError `VALIDATION_FAILED` with `field` set to the dotted path.
 */
export function parseOrThrow<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
  const result = schema.safeParse(input);
  if (!result.success) throw toValidationError(result.error, input);
  return result.data;
}

/**
 * Converts a zod error into a `VALIDATION_FAILED` {@link SubagentGraphError}.
 *
 * The message describes the first issue (naming the field, the bad value and the fix) and counts
 * the rest; `field` is the dotted path of that issue (`config_json.context.subagents.0`), or
 * `undefined` when the payload as a whole is wrong.
 *
 * @param input the value that was parsed, used to show the bad value.
 */
export function toValidationError(error: z.ZodError, input: unknown): SubagentGraphError {
  const [first, ...rest] = error.issues;
  const issue = first && innermost(first);
  if (issue === undefined) {
    return new SubagentGraphError(ErrorCode.Validation, "the payload is invalid", { cause: error });
  }
  const more =
    rest.length === 0 ? "" : ` (and ${rest.length} more problem${rest.length === 1 ? "" : "s"})`;
  const path = issue.path.map(String);

  if (issue.code === "unrecognized_keys") {
    const field = [...path, issue.keys[0] ?? ""].join(".");
    const others = issue.keys.length > 1 ? ` (also: ${issue.keys.slice(1).join(", ")})` : "";
    return new SubagentGraphError(
      ErrorCode.Validation,
      `unknown field "${field}"${others}: remove it or check its spelling${more}`,
      { field, cause: error },
    );
  }

  const field = path.length === 0 ? undefined : path.join(".");
  const value = valueAt(input, issue.path);
  const subject = field ?? "the payload";
  const problem =
    value === undefined ? `${subject} is missing` : `${subject} ${showValue(value)} is invalid`;
  return new SubagentGraphError(ErrorCode.Validation, `${problem}: ${issue.message}${more}`, {
    ...(field === undefined ? {} : { field }),
    cause: error,
  });
}

function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let current = input;
  for (const key of path) {
    if (typeof current !== "object" || current === null) return undefined;
    current = Reflect.get(current, key);
  }
  return current;
}

function showValue(value: unknown): string {
  let shown: string;
  try {
    shown = JSON.stringify(value) ?? String(value);
  } catch {
    // BigInts and cyclic structures cannot be stringified as JSON.
    shown = String(value);
  }
  return shown.length > MAX_SHOWN_VALUE ? `${shown.slice(0, MAX_SHOWN_VALUE - 1)}…` : shown;
}
