import { z } from "zod";
import { hasNul } from "../../store/portable-text.js";

/**
 * Ids and keys a request hands to the store, refused at the door when no store could hold them.
 *
 * PostgreSQL's `text` and `jsonb` cannot hold U+0000: a query that passes one as a parameter
 * fails as a whole (`invalid byte sequence for encoding "UTF8": 0x00`), which would answer 500,
 * while SQLite stores and compares NUL like any other character (and answers 404). No id or key
 * with a NUL is ever stored, so such a request is refused by its schema, before any handler, with
 * the same 422 `VALIDATION_FAILED` naming the field on both stores. Every path parameter of the
 * API and every id in a body or query is declared with {@link storeId} or {@link idParam};
 * `test/server/nul-ids.int.test.ts` sends NUL to every path parameter of every route and to each
 * body id, on SQLite and on PostgreSQL.
 */

const NUL_REFUSED = "an id never contains NUL (U+0000): remove it";

/** A string the store looks up as an id or key: any text but one holding U+0000. */
export function storeId() {
  return z.string().refine((text) => !hasNul(text), { error: NUL_REFUSED });
}

/** A path parameter naming a stored thing: a non-empty {@link storeId}. */
export function idParam() {
  return storeId().min(1);
}

/**
 * A checkpoint metadata filter (`POST /threads/:id/history` `metadata`): the savers turn it into
 * a query, PostgreSQL's as `jsonb` (where a NUL anywhere fails the query) and SQLite's as JSON
 * paths `$.<key>` (where an empty key or a NUL fails it). Checkpoint metadata never holds either,
 * so a filter that does is refused, naming the place.
 */
export const metadataFilterSchema = z
  .record(z.string(), z.unknown())
  .superRefine((filter, context) => {
    for (const key of Object.keys(filter)) {
      if (key === "" || hasNul(key)) {
        context.addIssue({
          code: "custom",
          path: [key],
          message: `checkpoint metadata has no key ${JSON.stringify(key)}: filter on a key it has (e.g. "source", "step")`,
        });
        return;
      }
    }
    const nul = findNul(filter);
    if (nul) {
      context.addIssue({
        code: "custom",
        path: nul,
        message: "checkpoint metadata never holds NUL (U+0000): remove it from the filter",
      });
    }
  });

/** The path to the first key or string holding U+0000 inside `value`, if any. */
function findNul(value: unknown): (string | number)[] | undefined {
  // The body parser bounds the depth (`server/json-body.ts`), so recursion is safe here.
  if (typeof value === "string") return hasNul(value) ? [] : undefined;
  if (typeof value !== "object" || value === null) return undefined;
  const entries: [string | number, unknown][] = Array.isArray(value)
    ? value.map((item, index): [number, unknown] => [index, item])
    : Object.entries(value);
  for (const [segment, item] of entries) {
    if (typeof segment === "string" && hasNul(segment)) return [segment];
    const below = findNul(item);
    if (below) return [segment, ...below];
  }
  return undefined;
}
