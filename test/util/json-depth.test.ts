import { describe, expect, it } from "vitest";
import { clampDepth, findTooDeep, formatJsonPath } from "../../util/json-depth.js";

/** `{"a":{"a":…1}}` with `levels` objects, parsed (JSON.parse is iterative in V8). */
const nested = (levels: number, key = "a"): unknown =>
  JSON.parse(`${`{"${key}":`.repeat(levels)}1${"}".repeat(levels)}`);

describe("findTooDeep", () => {
  it("counts containers: scalars are 0 deep, {} and [] are 1", () => {
    expect(findTooDeep(1, 0)).toBeUndefined();
    expect(findTooDeep("x", 0)).toBeUndefined();
    expect(findTooDeep(null, 0)).toBeUndefined();
    expect(findTooDeep({}, 1)).toBeUndefined();
    expect(findTooDeep({}, 0)).toEqual({ path: [], limit: 0 });
    expect(findTooDeep([[1]], 2)).toBeUndefined();
    expect(findTooDeep([[1]], 1)).toEqual({ path: [0], limit: 1 });
  });

  it("names the path to the first container beyond the limit, through objects and arrays", () => {
    const value = { ok: [1, 2], metadata: { list: [{ deep: { deeper: {} } }] } };
    expect(findTooDeep(value, 6)).toBeUndefined();
    expect(findTooDeep(value, 5)).toEqual({
      path: ["metadata", "list", 0, "deep", "deeper"],
      limit: 5,
    });
  });

  it("walks half a million levels (a 1 MiB body of brackets) without recursion", () => {
    const deep = JSON.parse(`${"[".repeat(500_000)}${"]".repeat(500_000)}`);
    expect(findTooDeep(deep, 64)?.path).toHaveLength(64);
    expect(findTooDeep(nested(100_000), 100_000)).toBeUndefined();
  });
});

describe("clampDepth", () => {
  it("returns the value itself when it is within the limit", () => {
    const value = { a: [1, { b: "c" }] };
    expect(clampDepth(value, 3, "cut")).toBe(value);
  });

  it("replaces what is deeper than the limit by the marker, keeping the rest", () => {
    const value = { keep: 1, list: [{ inner: { gone: true } }, "x"] };
    expect(clampDepth(value, 3, "cut")).toEqual({ keep: 1, list: [{ inner: "cut" }, "x"] });
  });

  it("makes a stored value of 100,000 levels serialisable", () => {
    const deep = nested(100_000);
    expect(() => JSON.stringify(deep)).toThrow(RangeError);
    const clamped = clampDepth(deep, 256, "cut");
    expect(findTooDeep(clamped, 256)).toBeUndefined();
    expect(JSON.stringify(clamped)).toContain('"a":"cut"');
  });
});

describe("formatJsonPath", () => {
  it("writes identifiers with dots, indices and other keys in brackets, and shortens", () => {
    expect(formatJsonPath(["metadata", "a"])).toBe("metadata.a");
    expect(formatJsonPath(["input", "messages", 0, "content"])).toBe("input.messages[0].content");
    expect(formatJsonPath(["metadata", "a b", 1])).toBe('metadata["a b"][1]');
    expect(formatJsonPath(["metadata", "a", "a", "a", "a", "a"])).toBe("metadata.a.a.a…");
    expect(formatJsonPath([])).toBe("");
  });
});
