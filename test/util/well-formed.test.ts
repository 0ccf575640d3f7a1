import { describe, expect, it } from "vitest";
import { isWellFormedUnicode, toWellFormedUnicode } from "../../util/well-formed.js";

// The ES2024 methods these replace answer the same for every case below (Node 20 has them; the
// package's lib stops at ES2023, so the expectations are written out instead of compared).
const CASES: { name: string; value: string; wellFormed: boolean; repaired: string }[] = [
  { name: "empty", value: "", wellFormed: true, repaired: "" },
  { name: "ASCII", value: "notes/a.txt", wellFormed: true, repaired: "notes/a.txt" },
  {
    name: "a surrogate pair",
    value: "x\uD83D\uDE00y",
    wellFormed: true,
    repaired: "x\uD83D\uDE00y",
  },
  {
    name: "a lone high surrogate",
    value: "s\uD800.txt",
    wellFormed: false,
    repaired: "s\uFFFD.txt",
  },
  { name: "a lone low surrogate", value: "\uDC00", wellFormed: false, repaired: "\uFFFD" },
  { name: "a pair in reverse", value: "\uDE00\uD83D", wellFormed: false, repaired: "\uFFFD\uFFFD" },
  {
    name: "a lone high before a pair",
    value: "\uD800\uD800\uDC00",
    wellFormed: false,
    repaired: "\uFFFD\uD800\uDC00",
  },
  { name: "a cut pair at the end", value: "ab\uD83D", wellFormed: false, repaired: "ab\uFFFD" },
];

describe("well-formed Unicode without the ES2024 string methods", () => {
  it.each(CASES)("$name", ({ value, wellFormed, repaired }) => {
    expect(isWellFormedUnicode(value)).toBe(wellFormed);
    expect(toWellFormedUnicode(value)).toBe(repaired);
  });

  it("keeps no state between calls (the global pattern's lastIndex)", () => {
    expect(toWellFormedUnicode("a\uD800")).toBe("a\uFFFD");
    expect(toWellFormedUnicode("a\uD800")).toBe("a\uFFFD");
    expect(isWellFormedUnicode("\uD800")).toBe(false);
    expect(isWellFormedUnicode("\uD800")).toBe(false);
  });
});
