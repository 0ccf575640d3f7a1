/** How many leading bytes decide whether a file is binary. */
const SNIFF_BYTES = 8192;

/**
 * True for content that is not text: a NUL byte near the start, or bytes that are not UTF-8.
 * Such files are refused by `read_file`/`edit_file` and skipped by `grep` instead of being shown
 * as mojibake to a model.
 */
export function isBinary(bytes: Uint8Array): boolean {
  if (bytes.subarray(0, SNIFF_BYTES).includes(0)) return true;
  try {
    new TextDecoder("utf-8", { fatal: true }).decode(bytes);
    return false;
  } catch {
    return true;
  }
}

/** Splits text into lines, accepting `\n` and `\r\n`; a final newline adds no empty line. */
export function splitLines(text: string): string[] {
  if (text === "") return [];
  const lines = text.split(/\r?\n/);
  if (lines.at(-1) === "") lines.pop();
  return lines;
}

/** A line cut to `maxChars`, with a visible marker saying how much was cut. */
export function cutLine(line: string, maxChars: number): string {
  if (line.length <= maxChars) return line;
  return `${line.slice(0, maxChars)}… [${line.length - maxChars} more characters]`;
}

/** `cat -n` style: the line number right-aligned in six columns, a tab, the line. */
export function numberedLine(lineNumber: number, line: string): string {
  return `${String(lineNumber).padStart(6)}\t${line}`;
}

/** `1536` → `1.5 KiB`. */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const units = ["KiB", "MiB", "GiB"];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${value.toFixed(1)} ${units[unit]}`;
}
