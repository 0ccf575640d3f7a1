import { stat } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { errnoOf, hasErrno, isSystemError } from "../../util/errno.js";

describe("errno", () => {
  it("reads the code of a real system error", async () => {
    const error = await stat("/subagent-graph-missing").catch((caught: unknown) => caught);
    expect(errnoOf(error)).toBe("ENOENT");
    expect(hasErrno(error, "ENOENT")).toBe(true);
    expect(hasErrno(error, "ENOTEMPTY", "EEXIST")).toBe(false);
    expect(isSystemError(error)).toBe(true);
  });

  it("has no code for values that are not system errors", () => {
    for (const value of [null, undefined, "ENOENT", 2, new Error("plain"), { code: 32000 }]) {
      expect(errnoOf(value)).toBeUndefined();
      expect(hasErrno(value, "ENOENT")).toBe(false);
      expect(isSystemError(value)).toBe(false);
    }
    // A string code on something that is not an Error: readable, but not a system error.
    expect(errnoOf({ code: "EPERM" })).toBe("EPERM");
    expect(isSystemError({ code: "EPERM" })).toBe(false);
  });
});
