import { describe, expect, it } from "vitest";
import { MCP_TOOL_NAME_MAX, mcpToolNames } from "../../tools/mcp/names.js";

const VALID = /^[a-zA-Z0-9_-]{1,64}$/;

describe("mcpToolNames", () => {
  it("prefixes clean names with mcp_<server>_ and keeps them as they are", () => {
    const names = mcpToolNames("fs", ["read_text_file", "get-sum", "Echo2"]);
    expect([...names.entries()]).toEqual([
      ["read_text_file", "mcp_fs_read_text_file"],
      ["get-sum", "mcp_fs_get-sum"],
      ["Echo2", "mcp_fs_Echo2"],
    ]);
  });

  it("replaces characters outside [a-zA-Z0-9_-] with _", () => {
    expect(mcpToolNames("web", ["search.pages", "résumé tool"])).toEqual(
      new Map([
        ["search.pages", "mcp_web_search_pages"],
        ["résumé tool", "mcp_web_r_sum__tool"],
      ]),
    );
  });

  it("keeps the clean name and hashes the sanitised one when they collide", () => {
    const names = mcpToolNames("fs", ["read.file", "read_file"]);
    expect(names.get("read_file")).toBe("mcp_fs_read_file");
    expect(names.get("read.file")).toMatch(/^mcp_fs_read_file_[0-9a-f]{8}$/);
  });

  it("hashes every tool of a group that sanitises to one name (none wins by order)", () => {
    const forward = mcpToolNames("fs", ["a.b", "a b"]);
    const backward = mcpToolNames("fs", ["a b", "a.b"]);
    expect(forward.get("a.b")).toMatch(/^mcp_fs_a_b_[0-9a-f]{8}$/);
    expect(forward.get("a b")).toMatch(/^mcp_fs_a_b_[0-9a-f]{8}$/);
    expect(forward.get("a.b")).not.toBe(forward.get("a b"));
    expect(backward).toEqual(forward);
  });

  it("cuts long names to 64 characters with a hash, stable and distinct", () => {
    const a = `${"x".repeat(80)}a`;
    const b = `${"x".repeat(80)}b`;
    const names = mcpToolNames("a-rather-long-server-name", [a, b]);
    const [first, second] = [names.get(a), names.get(b)];
    expect(first).toMatch(VALID);
    expect(first).toHaveLength(MCP_TOOL_NAME_MAX);
    expect(second).toHaveLength(MCP_TOOL_NAME_MAX);
    expect(first).not.toBe(second);
    expect(mcpToolNames("a-rather-long-server-name", [b, a]).get(a)).toBe(first);
    // A name of exactly 64 characters fits as it is.
    const exact = "y".repeat(MCP_TOOL_NAME_MAX - "mcp_s_".length);
    expect(mcpToolNames("s", [exact]).get(exact)).toBe(`mcp_s_${exact}`);
  });

  it("never takes a reserved (registered) tool's name", () => {
    const names = mcpToolNames("fs", ["read"], new Set(["mcp_fs_read"]));
    expect(names.get("read")).toMatch(/^mcp_fs_read_[0-9a-f]{8}$/);
  });
});
