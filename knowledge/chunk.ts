/**
 * Splitting a file's text into chunks that remember their lines, so a search hit can say
 * "lines 120-134" and `kb_read` can open the file there. LangChain's recursive splitter breaks
 * at paragraphs, then lines, then words (Markdown: at headings first), and reports each chunk's
 * line span.
 */

import { RecursiveCharacterTextSplitter } from "@langchain/textsplitters";
import type { FileFormat } from "./formats.js";

/** Characters per chunk, and shared by neighbours so a sentence cut at a border is in both. */
export const CHUNK_SIZE = 1000;
export const CHUNK_OVERLAP = 150;

/** A chunk of a file's text. */
export interface TextChunk {
  /** First line, from 1. */
  lineStart: number;
  /** Last line, inclusive. */
  lineEnd: number;
  text: string;
}

/** The chunks of `text`, in order. */
export async function chunkText(text: string, format: FileFormat): Promise<TextChunk[]> {
  const options = { chunkSize: CHUNK_SIZE, chunkOverlap: CHUNK_OVERLAP };
  const splitter =
    format === "md"
      ? RecursiveCharacterTextSplitter.fromLanguage("markdown", options)
      : new RecursiveCharacterTextSplitter(options);
  const documents = await splitter.createDocuments([text]);
  return documents
    .filter((document) => document.pageContent.trim() !== "")
    .map((document) => {
      const lines = (document.metadata as { loc?: { lines?: { from?: number; to?: number } } }).loc
        ?.lines;
      const lineStart = lines?.from ?? 1;
      return { lineStart, lineEnd: lines?.to ?? lineStart, text: document.pageContent };
    });
}

/** How many lines `text` has (an empty text has none). */
export function lineCount(text: string): number {
  return text === "" ? 0 : text.split("\n").length;
}
