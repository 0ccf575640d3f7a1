import { describe, expect, it } from "vitest";
import {
  isChildThreadId,
  makeChildThreadId,
  parseChildThreadId,
} from "../../checkpoints/child-thread-id.js";
import { ErrorCode } from "../../errors.js";

const base = {
  parentThreadId: "thread-1",
  slug: "researcher",
  toolCallId: "call_1",
  aiMessageId: "msg_1",
};

describe("child thread ids", () => {
  it("have the documented format", () => {
    expect(makeChildThreadId(base)).toMatch(/^thread-1_sub_researcher_[0-9a-f]{8}$/);
  });

  it("are stable for the same call and differ when any input differs", () => {
    const id = makeChildThreadId(base);
    expect(makeChildThreadId({ ...base })).toBe(id);
    const variants = [
      { ...base, parentThreadId: "thread-2" },
      { ...base, slug: "reviewer" },
      { ...base, toolCallId: "call_2" },
      { ...base, aiMessageId: "msg_2" },
    ].map((input) => makeChildThreadId(input).slice(-8));
    expect(new Set([id.slice(-8), ...variants]).size).toBe(5);
  });

  it("round-trip for awkward parent ids, including ones that contain _sub_", () => {
    const parents = [
      "a",
      "x_sub_y",
      "p_sub_researcher_deadbeef",
      "thread_sub__sub_",
      "550e8400-e29b-41d4-a716-446655440000",
      "under_score_sub_z-9_00000000_sub_q",
      "T".repeat(160),
    ];
    const slugs = ["r", "researcher", "a-b-c", "0", `a${"b".repeat(62)}`, "sub"];
    for (const parentThreadId of parents) {
      for (const slug of slugs) {
        const id = makeChildThreadId({ ...base, parentThreadId, slug });
        const parsed = parseChildThreadId(id);
        expect(parsed, id).toEqual({ parentThreadId, slug, hash: id.slice(-8) });
      }
    }
  });

  it("parse only what has the shape of a child id", () => {
    for (const notChild of [
      "thread-1",
      "thread-1_sub_researcher",
      "thread-1_sub_Researcher_deadbeef",
      "thread-1_sub_re_searcher_deadbeef",
      "thread-1_sub_researcher_deadbeeg",
      "_sub_researcher_deadbeef",
    ]) {
      expect(parseChildThreadId(notChild), notChild).toBeUndefined();
      expect(isChildThreadId(notChild)).toBe(false);
    }
  });

  it("refuse slugs that would make the id ambiguous", () => {
    expect(() => makeChildThreadId({ ...base, slug: "re_search" })).toThrowError(
      expect.objectContaining({ code: ErrorCode.InvalidThreadId, field: "slug" }),
    );
    expect(() => makeChildThreadId({ ...base, parentThreadId: "" })).toThrowError(
      expect.objectContaining({ code: ErrorCode.InvalidThreadId }),
    );
  });
});
