import type { FastifyInstance } from "fastify";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import { z } from "zod";
import { agentCreateSchema, agentUpdateSchema } from "../../agents/schema.js";
import type { Runtime } from "../../runtime.js";
import { documentBodyOnly } from "../protocol/document-body-only.js";
import { idParam } from "../protocol/store-text.js";
import { agentSchema, errorResponses } from "../schemas.js";

const idParams = z.strictObject({ id: idParam().describe("agent id (or slug)") });

/**
 * `/api/agent`: agent management with the Yuxi semantics. Listing shows chat agents unless
 * `include_subagents=true`; create/update derive `is_subagent` from `SubAgentBackend`; get,
 * update and delete work for subagents too, with visibility and edit rights enforced by the
 * repository (invisible → 404, visible but not editable → 403).
 */
export function agentRoutes(app: FastifyInstance, runtime: Runtime): void {
  const routes = app.withTypeProvider<ZodTypeProvider>();

  routes.get(
    "/api/agent",
    {
      schema: {
        tags: ["agents"],
        summary: "List the agents you may see (chat agents only unless include_subagents=true)",
        querystring: z.strictObject({
          include_subagents: z.enum(["true", "false"]).optional(),
        }),
        response: { 200: z.object({ agents: z.array(agentSchema) }), ...errorResponses },
      },
    },
    async (request) => ({
      agents: await runtime.agents.list(request.uid, {
        include_subagents: request.query.include_subagents === "true",
      }),
    }),
  );

  routes.post(
    "/api/agent",
    {
      schema: {
        tags: ["agents"],
        summary: "Create an agent",
        body: agentCreateSchema,
        response: { 201: agentSchema, ...errorResponses },
      },
      validatorCompiler: documentBodyOnly,
    },
    async (request, reply) =>
      reply.status(201).send(await runtime.agents.create(request.uid, request.body)),
  );

  routes.get(
    "/api/agent/:id",
    {
      schema: {
        tags: ["agents"],
        summary: "Get an agent (chat agent or subagent)",
        params: idParams,
        response: { 200: agentSchema, ...errorResponses },
      },
    },
    async (request) => runtime.agents.get(request.uid, request.params.id),
  );

  routes.put(
    "/api/agent/:id",
    {
      schema: {
        tags: ["agents"],
        summary: "Update an agent (owner and editors); bumps its version",
        params: idParams,
        body: agentUpdateSchema,
        response: { 200: agentSchema, ...errorResponses },
      },
      validatorCompiler: documentBodyOnly,
    },
    async (request) => {
      const agent = await runtime.agents.get(request.uid, request.params.id);
      return runtime.agents.update(request.uid, agent.id, request.body);
    },
  );

  routes.delete(
    "/api/agent/:id",
    {
      schema: {
        tags: ["agents"],
        summary:
          "Delete an agent (owner and editors). A subagent its owner's main agents list is refused (409 AGENT_IN_USE) unless detach=true removes it from their lists",
        params: idParams,
        querystring: z.strictObject({ detach: z.enum(["true", "false"]).optional() }),
        response: { 204: z.null().describe("deleted"), ...errorResponses },
      },
    },
    async (request, reply) => {
      const agent = await runtime.agents.get(request.uid, request.params.id);
      await runtime.agents.delete(request.uid, agent.id, {
        detach: request.query.detach === "true",
      });
      return reply.status(204).send(null);
    },
  );
}
