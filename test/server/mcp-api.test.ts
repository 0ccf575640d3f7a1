import { afterEach, describe, expect, it } from "vitest";
import type { McpServerInfo } from "../../tools/mcp/manager.js";
import { expectError, type HttpServer, startHttpServer } from "../support/http-server.js";
import { everythingServer } from "../support/mcp-servers.js";

type McpList = { servers: McpServerInfo[] };

/** `GET /api/mcp` over real HTTP, with a real MCP server behind it. */
describe("/api/mcp over HTTP", () => {
  let http: HttpServer | undefined;
  afterEach(async () => {
    await http?.stop();
    http = undefined;
  });

  const start = async () => {
    http = await startHttpServer({
      runtime: {
        runtime: {
          mcpServers: {
            ev: everythingServer(),
            down: { command: process.execPath, args: ["-e", "process.exit(3)"] },
          },
        },
      },
    });
    return http;
  };

  it("needs a token", async () => {
    const server = await start();
    expectError(await server.call("GET", "/api/mcp"), 401, "UNAUTHORIZED");
    // Nothing was started for the refused request.
    const listed = await server.call<McpList>("GET", "/api/mcp?connect=false", {
      token: server.tokenOf("alice"),
    });
    expect(listed.body.servers.map((s) => s.status)).toEqual(["idle", "idle"]);
    const openapi = await server.call<{ paths: Record<string, unknown> }>("GET", "/openapi.json");
    expect(Object.keys(openapi.body.paths)).toContain("/api/mcp");
  });

  it("lists the servers with their status, tools and errors", async () => {
    const server = await start();
    const token = server.tokenOf("alice");

    const listed = await server.call<McpList>("GET", "/api/mcp", { token });

    expect(listed.status).toBe(200);
    const [down, ev] = listed.body.servers;
    expect(down).toEqual({
      name: "down",
      transport: "stdio",
      status: "unavailable",
      tools: [],
      error: "its process exited during start-up",
    });
    expect(ev).toMatchObject({ name: "ev", transport: "stdio", status: "connected" });
    expect(ev?.tools).toContain("mcp_ev_echo");
    // No process ids over HTTP.
    expect(ev).not.toHaveProperty("pid");
  });

  it("refuses unknown query parameters", async () => {
    const server = await start();
    expectError(
      await server.call("GET", "/api/mcp?connect=maybe", { token: server.tokenOf("alice") }),
      422,
      "VALIDATION_FAILED",
    );
  });
});
