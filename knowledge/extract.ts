/**
 * From an uploaded file's bytes to its text, whatever its format. The text is what search
 * indexes and `kb_read` quotes by line, so every format ends as lines: PDF pages are separated
 * by a blank line, DOCX paragraphs are lines, HTML blocks are lines.
 */

import { messageOf } from "../errors.js";
import { type FileFormat, parseFailed } from "./formats.js";
import { htmlToText } from "./html-text.js";

/**
 * The text of a file.
 * @throws SubagentGraphError `FILE_PARSE_FAILED` naming the file when its bytes do not parse.
 */
export async function extractFileText(
  name: string,
  format: FileFormat,
  content: Uint8Array,
): Promise<string> {
  const text = await extractRaw(name, format, content);
  // PostgreSQL's text cannot hold NUL; no reader needs it.
  return text.replace(/\r\n?/g, "\n").replace(/\0/g, "").replace(/\n+$/, "");
}

async function extractRaw(name: string, format: FileFormat, content: Uint8Array): Promise<string> {
  switch (format) {
    case "txt":
    case "md":
      return decodeUtf8(name, content);
    case "html":
      return htmlToText(decodeUtf8(name, content));
    case "pdf":
      return pdfText(name, content);
    case "docx":
      return docxText(name, content);
  }
}

function decodeUtf8(name: string, content: Uint8Array): string {
  try {
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(content);
  } catch (error) {
    throw parseFailed(name, "it is not UTF-8 text", error);
  }
}

async function pdfText(name: string, content: Uint8Array): Promise<string> {
  // The PDF and DOCX readers load on first use: most processes never read either.
  const { extractText, getDocumentProxy } = await import("unpdf");
  try {
    // pdf.js takes ownership of (and detaches) the buffer it is given: hand it a copy.
    const document = await getDocumentProxy(new Uint8Array(content), { verbosity: 0 });
    try {
      const { text } = await extractText(document, { mergePages: false });
      return text.join("\n\n");
    } finally {
      await document.loadingTask.destroy();
    }
  } catch (error) {
    throw parseFailed(name, `the PDF is damaged (${reasonOf(error)})`, error);
  }
}

async function docxText(name: string, content: Uint8Array): Promise<string> {
  const { default: mammoth } = await import("mammoth");
  try {
    const result = await mammoth.extractRawText({ buffer: Buffer.from(content) });
    return result.value;
  } catch (error) {
    throw parseFailed(name, `the DOCX is damaged (${reasonOf(error)})`, error);
  }
}

function reasonOf(error: unknown): string {
  const message = messageOf(error);
  return message.length > 200 ? `${message.slice(0, 199)}…` : message;
}
