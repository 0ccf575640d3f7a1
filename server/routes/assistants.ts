import type { FastifyInstance } from "fastify";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import { z } from "zod";
import type { AgentRecord } from "../../agents/schema.js";
import type { Runtime } from "../../runtime.js";
import { chatAgent } from "../chat-agent.js";
import { idParam } from "../protocol/store-text.js";
import { assistantSchema, errorResponses } from "../schemas.js";

/** A chat agent as the API's `Assistant` (`assistant_id` = agent id, `graph_id` = its slug). */
export function assistantOf(agent: AgentRecord) {
  return {
    assistant_id: agent.id,
    graph_id: agent.slug,
    name: agent.name,
    // The SDK types `description` as an optional string (never null): left out when empty.
    ...(agent.description ? { description: agent.description } : {}),
    config: {},
    context: {},
    metadata: { owner_uid: agent.owner_uid, slug: agent.slug, is_default: agent.is_default },
    version: agent.version,
    created_at: agent.created_at,
    updated_at: agent.updated_at,
  };
}

/** The filters of an assistant search or count (the SDK's `assistants.search` and `count`). */
const assistantQuerySchema = z.looseObject({
  graph_id: z.string().optional(),
  name: z.string().optional(),
  metadata: z.record(z.string(), z.unknown()).optional(),
});

/** `/assistants`: the chat agents the caller may see. */
export function assistantRoutes(app: FastifyInstance, runtime: Runtime): void {
  const routes = app.withTypeProvider<ZodTypeProvider>();

  /** The caller's assistants the filters keep, in the agent list's order. */
  const findAssistants = async (uid: string, query: z.infer<typeof assistantQuerySchema>) => {
    const wanted = Object.entries(query.metadata ?? {});
    return (await runtime.agents.list(uid))
      .map(assistantOf)
      .filter(
        (assistant) =>
          (query.graph_id === undefined || assistant.graph_id === query.graph_id) &&
          (query.name === undefined || assistant.name.includes(query.name)) &&
          wanted.every(
            ([key, value]) =>
              JSON.stringify((assistant.metadata as Record<string, unknown>)[key]) ===
              JSON.stringify(value),
          ),
      );
  };

  routes.post(
    "/assistants/search",
    {
      schema: {
        tags: ["assistants"],
        summary: "Search the chat agents you may see",
        body: assistantQuerySchema
          .extend({
            limit: z.number().int().min(1).max(1000).optional(),
            offset: z.number().int().min(0).optional(),
          })
          .optional(),
        response: { 200: z.array(assistantSchema), ...errorResponses },
      },
    },
    async (request, reply) => {
      const body = request.body ?? {};
      const all = await findAssistants(request.uid, body);
      const offset = body.offset ?? 0;
      const limit = body.limit ?? 10;
      reply.header("x-pagination-total", String(all.length));
      if (offset + limit < all.length) reply.header("x-pagination-next", String(offset + limit));
      return all.slice(offset, offset + limit);
    },
  );

  routes.post(
    "/assistants/count",
    {
      schema: {
        tags: ["assistants"],
        summary: "How many of the chat agents you may see a search with these filters finds",
        body: assistantQuerySchema.optional(),
        response: { 200: z.number().int(), ...errorResponses },
      },
    },
    async (request) => (await findAssistants(request.uid, request.body ?? {})).length,
  );

  routes.get(
    "/assistants/:assistant_id",
    {
      schema: {
        tags: ["assistants"],
        summary: "Get a chat agent by id or slug",
        params: z.object({ assistant_id: idParam() }),
        response: { 200: assistantSchema, ...errorResponses },
      },
    },
    async (request) =>
      assistantOf(await chatAgent(runtime, request.uid, request.params.assistant_id)),
  );
}
