/**
 * A value as an error message quotes it: its JSON text (strings quoted, NUL and other control
 * characters escaped, so nothing in a message can break a log line or a terminal), cut to
 * `max` characters with "…" when longer. A 10,000-digit header or a 1 MiB string stays a short,
 * stable message.
 */
export function shownValue(value: unknown, max = 60): string {
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    // A value JSON cannot hold (a bigint); never a reason to fail the error itself.
    text = String(value);
  }
  if (text.length <= max) return text;
  // Cut by code points, so an emoji is never split into a lone surrogate.
  return `${[...text.slice(0, max + 1)].slice(0, max - 1).join("")}…`;
}
