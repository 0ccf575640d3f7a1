import type { FastifyInstance } from "fastify";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import { z } from "zod";
import type { Runtime } from "../../runtime.js";
import { errorResponses } from "../schemas.js";

const namedSchema = z.object({ name: z.string(), description: z.string() });

const catalogSchema = z.object({
  models: z.array(z.string()).describe("model specs usable as context.model (openai:<name> too)"),
  default_model: z.string().describe("the model of an agent that sets none"),
  tools: z.array(namedSchema).describe("registered tools (context.tools)"),
  skills: z.array(namedSchema).describe("installed skills (context.skills)"),
  mcp_servers: z.array(z.string()).describe("defined MCP servers (context.mcp_servers)"),
  knowledge_bases: z
    .array(z.object({ id: z.string(), name: z.string(), description: z.string() }))
    .describe("knowledge bases you may read (context.knowledge_bases), new ones at once"),
});

/**
 * `/api/catalog`: what an agent's runtime config can name (models, tools, skills, MCP servers,
 * knowledge bases), so a form can offer choices instead of free text. Process-wide, the same
 * for every user, except the knowledge bases: those the caller may read.
 */
export function catalogRoutes(app: FastifyInstance, runtime: Runtime): void {
  app.withTypeProvider<ZodTypeProvider>().get(
    "/api/catalog",
    {
      schema: {
        tags: ["agents"],
        summary:
          "The models, tools, skills, MCP servers and (your) knowledge bases agents can be configured with",
        response: { 200: catalogSchema, ...errorResponses },
      },
    },
    async (request) => {
      const catalog = await runtime.catalog();
      const knowledgeBases = await runtime.kb.list(request.uid);
      return {
        models: catalog.models,
        default_model: catalog.defaultModel,
        tools: catalog.tools,
        skills: catalog.skills,
        mcp_servers: catalog.mcpServers,
        knowledge_bases: knowledgeBases.map(({ id, name, description }) => ({
          id,
          name,
          description,
        })),
      };
    },
  );
}
