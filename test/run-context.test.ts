import { describe, expect, it } from "vitest";
import { ErrorCode, SubagentGraphError } from "../errors.js";
import {
  fileScopeOf,
  LIMIT_FIELD_NAMES,
  type LimitOverrides,
  limitOverridesOf,
  type MainRunContext,
  mainRunContextSchema,
  readRunContext,
  readSubagentRunContext,
  type SubagentRunContext,
  subagentRunContextSchema,
} from "../run-context.js";

const main = { uid: "alice", thread_id: "t1", is_subagent_runtime: false } satisfies MainRunContext;

const child = {
  uid: "alice",
  thread_id: "t1_sub_r_0123abcd",
  parent_thread_id: "t1",
  file_thread_id: "t1",
  skills_thread_id: "t1_sub_r_0123abcd",
  is_subagent_runtime: true,
  allowed_tools: ["read_file"],
  max_rounds: 3,
  intent: "look it up",
} satisfies SubagentRunContext;

/** The error `read` throws, checked to be a typed validation error. */
function refusal(read: () => unknown): SubagentGraphError {
  try {
    read();
  } catch (error) {
    expect(SubagentGraphError.isInstance(error)).toBe(true);
    const typed = error as SubagentGraphError;
    expect(typed.code).toBe(ErrorCode.Validation);
    return typed;
  }
  throw new Error("expected the read to throw");
}

describe("readRunContext", () => {
  it("reads a main run's context, the file and skills scopes defaulting to the thread", () => {
    const run = readRunContext(main);
    expect(run).toEqual(main);
    expect(fileScopeOf(run)).toEqual({
      uid: "alice",
      threadId: "t1",
      fileThreadId: "t1",
      skillsThreadId: "t1",
    });
  });

  it("takes the thread from the config when the context has none (a LangGraph host's run)", () => {
    const run = readRunContext({ uid: "demo", agent: "assistant" }, { thread_id: "hosted-1" });
    expect(run).toMatchObject({ uid: "demo", thread_id: "hosted-1", is_subagent_runtime: false });
    // The context's own thread wins over the config's.
    expect(readRunContext(main, { thread_id: "other" }).thread_id).toBe("t1");
  });

  it("reads a subagent's context as the task tool writes it", () => {
    const run = readRunContext(child);
    expect(run).toEqual(child);
    expect(fileScopeOf(run)).toEqual({
      uid: "alice",
      threadId: "t1_sub_r_0123abcd",
      fileThreadId: "t1",
      skillsThreadId: "t1_sub_r_0123abcd",
    });
    expect(readSubagentRunContext(child)).toEqual(child);
  });

  it("reads a context whatever its object's class (langchain hands hooks a frozen one)", () => {
    const frozen = Object.freeze(Object.assign(new (class AgentContext {})(), main));
    expect(readRunContext(frozen)).toEqual(main);
  });

  it("refuses a missing context, uid or thread, naming the field and the fix", () => {
    for (const [context, configurable, field] of [
      [undefined, undefined, "context"],
      [null, { thread_id: "t1" }, "context"],
      ["alice", undefined, "context"],
      [{ thread_id: "t1" }, undefined, "context.uid"],
      [{ uid: "alice" }, undefined, "context.thread_id"],
      [{ uid: "alice" }, { checkpoint_ns: "" }, "context.thread_id"],
    ] as const) {
      const error = refusal(() => readRunContext(context, configurable, { reader: "file tools" }));
      expect(error.field).toBe(field);
      expect(error.message).toContain(
        "file tools need the run's context { uid, thread_id }, and this run's context has no uid or thread_id",
      );
      expect(error.message).toContain("run the graph through createRuntime() or pass that context");
    }
  });

  it("refuses a malformed field, naming it, its value and the fix", () => {
    const bad = refusal(() => readRunContext({ ...main, max_rounds: "lots" }));
    expect(bad.field).toBe("context.max_rounds");
    expect(bad.message).toContain(
      'context.max_rounds "lots" is invalid: use a positive whole number, or leave it out for the agent\'s own setting',
    );

    const empty = refusal(() => readRunContext({ ...main, file_thread_id: "" }));
    expect(empty.field).toBe("context.file_thread_id");
    expect(empty.message).toContain('context.file_thread_id "" is invalid');

    // A subagent's context must be whole: the task tool makes it.
    const { allowed_tools: _dropped, ...partial } = child;
    const missing = refusal(() => readRunContext(partial));
    expect(missing.field).toBe("context.allowed_tools");
    expect(missing.message).toContain("context.allowed_tools is missing");
    expect(missing.message).toContain("run subagents through a main agent's task tool");

    const flag = refusal(() => readRunContext({ ...main, is_subagent_runtime: "yes" }));
    expect(flag.field).toBe("context.is_subagent_runtime");
  });

  it("reads a subagent's bounds only from a subagent's context", () => {
    const error = refusal(() => readSubagentRunContext(main, { reader: "a subagent's bounds" }));
    expect(error.field).toBe("context.is_subagent_runtime");
    expect(error.message).toContain("a subagent's bounds need a subagent's run context");
    expect(refusal(() => readSubagentRunContext(undefined)).field).toBe("context");
  });
});

describe("limit overrides", () => {
  it("are the limits a main run's context sets, and none of a subagent's", () => {
    const overrides: LimitOverrides = { max_rounds: 2, subagent_timeout_ms: 500 };
    expect(limitOverridesOf(readRunContext({ ...main, ...overrides }))).toEqual(overrides);
    expect(limitOverridesOf(readRunContext(main))).toEqual({});
    expect(limitOverridesOf(readRunContext(child))).toEqual({});
  });

  it("are the limit fields of the main context's schema", () => {
    expect(LIMIT_FIELD_NAMES).toEqual([
      "max_rounds",
      "max_result_chars",
      "max_parallel_subagents",
      "subagent_timeout_ms",
    ]);
    for (const name of LIMIT_FIELD_NAMES) expect(mainRunContextSchema.shape).toHaveProperty(name);
  });
});

describe("the schemas", () => {
  it("default a main run's is_subagent_runtime to false and refuse true", () => {
    expect(mainRunContextSchema.parse({ uid: "alice" }).is_subagent_runtime).toBe(false);
    expect(
      mainRunContextSchema.safeParse({ uid: "alice", is_subagent_runtime: true }).success,
    ).toBe(false);
    expect(subagentRunContextSchema.safeParse(child).success).toBe(true);
  });

  it("checks a context object once, and again for another thread or after a refusal", () => {
    const context = { uid: "alice", is_subagent_runtime: false };
    const first = readRunContext(context, { thread_id: "t1" });
    // The same object (no second parse), frozen since every later read shares it.
    expect(readRunContext(context, { thread_id: "t1" })).toBe(first);
    expect(Object.isFrozen(first)).toBe(true);
    expect(() => {
      (first as { uid: string }).uid = "mallory";
    }).toThrow(TypeError);
    // The thread it falls back to is part of what was checked.
    const other = readRunContext(context, { thread_id: "t2" });
    expect(other.thread_id).toBe("t2");
    // A refused context is never remembered: it is refused at every read.
    const bad = { uid: "", thread_id: "t1" };
    expect(refusal(() => readRunContext(bad)).field).toBe("context.uid");
    expect(refusal(() => readRunContext(bad)).field).toBe("context.uid");
    // The arrays inside a child's checked context are frozen too.
    const checked = readSubagentRunContext({ ...child, allowed_tools: ["read_file"] });
    expect(Object.isFrozen(checked.allowed_tools)).toBe(true);
  });
});
