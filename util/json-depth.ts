/**
 * Nesting depth of JSON-like values, measured and bounded without recursion.
 *
 * Deep values are a denial of service: V8's `JSON.parse` is iterative and reads a million
 * levels, but `JSON.stringify` (and every recursive walk, such as a serializer) overflows the
 * stack a few thousand levels down. So depth is checked right after parsing, with an explicit
 * stack, and reads clamp what may already be stored.
 *
 * Depth counts containers: `1` and `"a"` are 0 deep, `{}` and `[1]` are 1, `{"a":[1]}` is 2.
 */

/** One step of a path into a value: an object key or an array index. */
export type JsonPathSegment = string | number;

/** A place where a value goes deeper than the limit. */
export interface TooDeep {
  /** The path to a container beyond the limit (`limit` steps long). */
  path: JsonPathSegment[];
  /** The limit that was passed. */
  limit: number;
}

interface Frame {
  value: object;
  depth: number;
  parent: Frame | undefined;
  segment: JsonPathSegment | undefined;
}

const isContainer = (value: unknown): value is object =>
  typeof value === "object" && value !== null;

/**
 * A place where `value` nests more than `limit` containers, or undefined when it does not. Walks
 * depth first with an explicit stack, so any depth is safe to check and the walk stops at the
 * first container beyond the limit.
 */
export function findTooDeep(value: unknown, limit: number): TooDeep | undefined {
  if (!isContainer(value)) return undefined;
  const stack: Frame[] = [{ value, depth: 1, parent: undefined, segment: undefined }];
  for (let frame = stack.pop(); frame !== undefined; frame = stack.pop()) {
    if (frame.depth > limit) return { path: pathOf(frame), limit };
    for (const [segment, child] of entries(frame.value)) {
      if (isContainer(child)) {
        stack.push({ value: child, depth: frame.depth + 1, parent: frame, segment });
      }
    }
  }
  return undefined;
}

/**
 * A copy of `value` in which every container deeper than `limit` is replaced by `marker`, or
 * `value` itself when nothing is that deep. For reading data stored before a depth limit existed:
 * the response stays serialisable instead of overflowing the stack.
 */
export function clampDepth<T>(value: T, limit: number, marker: unknown): T {
  if (!isContainer(value) || findTooDeep(value, limit) === undefined) return value;
  const root = emptyLike(value);
  const stack: { from: object; to: Container; depth: number }[] = [
    { from: value, to: root, depth: 1 },
  ];
  for (let item = stack.pop(); item !== undefined; item = stack.pop()) {
    for (const [segment, child] of entries(item.from)) {
      if (!isContainer(child)) {
        put(item.to, segment, child);
      } else if (item.depth + 1 > limit) {
        put(item.to, segment, marker);
      } else {
        const copy = emptyLike(child);
        put(item.to, segment, copy);
        stack.push({ from: child, to: copy, depth: item.depth + 1 });
      }
    }
  }
  return root as T;
}

/**
 * A path as a short field name: `metadata.a.a.a…` (at most `segments` steps; keys that are not
 * plain identifiers are quoted, long keys are cut).
 */
export function formatJsonPath(path: readonly JsonPathSegment[], segments = 4): string {
  let text = "";
  for (const segment of path.slice(0, segments)) {
    if (typeof segment === "number") text += `[${segment}]`;
    else if (/^[A-Za-z_$][\w$]{0,39}$/.test(segment)) text += text === "" ? segment : `.${segment}`;
    else text += `[${JSON.stringify(segment.length > 40 ? `${segment.slice(0, 40)}…` : segment)}]`;
  }
  return path.length > segments ? `${text}…` : text;
}

function entries(value: object): [JsonPathSegment, unknown][] {
  return Array.isArray(value)
    ? value.map((item, index): [JsonPathSegment, unknown] => [index, item])
    : Object.entries(value);
}

function pathOf(frame: Frame): JsonPathSegment[] {
  const path: JsonPathSegment[] = [];
  for (let at: Frame | undefined = frame; at?.segment !== undefined; at = at.parent) {
    path.push(at.segment);
  }
  return path.reverse();
}

type Container = unknown[] | Record<string, unknown>;

function emptyLike(value: object): Container {
  return Array.isArray(value) ? [] : {};
}

function put(target: Container, segment: JsonPathSegment, value: unknown): void {
  if (Array.isArray(target)) target[Number(segment)] = value;
  else target[String(segment)] = value;
}
