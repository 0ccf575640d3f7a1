import type { FastifyRequest } from "fastify";
import { formatJsonPath, type JsonPathSegment } from "../util/json-depth.js";
import { shownValue } from "../util/shown-value.js";

/**
 * The answer to a request its route's zod schema refused: the first failing place as `field`
 * (the API's dotted form, `metadata.a[0]`, for a body; the parameter's name for a query string,
 * path or header), the value received (shortened; never for a field whose name suggests a
 * secret) and the fix: the allowed values of an enum, the expected type, the bounds, or the
 * schema's own words when it has some.
 *
 * Only the first issue is described: a client fixes one thing and sends again, and one issue
 * keeps the message short and stable.
 */

/** One issue as `fastify-type-provider-zod` hands it over (an entry of `error.validation`). */
export interface SchemaIssue {
  keyword: string;
  instancePath: string;
  message?: string;
  params?: Record<string, unknown>;
}

/** What {@link describeValidation} answers with. */
export interface ValidationRefusal {
  field: string;
  message: string;
}

/** A zod issue as a union keeps its alternatives' (`params.errors`): the path is still an array. */
interface RawIssue {
  code?: unknown;
  path?: unknown;
  message?: unknown;
  [key: string]: unknown;
}

/** One issue reduced to what a message needs. */
interface Issue {
  code: string;
  path: string[];
  message: string;
  params: Record<string, unknown>;
}

/** Names that suggest a secret: their values are never repeated back. */
const SECRET = /key|token|password|passwd|secret|credential|auth|cookie|session/i;

/**
 * zod's own messages (its English locale) start so; anything else is a message a schema of ours
 * set (e.g. the root-namespace rule of `checkpoint_ns`), which names its fix better than a
 * generic one would.
 */
const ZOD_WORDING = /^(Invalid|Too (big|small)|Unrecognized key)/;

const WHERE: Record<string, string> = {
  querystring: " (query parameter)",
  params: " (path parameter)",
  headers: " (header)",
};

const TYPES: Record<string, string> = {
  string: "a string",
  number: "a number",
  int: "an integer",
  bigint: "an integer",
  boolean: "true or false",
  object: "an object",
  record: "an object",
  array: "a list",
  tuple: "a list",
  null: "null",
};

/**
 * The `field` and message of a schema refusal.
 * @param issues `error.validation` of a Fastify validation error (at least one)
 * @param context `error.validationContext`: "body", "querystring", "params" or "headers"
 */
export function describeValidation(
  issues: readonly SchemaIssue[],
  context: string | undefined,
  request: FastifyRequest,
): ValidationRefusal {
  const first = issues[0];
  const issue = pinpoint({
    code: first?.keyword ?? "custom",
    path: pathOf(first?.instancePath ?? "/"),
    message: first?.message ?? "invalid",
    params: first?.params ?? {},
  });
  const input = inputOf(request, context);
  const { segments, value, found, missing } = walk(input, issue.path);
  const isBody = context === "body" || context === undefined;
  const field = isBody
    ? formatJsonPath(segments, 8) || "body"
    : String(segments[0] ?? context ?? "request");
  const label = `${field}${WHERE[context ?? ""] ?? ""}`;
  const secret = issue.path.some((segment) => SECRET.test(segment));
  if (issue.code === "unrecognized_keys") {
    const what = isBody ? "not a field of this request" : "not a parameter of this route";
    return { field, message: `${label}: ${what}: leave it out (or check its spelling)` };
  }
  const fix = fixOf(issue, field);
  if (secret) return { field, message: `${label}: the value sent is not valid: ${fix}` };
  if (missing) return { field, message: `${label} is missing: ${fix}` };
  if (!found) return { field, message: `${label} is not valid: ${fix}` };
  return { field, message: `${label}: ${shownValue(value)} is not valid: ${fix}` };
}

/**
 * The segments of a JSON-pointer-like `instancePath` (`/a/0/b`; `/` is the root). The type
 * provider joins zod's path with "/" unescaped, so a key holding a "/" reads as two segments:
 * it then names no place in the input and its value is not shown.
 */
function pathOf(instancePath: string): string[] {
  return instancePath === "/" || instancePath === "" ? [] : instancePath.slice(1).split("/");
}

/**
 * The issue to describe. A union reports "Invalid input" at its own place; when one of its
 * alternatives got past the root type (the input was an object, and failed deeper), that
 * alternative's first issue is the real one, at its full path.
 */
function pinpoint(issue: Issue): Issue {
  if (issue.code !== "invalid_union") {
    if (issue.code === "unrecognized_keys") {
      const keys = issue.params.keys;
      const key = Array.isArray(keys) ? keys[0] : undefined;
      if (typeof key === "string") return { ...issue, path: [...issue.path, key] };
    }
    return issue;
  }
  const alternatives = (Array.isArray(issue.params.errors) ? issue.params.errors : [])
    .map((errors: unknown) =>
      Array.isArray(errors) ? (errors[0] as RawIssue | undefined) : undefined,
    )
    .filter((raw): raw is RawIssue => raw !== undefined);
  const deeper = alternatives.find(
    (raw) => raw.code !== "invalid_type" || (Array.isArray(raw.path) && raw.path.length > 0),
  );
  if (deeper) {
    const { code, path, message, ...params } = deeper;
    return pinpoint({
      code: String(code),
      path: [...issue.path, ...(Array.isArray(path) ? path.map(String) : [])],
      message: String(message),
      params,
    });
  }
  const expected = [
    ...new Set(alternatives.map((raw) => TYPES[String(raw.expected)] ?? String(raw.expected))),
  ];
  return { ...issue, code: "union_types", params: { expected } };
}

/** What to send instead. */
function fixOf(issue: Issue, field: string): string {
  const { params } = issue;
  if (!ZOD_WORDING.test(issue.message)) {
    // The schema's own words; a leading "<field>: " would repeat the label.
    return issue.message.startsWith(`${field}: `)
      ? issue.message.slice(field.length + 2)
      : issue.message;
  }
  switch (issue.code) {
    case "invalid_type":
      return `send ${TYPES[String(params.expected)] ?? String(params.expected)}`;
    case "union_types":
      return `send ${(params.expected as string[]).join(" or ")}`;
    case "invalid_value": {
      const values = Array.isArray(params.values) ? params.values : [];
      const listed = values.map((value) => JSON.stringify(value)).join(", ");
      return values.length === 1 ? `send ${listed}` : `use one of ${listed}`;
    }
    case "too_small":
      return bound(params, "at least", "more than");
    case "too_big":
      return bound(params, "at most", "less than");
    default:
      return issue.message;
  }
}

/** A size or range bound: `send at least 1 item`, `send a number of at most 1000`. */
function bound(params: Record<string, unknown>, inclusive: string, exclusive: string): string {
  const limit = String(params.minimum ?? params.maximum);
  const words = params.inclusive === false ? exclusive : inclusive;
  switch (params.origin) {
    case "string":
      return limit === "1" && words === "at least"
        ? "send a non-empty string"
        : `send ${words} ${limit} characters`;
    case "array":
    case "set":
      return `send ${words} ${limit} item${limit === "1" ? "" : "s"}`;
    default:
      return `send a number ${words} ${limit}`;
  }
}

/** The part of the request a validation context names, as it arrived. */
function inputOf(request: FastifyRequest, context: string | undefined): unknown {
  switch (context) {
    case "querystring":
      return request.query;
    case "params":
      return request.params;
    case "headers":
      return request.headers;
    default:
      return request.body;
  }
}

/**
 * Follows `path` into `input`: the value there, and the path with array indexes as numbers (so
 * it prints as `a[0]`) and keys that held a "/" whole again (see {@link pathOf}). `missing`: the
 * place's container is there but not the place (a required field left out); `found`: the place
 * is there.
 */
function walk(
  input: unknown,
  path: readonly string[],
): { segments: JsonPathSegment[]; value: unknown; found: boolean; missing: boolean } {
  const segments: JsonPathSegment[] = [];
  let value: unknown = input;
  for (let i = 0; i < path.length; i++) {
    const container = typeof value === "object" && value !== null ? value : undefined;
    // The shortest run of segments that is a key here: one, unless the key held a "/".
    let end = i + 1;
    while (
      container &&
      end < path.length &&
      !Object.hasOwn(container, path.slice(i, end).join("/"))
    ) {
      end++;
    }
    const key = path.slice(i, end).join("/");
    if (!container || !Object.hasOwn(container, key)) {
      const rest = path.slice(i).map((segment) => segment as JsonPathSegment);
      return {
        segments: [...segments, ...rest],
        value: undefined,
        found: false,
        missing: i === path.length - 1 && container !== undefined,
      };
    }
    segments.push(Array.isArray(container) ? Number(key) : key);
    value = (container as Record<string, unknown>)[key];
    i = end - 1;
  }
  return { segments, value, found: true, missing: false };
}
