/** Small text helpers for terminal output. */

/** `text` on one line (whitespace runs collapsed), cut to `max` characters with an ellipsis. */
export function oneLine(text: string, max: number): string {
  const chars = Array.from(text.replace(/\s+/g, " ").trim());
  return chars.length <= max ? chars.join("") : `${chars.slice(0, max - 1).join("")}…`;
}

/** `1 round`, `2 rounds`. */
export function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? "" : "s"}`;
}

/** A duration for people: `0.4s`, `12.0s`, `2m05s`. */
export function formatDuration(ms: number): string {
  const tenths = Math.round(Math.max(0, ms) / 100);
  if (tenths < 600) return `${(tenths / 10).toFixed(1)}s`;
  const seconds = Math.round(tenths / 10);
  return `${Math.floor(seconds / 60)}m${String(seconds % 60).padStart(2, "0")}s`;
}

/** Rows as left-aligned columns separated by two spaces; trailing blanks trimmed. */
export function columns(rows: readonly (readonly string[])[]): string {
  const widths: number[] = [];
  for (const row of rows) {
    row.forEach((cell, index) => {
      widths[index] = Math.max(widths[index] ?? 0, Array.from(cell).length);
    });
  }
  return rows
    .map((row) =>
      row
        .map((cell, index) => cell + " ".repeat((widths[index] ?? 0) - Array.from(cell).length))
        .join("  ")
        .trimEnd(),
    )
    .join("\n");
}
