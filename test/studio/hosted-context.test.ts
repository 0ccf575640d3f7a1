import { describe, expect, it } from "vitest";
import { DEMO_UID } from "../../agents/demo.js";
import { HOSTED_CONTEXT_FIELDS, parseHostedContext } from "../../backends/hosted-context.js";
import { ErrorCode, SubagentGraphError } from "../../errors.js";

/** The error `parseHostedContext` throws for `raw`, as code, field and message. */
function refusal(raw: unknown) {
  try {
    parseHostedContext(raw);
  } catch (error) {
    if (!SubagentGraphError.isInstance(error)) throw error;
    return { code: error.code, field: error.field, message: error.message };
  }
  throw new Error(`accepted ${JSON.stringify(raw)}`);
}

describe("the context of a hosted (Studio) run", () => {
  it("needs nothing: an absent, null or empty context is the demo user's default agent", () => {
    for (const raw of [undefined, null, {}]) {
      expect(parseHostedContext(raw)).toEqual({ uid: DEMO_UID });
    }
  });

  it("keeps every field it is given", () => {
    const full = {
      uid: "alice",
      agent: "writer",
      subagents: ["reviewer"],
      max_rounds: 2,
      max_result_chars: 500,
      max_parallel_subagents: 1,
      subagent_timeout_ms: 60_000,
    };
    expect(parseHostedContext(full)).toEqual(full);
    expect(HOSTED_CONTEXT_FIELDS).toEqual(Object.keys(full));
  });

  it("refuses a bad value with one line naming the field, the value and the fix", () => {
    expect(refusal({ max_rounds: "lots" })).toEqual({
      code: ErrorCode.Validation,
      field: "context.max_rounds",
      message:
        'context.max_rounds "lots" is invalid: use a positive whole number, or leave it out for the agent\'s own setting',
    });
    expect(refusal({ subagent_timeout_ms: 0 }).field).toBe("context.subagent_timeout_ms");
    expect(refusal({ uid: "" })).toMatchObject({
      field: "context.uid",
      message: 'context.uid "" is invalid: use a user id (a non-empty string)',
    });
    expect(refusal({ subagents: "reviewer" })).toMatchObject({
      field: "context.subagents",
      message: 'context.subagents "reviewer" is invalid: use a list of subagent slugs',
    });
    expect(refusal("demo").message).toBe(
      'context "demo" is invalid: use an object such as { "uid": "demo", "agent": "assistant" }, or leave it out',
    );
  });

  it("refuses an unknown field, listing the ones it takes (the runtime's internal fields are not among them)", () => {
    for (const field of ["max_round", "thread_id", "file_thread_id", "is_subagent_runtime"]) {
      expect(refusal({ [field]: 1 })).toEqual({
        code: ErrorCode.Validation,
        field: `context.${field}`,
        message: `unknown field "context.${field}": the context takes uid, agent, subagents, max_rounds, max_result_chars, max_parallel_subagents, subagent_timeout_ms; remove it or check its spelling`,
      });
    }
  });
});
