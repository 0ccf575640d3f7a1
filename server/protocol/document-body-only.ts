import type { FastifySchemaCompiler } from "fastify";
import { validatorCompiler } from "fastify-type-provider-zod";
import type { ZodType } from "zod";

/**
 * The validator of a route whose body schema documents the body while a repository validates
 * it (agents, knowledge bases: one set of rules and messages for the library, the CLI and
 * HTTP): the body passes through as sent, and the path parameters and query string are checked
 * by their zod schemas as on every other route.
 *
 * A route's `validatorCompiler` applies to every part of the request, so one that let
 * everything through would also skip the path parameters' checks (an id with a NUL, see
 * `server/protocol/store-text.ts`).
 */
export function documentBodyOnly<S>(route: Parameters<FastifySchemaCompiler<S>>[0]) {
  if (route.httpPart === "body") return (data: unknown) => ({ value: data });
  // Fastify compiles each part with that part's schema: here a zod schema of ours.
  return validatorCompiler(route as unknown as Parameters<FastifySchemaCompiler<ZodType>>[0]);
}
