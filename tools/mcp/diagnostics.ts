/** What an MCP server's failures are told with: the error's words and the server's last stderr. */

/** An error's message, with its cause's when that adds something ("fetch failed (connect …)"). */
export function describeError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const code = (error as { code?: unknown }).code;
  const message = error.message || (typeof code === "string" ? code : error.name);
  const cause = error.cause instanceof Error ? error.cause.message : "";
  return cause && !message.includes(cause) ? `${message} (${cause})` : message;
}

/** The last stretch of a server's stderr, for messages about why it failed. */
export class StderrTail {
  private text = "";

  append(chunk: Buffer): void {
    this.text = (this.text + chunk.toString("utf8")).slice(-2000);
  }

  clear(): void {
    this.text = "";
  }

  /** `" (stderr: …)"` with the last lines, or "" when the server said nothing. */
  suffix(): string {
    const lines = this.text.trim().split("\n").slice(-3).join(" | ").trim();
    return lines ? ` (stderr: ${lines.slice(-300)})` : "";
  }
}
