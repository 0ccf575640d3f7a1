import { z } from "zod";
import { toValidationError } from "../agents/validation.js";
import { ErrorCode, SubagentGraphError } from "../errors.js";
import { type HostedAgentContext, hostedAgentContextSchema } from "./context.js";

/** The fields a hosted run's context may set, in the order Studio's panel lists them. */
export const HOSTED_CONTEXT_FIELDS = Object.keys(hostedAgentContextSchema.shape);

/** The context under its own name, so every message and `field` reads `context.<field>`. */
const envelope = z.object({ context: hostedAgentContextSchema.strict() });

/**
 * The context of a run on a hosted graph (Studio's configuration panel, or a run's `context`
 * sent through `@langchain/langgraph-sdk`), checked and completed with its defaults: `uid`
 * defaults to the demo user; `agent`, `subagents` and the limits stay unset (the graph layer and
 * the agents' own settings decide). `undefined` and `null` are an empty context.
 *
 * @throws SubagentGraphError `VALIDATION_FAILED` with one line naming the field, the bad value
 *   and what is allowed (`context.max_rounds "lots" is invalid: use a positive whole number…`),
 *   and `field` set to `context.<field>`. The dev server passes a raw ZodError on as JSON, which
 *   is why the check happens here, before the graph sees the context.
 */
export function parseHostedContext(raw: unknown): HostedAgentContext {
  const input = { context: raw ?? {} };
  const result = envelope.safeParse(input);
  if (result.success) return result.data.context;
  const issue = result.error.issues[0];
  if (issue?.code === "unrecognized_keys" && issue.path.join(".") === "context") {
    const field = `context.${issue.keys[0] ?? ""}`;
    throw new SubagentGraphError(
      ErrorCode.Validation,
      `unknown field "${field}": the context takes ${HOSTED_CONTEXT_FIELDS.join(", ")}; remove it or check its spelling`,
      { field, cause: result.error },
    );
  }
  throw toValidationError(result.error, input);
}
