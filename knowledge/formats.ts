/**
 * Which files a knowledge base reads, told apart by name and checked by content before they are
 * accepted: a `.pdf` that does not start like a PDF, or a `.docx` that is not a ZIP archive, is
 * refused at upload (`FILE_PARSE_FAILED`) instead of failing later in the queue.
 */

import { extname } from "node:path";
import { ErrorCode, SubagentGraphError } from "../errors.js";

/** The formats ingest reads. */
export const FILE_FORMATS = ["txt", "md", "html", "pdf", "docx"] as const;
export type FileFormat = (typeof FILE_FORMATS)[number];

/** File name extensions, lower-cased, and the format each means. */
const EXTENSIONS: Record<string, FileFormat> = {
  ".txt": "txt",
  ".text": "txt",
  ".md": "md",
  ".markdown": "md",
  ".html": "html",
  ".htm": "html",
  ".pdf": "pdf",
  ".docx": "docx",
};

/** The extensions accepted, for messages. */
export const ACCEPTED_EXTENSIONS = Object.keys(EXTENSIONS).join(", ");

/**
 * The format of a file named `name` with these bytes.
 * @throws SubagentGraphError `UNSUPPORTED_FILE_TYPE` for any other extension (field `file`),
 *   `FILE_PARSE_FAILED` when the bytes cannot be a file of that format.
 */
export function detectFormat(name: string, content: Uint8Array): FileFormat {
  const extension = extname(name).toLowerCase();
  const format = EXTENSIONS[extension];
  if (format === undefined) {
    throw new SubagentGraphError(
      ErrorCode.UnsupportedFileType,
      `file "${name}" has type "${extension || "(no extension)"}", which knowledge bases do not read: convert it to one of ${ACCEPTED_EXTENSIONS}`,
      { field: "file" },
    );
  }
  if (format === "pdf" && !startsWith(content, "%PDF-")) {
    throw parseFailed(name, "it does not start with %PDF-, so it is not a PDF");
  }
  if (format === "docx" && !startsWith(content, "PK\u0003\u0004")) {
    throw parseFailed(name, "it is not a ZIP archive, so it is not a .docx (an old .doc?)");
  }
  return format;
}

/** The `FILE_PARSE_FAILED` error for a file, naming it, why, and what to do. */
export function parseFailed(name: string, reason: string, cause?: unknown): SubagentGraphError {
  return new SubagentGraphError(
    ErrorCode.FileParseFailed,
    `file "${name}" cannot be read: ${reason}; check that it opens in its usual program, or export it again (or as .txt)`,
    { field: "file", ...(cause === undefined ? {} : { cause }) },
  );
}

function startsWith(content: Uint8Array, prefix: string): boolean {
  if (content.length < prefix.length) return false;
  for (let index = 0; index < prefix.length; index += 1) {
    if (content[index] !== prefix.charCodeAt(index)) return false;
  }
  return true;
}
