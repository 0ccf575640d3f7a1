import type { FastifyInstance } from "fastify";
import { ErrorCode, SubagentGraphError } from "../errors.js";
import { findTooDeep, formatJsonPath, type JsonPathSegment } from "../util/json-depth.js";

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
 * than {@link MAX_JSON_DEPTH} and bodies with a prototype-polluting key ({@link findPollutingKey}):
 * each a 422 `VALIDATION_FAILED` whose `field` is the (shortened) path of the place. Everything
 * else is Fastify's own parser: empty and malformed bodies are its 400s, and the size stays
 * capped by the server's `bodyLimit` (413).
 *
 * Fastify's parser can refuse `__proto__` keys itself, but then answers as for malformed JSON
 * ("Body is not valid JSON"), which sends a client looking for a syntax error that is not there:
 * so it parses with its own guard off and the keys are refused here, by name.
 */
export function registerJsonBodyParser(app: FastifyInstance): void {
  const parse = app.getDefaultJsonParser("ignore", "ignore");
  app.removeContentTypeParser("application/json");
  app.addContentTypeParser("application/json", { parseAs: "string" }, (request, body, done) => {
    parse(request, body as string, (error: Error | null, value?: unknown) => {
      if (error) return done(error, undefined);
      const refused = refusal(value);
      done(refused, refused ? undefined : value);
    });
  });
}

/** Why a parsed body is refused, or null when it is not. */
function refusal(value: unknown): SubagentGraphError | null {
  const tooDeep = findTooDeep(value, MAX_JSON_DEPTH);
  if (tooDeep) {
    const field = formatJsonPath(tooDeep.path) || "body";
    return new SubagentGraphError(
      ErrorCode.Validation,
      `${field}: the JSON body nests deeper than ${MAX_JSON_DEPTH} levels: flatten the value (for example send it as a string)`,
      { field },
    );
  }
  const polluting = findPollutingKey(value);
  if (!polluting) return null;
  // 422 VALIDATION_FAILED, not 400: the text is valid JSON and the refusal is about one named
  // place in it, as for a body nested too deep; 400 (MALFORMED_JSON, BAD_REQUEST) is for
  // requests that cannot be read at all.
  const field = formatJsonPath(polluting.path, 8);
  const what =
    polluting.key === "__proto__"
      ? 'a key named "__proto__" is refused'
      : 'a "prototype" key inside a key named "constructor" is refused';
  return new SubagentGraphError(
    ErrorCode.Validation,
    `${field}: ${what} (prototype pollution guard): rename the key`,
    { field },
  );
}

/**
 * The first key of `value` that could change an object's prototype once the body is merged or
 * copied into another object: an own `__proto__` key, or a `constructor` key whose value has an
 * own `prototype` key (the shapes `Object.assign`, spreads into setters and naive deep merges
 * turn into `Object.prototype` writes). A `constructor` key on its own is harmless and kept.
 * Called after the depth check, so the walk is bounded.
 */
export function findPollutingKey(
  value: unknown,
): { key: "__proto__" | "constructor.prototype"; path: JsonPathSegment[] } | undefined {
  // Frames link to their parent: the path is built only for the key found, never per value.
  interface Frame {
    value: unknown;
    parent: Frame | undefined;
    segment: JsonPathSegment | undefined;
  }
  const pathOf = (frame: Frame, ...tail: JsonPathSegment[]): JsonPathSegment[] => {
    const path = tail;
    for (let at: Frame | undefined = frame; at?.segment !== undefined; at = at.parent) {
      path.unshift(at.segment);
    }
    return path;
  };
  const stack: Frame[] = [{ value, parent: undefined, segment: undefined }];
  while (stack.length > 0) {
    const frame = stack.pop() as Frame;
    const item = frame.value;
    if (typeof item !== "object" || item === null) continue;
    if (!Array.isArray(item)) {
      if (Object.hasOwn(item, "__proto__")) {
        return { key: "__proto__", path: pathOf(frame, "__proto__") };
      }
      const ctor: unknown = Object.hasOwn(item, "constructor")
        ? (item as Record<string, unknown>).constructor
        : undefined;
      if (typeof ctor === "object" && ctor !== null && Object.hasOwn(ctor, "prototype")) {
        return { key: "constructor.prototype", path: pathOf(frame, "constructor", "prototype") };
      }
    }
    const children: [JsonPathSegment, unknown][] = Array.isArray(item)
      ? item.map((child, index): [JsonPathSegment, unknown] => [index, child])
      : Object.entries(item);
    // Pushed last to first, so the first key in the text is the one reported.
    for (let i = children.length - 1; i >= 0; i--) {
      const [segment, child] = children[i] as [JsonPathSegment, unknown];
      stack.push({ value: child, parent: frame, segment });
    }
  }
  return undefined;
}
