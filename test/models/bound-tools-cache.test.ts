import { tool } from "@langchain/core/tools";
import { ChatOpenAI } from "@langchain/openai";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { withBoundToolsCache } from "../../models/bound-tools-cache.js";

const lookup = tool(async () => "x", {
  name: "lookup",
  description: "Looks a thing up.",
  schema: z.object({ q: z.string() }),
});
const other = tool(async () => "y", {
  name: "other",
  description: "Another tool.",
  schema: z.object({}),
});

function model() {
  return withBoundToolsCache(new ChatOpenAI({ model: "m", apiKey: "sk-test" }), 2);
}

/** The call options a bound ChatOpenAI sends with every request (a protected field). */
function optionsOf(bound: unknown) {
  return (bound as { defaultOptions: { tools?: unknown[]; tool_choice?: unknown } }).defaultOptions;
}

/** The tools a bound ChatOpenAI would send, by name. */
function boundNames(bound: unknown): string[] {
  return (optionsOf(bound).tools ?? []).map(
    (t) => (t as { function: { name: string } }).function.name,
  );
}

describe("withBoundToolsCache", () => {
  it("answers the same tools and options with the same bound model", () => {
    const cached = model();
    const first = cached.bindTools([lookup, other], { tool_choice: "auto" });
    expect(cached.bindTools([lookup, other], { tool_choice: "auto" })).toBe(first);
    expect(boundNames(first)).toEqual(["lookup", "other"]);
  });

  it("binds again when the tools, their order or the options differ", () => {
    const cached = model();
    const both = cached.bindTools([lookup, other]);
    const swapped = cached.bindTools([other, lookup]);
    expect(swapped).not.toBe(both);
    expect(boundNames(swapped)).toEqual(["other", "lookup"]);
    const forced = cached.bindTools([lookup, other], { tool_choice: "required" });
    expect(forced).not.toBe(both);
    expect(optionsOf(forced).tool_choice).toBe("required");
  });

  it("does not cache options that are not plain JSON", () => {
    const cached = model();
    const schema = z.object({ a: z.string() });
    const options = { response_format: { type: "json_schema", schema } } as never;
    expect(cached.bindTools([lookup], options)).not.toBe(cached.bindTools([lookup], options));
  });

  it("keeps only the most recently used bindings", () => {
    const cached = model();
    const a = cached.bindTools([lookup]);
    const b = cached.bindTools([other]);
    expect(cached.bindTools([lookup])).toBe(a);
    // A third binding evicts the least recently used one (`other`), not `lookup`.
    cached.bindTools([lookup, other]);
    expect(cached.bindTools([lookup])).toBe(a);
    expect(cached.bindTools([other])).not.toBe(b);
  });
});
