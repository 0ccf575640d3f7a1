import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ErrorCode } from "../../errors.js";
import { createRuntime } from "../../runtime.js";
import { loadMcpServers, parseMcpConfig } from "../../tools/mcp/config.js";

/** Runs `parse` and returns the error it throws. */
function failure(parse: () => unknown): { code: string; field: string; message: string } {
  try {
    parse();
  } catch (error) {
    return error as { code: string; field: string; message: string };
  }
  throw new Error("expected a validation error");
}

describe("MCP server config", () => {
  it("accepts stdio and HTTP servers, filling in defaults", () => {
    expect(
      parseMcpConfig(
        {
          servers: {
            fs: { command: "node", args: ["server.js", "/tmp"], env: { DEBUG: "1" } },
            "web-2": { url: "http://127.0.0.1:3001/mcp" },
            plain: { command: "mcp-server" },
          },
        },
        "mcp.json",
      ),
    ).toEqual({
      fs: { command: "node", args: ["server.js", "/tmp"], env: { DEBUG: "1" } },
      "web-2": { url: "http://127.0.0.1:3001/mcp", headers: {} },
      plain: { command: "mcp-server", args: [], env: {} },
    });
  });

  it.each([
    ["Upper", "upper case"],
    ["has_underscore", "underscore"],
    ["-dash-first", "leading dash"],
    ["a".repeat(32), "32 characters"],
  ])("refuses the server name %j (%s)", (name) => {
    const error = failure(() =>
      parseMcpConfig({ servers: { [name]: { command: "node" } } }, "mcp.json"),
    );
    expect(error).toMatchObject({ code: ErrorCode.Validation, field: `servers.${name}` });
    expect(error.message).toContain(`invalid MCP server config in mcp.json: server "${name}"`);
    expect(error.message).toContain("the name is invalid");
  });

  it("refuses a server with both command and url, or neither", () => {
    const both = failure(() =>
      parseMcpConfig({ servers: { fs: { command: "node", url: "http://x/mcp" } } }, "mcp.json"),
    );
    expect(both).toMatchObject({ code: ErrorCode.Validation, field: "servers.fs" });
    expect(both.message).toContain('server "fs": has both command and url');
    const neither = failure(() => parseMcpConfig({ servers: { fs: { args: [] } } }, "mcp.json"));
    expect(neither.message).toContain('server "fs": has neither command nor url');
  });

  it("names the server and the field of every bad or unknown field", () => {
    const error = failure(() =>
      parseMcpConfig(
        {
          servers: {
            fs: { command: "node", args: "server.js", cmd: "x" },
            web: { url: "ftp://example.com/mcp", headers: { token: 1 } },
          },
        },
        "/data/mcp.json",
      ),
    );
    expect(error.code).toBe(ErrorCode.Validation);
    expect(error.field).toBe("servers.fs.args");
    expect(error.message).toContain('server "fs": unknown field "cmd"');
    expect(error.message).toContain('server "fs": field "args": use a list of string arguments');
    expect(error.message).toContain('server "web": field "url": use an http(s) URL');
    expect(error.message).toContain('server "web": field "headers.token"');
  });

  it("refuses a file without a servers object", () => {
    const error = failure(() => parseMcpConfig({ mcpServers: {} }, "mcp.json"));
    expect(error).toMatchObject({ code: ErrorCode.Validation });
    expect(error.message).toContain("invalid MCP server config in mcp.json");
  });

  describe("sources", () => {
    let dir: string;
    beforeEach(() => {
      dir = mkdtempSync(join(tmpdir(), "mcp-config-"));
    });
    afterEach(() => rmSync(dir, { recursive: true, force: true }));

    const write = (name: string, value: unknown) => {
      const file = join(dir, name);
      writeFileSync(file, typeof value === "string" ? value : JSON.stringify(value));
      return file;
    };

    it("reads <dataDir>/mcp.json, or none when it is absent", () => {
      expect(loadMcpServers({ env: {}, dataDir: dir })).toEqual({});
      write("mcp.json", { servers: { fs: { command: "node" } } });
      expect(Object.keys(loadMcpServers({ env: {}, dataDir: dir }))).toEqual(["fs"]);
    });

    it("prefers SUBAGENT_GRAPH_MCP over the data dir, and the option over both", () => {
      write("mcp.json", { servers: { fs: { command: "node" } } });
      const other = write("other.json", { servers: { web: { url: "http://127.0.0.1:9/mcp" } } });
      const env = { SUBAGENT_GRAPH_MCP: other };
      expect(Object.keys(loadMcpServers({ env, dataDir: dir }))).toEqual(["web"]);
      expect(
        Object.keys(
          loadMcpServers({ env, dataDir: dir, option: { mine: { command: "mcp-mine" } } }),
        ),
      ).toEqual(["mine"]);
    });

    it("fails on a missing SUBAGENT_GRAPH_MCP file and on a file that is not JSON", () => {
      const missing = failure(() =>
        loadMcpServers({ env: { SUBAGENT_GRAPH_MCP: join(dir, "nope.json") }, dataDir: dir }),
      );
      expect(missing).toMatchObject({ code: ErrorCode.Validation, field: "SUBAGENT_GRAPH_MCP" });
      write("mcp.json", "{ servers:");
      const broken = failure(() => loadMcpServers({ env: {}, dataDir: dir }));
      expect(broken.message).toContain(`invalid MCP server config in ${join(dir, "mcp.json")}`);
    });

    it("makes createRuntime fail on a bad config, naming the server and the field", async () => {
      write("mcp.json", { servers: { fs: { command: "node", url: "http://127.0.0.1:9/mcp" } } });
      await expect(
        createRuntime({ dataDir: dir, database: ":memory:", checkpointer: "memory", env: {} }),
      ).rejects.toMatchObject({
        code: ErrorCode.Validation,
        field: "servers.fs",
        message: expect.stringContaining('server "fs": has both command and url'),
      });
      await expect(
        createRuntime({
          dataDir: dir,
          database: ":memory:",
          checkpointer: "memory",
          env: {},
          mcpServers: { Bad_Name: { command: "node" } },
        }),
      ).rejects.toMatchObject({
        code: ErrorCode.Validation,
        message: expect.stringContaining(
          'invalid MCP server config in the mcpServers option: server "Bad_Name"',
        ),
      });
    });
  });
});
