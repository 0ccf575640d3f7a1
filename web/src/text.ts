import type { ThreadInfo } from "./api-types.js";

/** The text of a message's `content`: a string, or the text blocks of a list of blocks. */
export function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((block) =>
      typeof block === "string"
        ? block
        : typeof block === "object" &&
            block !== null &&
            (block as { type?: unknown }).type === "text"
          ? String((block as { text?: unknown }).text ?? "")
          : "",
    )
    .join("");
}

/** A file's name from its virtual path. */
export function baseName(path: string): string {
  return path.slice(path.lastIndexOf("/") + 1);
}

/** Seconds with one decimal below a minute, then minutes and seconds: "4.2 s", "3 min 05 s". */
export function formatElapsed(ms: number): string {
  const safe = Math.max(0, ms);
  if (safe < 60_000) return `${(safe / 1000).toFixed(1)} s`;
  const minutes = Math.floor(safe / 60_000);
  const seconds = Math.floor((safe % 60_000) / 1000);
  return `${minutes} min ${String(seconds).padStart(2, "0")} s`;
}

/** A byte count for people: "812 B", "4.1 KiB", "2.3 MiB". */
export function formatSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

/** A conversation's title: its `title` metadata, else when it was started. */
export function threadTitle(thread: ThreadInfo): string {
  const title = thread.metadata?.title;
  return typeof title === "string" && title.trim()
    ? title
    : `Conversation of ${new Date(thread.created_at).toLocaleString()}`;
}
