/**
 * Cuts `text` to at most `maxChars` code points (never splitting a surrogate pair) and, when it
 * cut, appends a visible marker saying how much was cut and where the full text is.
 */
export function truncateAnswer(text: string, maxChars: number, fullTextThread?: string): string {
  const chars = Array.from(text);
  if (chars.length <= maxChars) return text;
  const omitted = chars.length - maxChars;
  const where = fullTextThread ? `; the full answer is in child thread ${fullTextThread}` : "";
  return `${chars.slice(0, maxChars).join("")}\n…[truncated: ${omitted} of ${chars.length} characters omitted${where}]`;
}
