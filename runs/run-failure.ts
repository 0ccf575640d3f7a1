import { SubagentGraphError } from "../errors.js";

/**
 * The first of our typed errors in `error`'s cause chain, else `error`: langchain wraps what a
 * model or middleware throws (`MiddlewareError`), which would hide the code callers switch on.
 */
export function typedCause(error: unknown): unknown {
  let current: unknown = error;
  for (let depth = 0; current !== undefined && depth < 10; depth += 1) {
    if (SubagentGraphError.isInstance(current) && !isLangchainWrapper(current)) return current;
    current = (current as { cause?: unknown } | null)?.cause;
  }
  return error;
}

function isLangchainWrapper(error: unknown): boolean {
  return (error as { "~brand"?: unknown })["~brand"] === "MiddlewareError";
}
