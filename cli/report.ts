import { SubagentGraphError } from "../errors.js";

/**
 * How an error is shown to the user: a deliberate {@link SubagentGraphError} as
 * `error [CODE]: message` (its message already names the fix, a stack would only hide it),
 * anything else with its stack, since that is a bug or an outage worth the detail.
 */
export function describeError(error: unknown): string {
  if (SubagentGraphError.isInstance(error)) return `error [${error.code}]: ${error.message}`;
  if (error instanceof Error) return error.stack ?? `${error.name}: ${error.message}`;
  return `error: ${String(error)}`;
}
