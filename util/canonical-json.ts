/**
 * `value` as JSON with every object's keys sorted, so two equal values give the same text
 * whatever order their keys were written in (hashes of tool schemas, comparing records).
 * `undefined` entries are left out, as `JSON.stringify` does.
 */
export function canonicalJson(value: unknown): string {
  return (
    JSON.stringify(value, (_key, entry: unknown) => {
      if (typeof entry !== "object" || entry === null || Array.isArray(entry)) return entry;
      const record = entry as Record<string, unknown>;
      return Object.fromEntries(
        Object.keys(record)
          .sort()
          .map((key) => [key, record[key]]),
      );
    }) ?? "null"
  );
}
