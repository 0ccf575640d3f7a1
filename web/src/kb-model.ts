/**
 * The knowledge base page's values and the small judgements it makes about `/api/kb` answers
 * (is ingest still running, what did an upload refuse, how a hit's place reads). Pure (no DOM),
 * so it is unit-tested without a browser. The server validates; this only shapes.
 */

import type { FileStatus, KbFileRecord, KnowledgeBaseRecord } from "../../knowledge/schema.js";
import type { KbSearchHit, KbUploadResult } from "../../knowledge/service.js";
import { formFieldOf, splitList } from "./agent-form-model.js";
import {
  type EmbedderFormValues,
  embedderChange,
  embedderFormValues,
  embedderPayload,
  isEmbedding,
} from "./kb-embedder-model.js";

export type { KbFileRecord, KbSearchHit, KbUploadResult, KnowledgeBaseRecord };

/**
 * A file's ingest statuses, in the order a file goes through them. A record (not a list) so a
 * status added to `knowledge/schema.ts` fails to compile here until it is placed.
 */
const STATUS_ORDER: Record<FileStatus, number> = { queued: 0, indexing: 1, indexed: 2, error: 3 };
const FILE_STATUSES = (Object.keys(STATUS_ORDER) as FileStatus[]).sort(
  (a, b) => STATUS_ORDER[a] - STATUS_ORDER[b],
);

/** What the create and edit form holds. */
export interface KbFormValues extends EmbedderFormValues {
  name: string;
  description: string;
  share_mode: "private" | "users" | "public";
  /** Comma-separated user ids. */
  share_uids: string;
  share_editors: string;
}

/** The create form's values before anything is typed: private, like a new agent. */
export const EMPTY_KB_FORM: KbFormValues = {
  name: "",
  description: "",
  share_mode: "private",
  share_uids: "",
  share_editors: "",
  ...embedderFormValues(),
};

/** The form's values for a new knowledge base, or for editing `kb`. */
export function kbFormValues(kb?: KnowledgeBaseRecord): KbFormValues {
  if (!kb) return EMPTY_KB_FORM;
  return {
    name: kb.name,
    description: kb.description,
    share_mode: kb.share_config.mode,
    share_uids: kb.share_config.uids.join(", "),
    share_editors: kb.share_config.editors.join(", "),
    ...embedderFormValues(kb.embedder),
  };
}

/**
 * The `POST /api/kb` body for the form's values, or the `PUT /api/kb/:kb` body (with the
 * version read, so a change made meanwhile is a conflict, not lost) when `editing` is given.
 * The embedder is sent when vectors are on (create) or when it changed (edit): an edit of the
 * description alone never touches the vectors.
 */
export function kbPayload(values: KbFormValues, editing?: KnowledgeBaseRecord) {
  const embedder = embedderPayload(values);
  const sendEmbedder = editing
    ? embedderChange(editing.embedder, embedder) !== "none"
    : values.embedder_on;
  return {
    name: values.name.trim(),
    description: values.description,
    share_config: {
      mode: values.share_mode,
      uids: splitList(values.share_uids),
      editors: splitList(values.share_editors),
    },
    ...(sendEmbedder ? { embedder } : {}),
    ...(editing ? { expected_version: editing.version } : {}),
  };
}

/**
 * The form field an API error names: `embedder.dimensions` is `embedder_dimensions`, the rest
 * as the agent form maps them. Undefined when no field of the form matches.
 */
export function kbFormFieldOf(apiField: string | undefined): string | undefined {
  const [head, second] = apiField?.split(".") ?? [];
  if (head === "embedder") return `embedder_${second ?? "model"}`;
  return formFieldOf(apiField);
}

/**
 * True while a file is `queued` or `indexing`, or its vectors are `pending` or `embedding`: the
 * page polls the file list until this is false, and not a moment longer.
 */
export function isIngesting(files: readonly KbFileRecord[]): boolean {
  return (
    files.some((file) => file.status === "queued" || file.status === "indexing") ||
    isEmbedding(files)
  );
}

/** One line for the files' progress, each status counted: "3 files: 1 queued, 2 indexed." */
export function ingestSummary(files: readonly KbFileRecord[]): string {
  if (files.length === 0) return "No files yet: add some above.";
  const counts = FILE_STATUSES.map(
    (status) => [status, files.filter((file) => file.status === status).length] as const,
  );
  const parts = counts
    .filter(([, count]) => count > 0)
    .map(([status, count]) => `${count} ${status}`);
  return `${files.length} ${files.length === 1 ? "file" : "files"}: ${parts.join(", ")}.`;
}

/** What an accepted upload answer says beyond "queued": refused files and unchanged duplicates. */
export interface UploadReport {
  /** Files the server refused, with its reason (type, size, not really a PDF…). */
  rejected: { name: string; message: string }[];
  /** Files whose bytes were already there: nothing changed. */
  duplicates: string[];
}

/** Sorts a 202 answer's per-file results into what the page must tell. */
export function uploadReport(results: readonly KbUploadResult[]): UploadReport {
  const report: UploadReport = { rejected: [], duplicates: [] };
  for (const result of results) {
    if (result.status === "rejected") {
      report.rejected.push({ name: result.name, message: result.error.message });
    } else if (result.duplicate) {
      report.duplicates.push(result.name);
    }
  }
  return report;
}

/** Where a hit is: "line 4" or "lines 4-9". */
export function lineSpan(hit: Pick<KbSearchHit, "line_start" | "line_end">): string {
  return hit.line_start === hit.line_end
    ? `line ${hit.line_start}`
    : `lines ${hit.line_start}-${hit.line_end}`;
}

/** A hit's score with three significant digits (BM25 scores can be tiny: "0.00000123"). */
export function formatScore(score: number): string {
  return String(Number(score.toPrecision(3)));
}

/** What deleting a knowledge base does, said before it is done. */
export const KB_DELETE_WARNING =
  "Its files and their index are deleted for everyone it is shared with; agents that name it stop finding it. This cannot be undone.";

/** The file types ingest reads, for the file picker (the server judges every file anyway). */
export const ACCEPTED_FILE_TYPES = ".txt,.text,.md,.markdown,.html,.htm,.pdf,.docx";
