import type { FastifyInstance } from "fastify";
import { ErrorCode, SubagentGraphError } from "../errors.js";
import { findTooDeep, formatJsonPath } from "../util/json-depth.js";

/**
 * Deepest JSON a request body may nest (containers; the body itself is level 1).
 *
 * 64 is the default `MaxDepth` of .NET's JSON serializers. The deepest body a client of ours
 * sends is a fork's tool-call arguments: `values.messages[i].tool_calls[j].args…`, about 6 levels
 * plus the arguments' own nesting, so 64 leaves room for anything real. It is far below where
 * a response breaks: V8's `JSON.stringify` overflows the stack some 4,500 levels down (Node 20),
 * `JSON.parse` does not (it is iterative: a 1 MiB body of `[` parses), so the parse itself is
 * safe and the depth is checked right after it, before any route sees the body.
 */
export const MAX_JSON_DEPTH = 64;

/**
 * Replaces Fastify's `application/json` parser with one that also refuses bodies nested deeper
 * than {@link MAX_JSON_DEPTH}: a 422 `VALIDATION_FAILED` whose `field` is the (shortened) path
 * where the limit was passed. Everything else is Fastify's own parser: empty and malformed
 * bodies are its 400s, `__proto__`/`constructor.prototype` keys are refused, and the size stays
 * capped by the server's `bodyLimit` (413).
 */
export function registerJsonBodyParser(app: FastifyInstance): void {
  const parse = app.getDefaultJsonParser("error", "error");
  app.removeContentTypeParser("application/json");
  app.addContentTypeParser("application/json", { parseAs: "string" }, (request, body, done) => {
    parse(request, body as string, (error: Error | null, value?: unknown) => {
      if (error) return done(error, undefined);
      const tooDeep = findTooDeep(value, MAX_JSON_DEPTH);
      if (!tooDeep) return done(null, value);
      const field = formatJsonPath(tooDeep.path) || "body";
      done(
        new SubagentGraphError(
          ErrorCode.Validation,
          `${field}: the JSON body nests deeper than ${MAX_JSON_DEPTH} levels: flatten the value (for example send it as a string)`,
          { field },
        ),
        undefined,
      );
    });
  });
}
