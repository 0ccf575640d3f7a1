/**
 * The readable text of an HTML document, one block element per line, for search and for
 * quoting by line. Not a browser: scripts, styles and comments are dropped, tags removed, the
 * common entities decoded; layout is approximated by breaking lines at block elements.
 */

const DROPPED = /<(script|style|noscript|template|head)\b[^>]*>[\s\S]*?<\/\1\s*>|<!--[\s\S]*?-->/gi;
const BLOCK_BREAK =
  /<\/?(p|div|br|li|ul|ol|tr|table|h[1-6]|section|article|header|footer|blockquote|pre|hr|dd|dt|dl|nav|main|aside|figure|figcaption)\b[^>]*>/gi;
const TAG = /<[^>]*>/g;
const NAMED: Record<string, string> = {
  amp: "&",
  lt: "<",
  gt: ">",
  quot: '"',
  apos: "'",
  nbsp: " ",
};

/** The text of `html`, with a line break per block element and blank runs collapsed. */
export function htmlToText(html: string): string {
  const text = html
    .replace(DROPPED, " ")
    .replace(BLOCK_BREAK, "\n")
    .replace(TAG, "")
    .replace(/&(#x[0-9a-f]+|#[0-9]+|[a-z]+);/gi, (entity, body: string) =>
      decodeEntity(entity, body),
    );
  return text
    .split("\n")
    .map((line) => line.replace(/[ \t\r\f\v]+/g, " ").trim())
    .filter((line, index, lines) => line !== "" || (index > 0 && lines[index - 1] !== ""))
    .join("\n")
    .trim();
}

function decodeEntity(entity: string, body: string): string {
  if (body.startsWith("#")) {
    const code =
      body[1] === "x" || body[1] === "X"
        ? Number.parseInt(body.slice(2), 16)
        : Number.parseInt(body.slice(1), 10);
    return Number.isInteger(code) && code > 0 && code <= 0x10ffff
      ? String.fromCodePoint(code)
      : entity;
  }
  return NAMED[body.toLowerCase()] ?? entity;
}
