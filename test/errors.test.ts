import { describe, expect, it } from "vitest";
import {
  ERROR_CATEGORIES,
  ERROR_CATEGORY,
  ErrorCode,
  messageOf,
  SubagentGraphError,
} from "../errors.js";
import { httpStatusOf } from "../server/http-errors.js";

/** The statuses each category may answer with (`server/http-errors.ts`). */
const STATUSES_OF: Record<(typeof ERROR_CATEGORIES)[number], readonly number[]> = {
  input: [400, 401, 403, 404, 413, 415, 422],
  conflict: [409],
  upstream: [502, 503, 504],
  ours: [500, 503],
};

describe("error categories", () => {
  it("give every code a category, and its HTTP status agrees with it", () => {
    for (const code of Object.values(ErrorCode)) {
      const category = ERROR_CATEGORY[code];
      expect(ERROR_CATEGORIES, code).toContain(category);
      expect(STATUSES_OF[category], `${code} (${category})`).toContain(httpStatusOf(code));
    }
    expect(Object.keys(ERROR_CATEGORY).sort()).toEqual(Object.values(ErrorCode).sort());
  });

  it("count upstream failures as nobody's input: isUserError only for input and conflicts", () => {
    const of = (code: ErrorCode) => new SubagentGraphError(code, "x");
    expect(of(ErrorCode.Validation)).toMatchObject({ category: "input", isUserError: true });
    expect(of(ErrorCode.ThreadBusy)).toMatchObject({ category: "conflict", isUserError: true });
    for (const code of [
      ErrorCode.ModelFailed,
      ErrorCode.EmbeddingFailed,
      ErrorCode.McpUnavailable,
      ErrorCode.DatabaseUnavailable,
    ]) {
      expect(of(code), code).toMatchObject({ category: "upstream", isUserError: false });
    }
    expect(of(ErrorCode.Internal)).toMatchObject({ category: "ours", isUserError: false });
  });

  it("carry the ids they are about as details", () => {
    const error = new SubagentGraphError(ErrorCode.ThreadBusy, "busy", {
      field: "thread_id",
      details: { thread_id: "t1", run_id: "r1" },
    });
    expect(error.details).toEqual({ thread_id: "t1", run_id: "r1" });
    expect(new SubagentGraphError(ErrorCode.NotFound, "gone").details).toBeUndefined();
  });
});

describe("messageOf", () => {
  it("reads an Error's message and anything else as text", () => {
    expect(messageOf(new TypeError("bad"))).toBe("bad");
    expect(messageOf("plain")).toBe("plain");
    expect(messageOf(42)).toBe("42");
    expect(messageOf(undefined)).toBe("undefined");
  });
});
