/**
 * Whether the JSON value `container` contains `contained`, as PostgreSQL's `jsonb @>` decides
 * (the rule LangGraph's thread search applies to `values` and `metadata` filters):
 * - an object contains an object when every key of the latter is in the former with a value
 *   that contains the latter's value (other keys may be there too);
 * - an array contains an array when each element of the latter is contained in some element of
 *   the former (order and repetitions do not matter);
 * - anything else contains only an equal scalar (`1` and `1.0` are equal, `1` and `"1"` are not).
 *
 * @example
 * jsonContains({ topic: "tides", tags: ["a", "b"] }, { tags: ["b"] }); // true
 * jsonContains({ messages: [{ type: "human", content: "hi" }] }, { messages: [{ content: "hi" }] }); // true
 * jsonContains({ n: 1 }, { n: "1" }); // false
 */
export function jsonContains(container: unknown, contained: unknown): boolean {
  if (Array.isArray(contained)) {
    return (
      Array.isArray(container) &&
      contained.every((wanted) => container.some((item) => jsonContains(item, wanted)))
    );
  }
  if (isObject(contained)) {
    return (
      isObject(container) &&
      Object.entries(contained).every(
        ([key, wanted]) => Object.hasOwn(container, key) && jsonContains(container[key], wanted),
      )
    );
  }
  return !Array.isArray(container) && !isObject(container) && container === contained;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
