/** Plain-text tables for the console and the README. */

export interface Table {
  title: string;
  headers: string[];
  rows: string[][];
  /** Lines printed under the table. */
  notes?: string[];
}

/** Right-aligns cells that look numeric, left-aligns the rest; markdown-compatible pipes. */
export function renderTable(table: Table): string {
  const widths = table.headers.map((header, column) =>
    Math.max(header.length, ...table.rows.map((row) => (row[column] ?? "").length)),
  );
  const numeric = table.headers.map((_, column) =>
    table.rows.every((row) => /^[-+~≤<>]?\d|^n\/a$|^—$/.test(row[column] ?? "")),
  );
  const line = (cells: string[]) =>
    `| ${cells
      .map((cell, column) => {
        const width = widths[column] ?? 0;
        return numeric[column] ? cell.padStart(width) : cell.padEnd(width);
      })
      .join(" | ")} |`;
  const rule = `|${widths
    .map((width, column) => (numeric[column] ? `${"-".repeat(width + 1)}:` : "-".repeat(width + 2)))
    .join("|")}|`;
  return [
    `### ${table.title}`,
    "",
    line(table.headers),
    rule,
    ...table.rows.map(line),
    ...(table.notes?.length ? ["", ...table.notes] : []),
  ].join("\n");
}

/** A number with `digits` decimals ("n/a" for NaN or undefined). */
export function fmt(value: number | undefined, digits = 2): string {
  if (value === undefined || !Number.isFinite(value)) return "n/a";
  return value.toFixed(digits);
}

/** A ratio as `1.23x`. */
export function ratio(value: number | undefined, digits = 2): string {
  const text = fmt(value, digits);
  return text === "n/a" ? text : `${text}x`;
}

/** An integer with thousands separators. */
export function int(value: number | undefined): string {
  if (value === undefined || !Number.isFinite(value)) return "n/a";
  return Math.round(value).toLocaleString("en-US");
}

/** Bytes as KiB/MiB with one decimal (plain bytes under 10 KiB). */
export function bytes(value: number | undefined): string {
  if (value === undefined || !Number.isFinite(value)) return "n/a";
  if (Math.abs(value) < 10 * 1024) return `${Math.round(value)} B`;
  if (Math.abs(value) < 10 * 1024 * 1024) return `${(value / 1024).toFixed(1)} KiB`;
  return `${(value / 1024 / 1024).toFixed(1)} MiB`;
}
