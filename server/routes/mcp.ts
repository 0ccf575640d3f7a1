import type { FastifyInstance } from "fastify";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import { z } from "zod";
import type { Runtime } from "../../runtime.js";
import { errorResponses } from "../schemas.js";

const mcpServerSchema = z.object({
  name: z.string(),
  transport: z.enum(["stdio", "http"]),
  status: z
    .enum(["idle", "connecting", "connected", "unavailable"])
    .describe("unavailable: the last connection failed or was lost; the next call reconnects"),
  tools: z.array(z.string()).describe("tool names as agents see them: mcp_<server>_<tool>"),
  error: z.string().optional().describe("why the server is unavailable"),
});

/**
 * `/api/mcp`: the runtime's MCP servers (process-wide; agents pick them through
 * `context.mcp_servers`) with their status and tools.
 */
export function mcpRoutes(app: FastifyInstance, runtime: Runtime): void {
  const routes = app.withTypeProvider<ZodTypeProvider>();

  routes.get(
    "/api/mcp",
    {
      schema: {
        tags: ["mcp"],
        summary:
          "List the MCP servers with their status and tools (servers not connected yet are connected first unless connect=false)",
        querystring: z.strictObject({
          connect: z.enum(["true", "false"]).optional(),
        }),
        response: { 200: z.object({ servers: z.array(mcpServerSchema) }), ...errorResponses },
      },
    },
    async (request) => {
      const servers = await runtime.mcp.list({ connect: request.query.connect !== "false" });
      // The process id is for local diagnostics, not for HTTP clients.
      return { servers: servers.map(({ pid: _pid, ...server }) => server) };
    },
  );
}
