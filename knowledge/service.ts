/**
 * Knowledge bases as the runtime hands them out (`runtime.kb`): records, files, ingest and
 * search, every call on behalf of a user and with the agents' visibility rules. The HTTP routes,
 * the CLI and the agents' tools all come through here.
 */

import { ErrorCode, SubagentGraphError } from "../errors.js";
import { hasNul } from "../store/portable-text.js";
import type { KbFileStore } from "./files.js";
import { detectFormat } from "./formats.js";
import { type FusionWeights, type HybridDeps, hybridSearch } from "./hybrid-search.js";
import type { IngestQueue } from "./ingest-queue.js";
import { type KnowledgeBaseRepository, keyOf } from "./repository.js";
import type { KbFileRecord, KnowledgeBaseRecord } from "./schema.js";

/** A file handed to {@link KnowledgeBases.addFiles}. */
export interface KbUpload {
  name: string;
  content: Uint8Array;
}

/** What became of one uploaded file. */
export type KbUploadResult =
  | { name: string; status: "accepted"; duplicate: boolean; file: KbFileRecord }
  | { name: string; status: "rejected"; error: { code: ErrorCode; message: string } };

/** A search request. `kb` narrows to knowledge bases by name or id; default: every visible one. */
export interface KbSearchRequest {
  query: string;
  kb?: string | readonly string[] | undefined;
  /** Only files of this name. */
  file?: string | undefined;
  /** Hits to return, 1-50; default 5. */
  top_k?: number | undefined;
  /**
   * For measurements (the bench): other weights of hybrid search than `HYBRID_WEIGHTS`. Not
   * accepted over HTTP.
   */
  fusion?: FusionWeights | undefined;
}

/** A search hit: where it is (knowledge base, file, lines) and what it says. */
export interface KbSearchHit {
  kb_id: string;
  kb: string;
  file_id: string;
  file: string;
  line_start: number;
  line_end: number;
  score: number;
  text: string;
}

/** A window of a file's lines, numbered, as `kb_read` shows it. */
export interface KbReadResult {
  kb: string;
  file_id: string;
  file: string;
  line_start: number;
  line_end: number;
  line_count: number;
  /** The first line after the window, or null at the end of the file. */
  next_line: number | null;
  /** Lines prefixed with their numbers (`  12| text`). */
  text: string;
}

/** Options of {@link KnowledgeBases}. */
export interface KnowledgeBasesOptions {
  /** Largest file accepted, in bytes. */
  maxFileBytes: number;
}

const MAX_TOP_K = 50;
const DEFAULT_TOP_K = 5;
/** Lines `read` returns when not told. */
export const DEFAULT_READ_LINES = 80;
const MAX_READ_LINES = 400;

/** The knowledge base API of a runtime. */
export class KnowledgeBases {
  constructor(
    private readonly repository: KnowledgeBaseRepository,
    private readonly files: KbFileStore,
    private readonly queue: IngestQueue,
    private readonly options: KnowledgeBasesOptions,
    private readonly hybrid: HybridDeps,
  ) {}

  /** Creates a knowledge base owned by `uid` (see `kbCreateSchema`). */
  create(uid: string, payload: unknown): Promise<KnowledgeBaseRecord> {
    return this.repository.create(uid, payload);
  }

  /** Every knowledge base `uid` may see. */
  list(uid: string): Promise<KnowledgeBaseRecord[]> {
    return this.repository.list(uid);
  }

  /** The knowledge base `uid` may see by id or name; `NOT_FOUND` otherwise. */
  get(uid: string, kb: string): Promise<KnowledgeBaseRecord> {
    return this.repository.get(uid, kb);
  }

  /**
   * Updates a knowledge base (owner and editors). A change of embedding model, dimensions or
   * base URL drops its vectors and queues its files for new ones (`vectors: "pending"`); until
   * every file has them, it is searched by full text only.
   */
  async update(uid: string, kb: string, patch: unknown): Promise<KnowledgeBaseRecord> {
    const before = await this.repository.find(uid, kb);
    const updated = await this.repository.update(uid, kb, patch);
    if (before === undefined || keyOf(before) !== keyOf(updated)) this.queue.kick();
    return updated;
  }

  /** Deletes a knowledge base with its files (owner and editors). */
  delete(uid: string, kb: string): Promise<void> {
    return this.repository.delete(uid, kb);
  }

  /**
   * Adds files to a knowledge base (owner and editors) and queues them for indexing. Each file
   * is judged alone: one of an unreadable type or over the size limit is rejected with its
   * error while the others are accepted; the same bytes as a file already there are accepted
   * as that file (`duplicate: true`, nothing changes).
   *
   * @throws SubagentGraphError `NOT_FOUND`, `FORBIDDEN` for the knowledge base itself.
   */
  async addFiles(uid: string, kb: string, uploads: readonly KbUpload[]): Promise<KbUploadResult[]> {
    const record = await this.repository.editable(uid, kb);
    const results: KbUploadResult[] = [];
    for (const upload of uploads) {
      try {
        checkFileName(upload.name);
        if (upload.content.length > this.options.maxFileBytes) {
          throw new SubagentGraphError(
            ErrorCode.TooLarge,
            `file "${upload.name}" is ${upload.content.length} bytes, over the ${this.options.maxFileBytes}-byte limit of knowledge base files: split it, or raise maxKnowledgeFileBytes`,
            { field: "file" },
          );
        }
        const format = detectFormat(upload.name, upload.content);
        const added = await this.files.add(record.id, upload.name, format, upload.content);
        results.push({
          name: upload.name,
          status: "accepted",
          duplicate: !added.created,
          file: added.file,
        });
      } catch (error) {
        if (!SubagentGraphError.isInstance(error) || !error.isUserError) throw error;
        results.push({
          name: upload.name,
          status: "rejected",
          error: { code: error.code, message: error.message },
        });
      }
    }
    if (results.some((result) => result.status === "accepted")) this.queue.kick();
    return results;
  }

  /** The files of a knowledge base `uid` may see, with their ingest status. */
  async listFiles(uid: string, kb: string): Promise<KbFileRecord[]> {
    const record = await this.repository.get(uid, kb);
    return this.files.list(record.id);
  }

  /** One file of a knowledge base `uid` may see; `NOT_FOUND` otherwise. */
  async getFile(uid: string, kb: string, fileId: string): Promise<KbFileRecord> {
    const record = await this.repository.get(uid, kb);
    const file = hasNul(fileId) ? undefined : await this.files.get(record.id, fileId);
    if (!file) throw fileNotFound(record, fileId);
    return file;
  }

  /** Deletes a file (owner and editors); `NOT_FOUND` when the knowledge base has no such file. */
  async deleteFile(uid: string, kb: string, fileId: string): Promise<void> {
    const record = await this.repository.editable(uid, kb);
    if (hasNul(fileId) || !(await this.files.delete(record.id, fileId))) {
      throw fileNotFound(record, fileId);
    }
  }

  /**
   * Searches the knowledge bases `uid` may see (all, or those `kb` names), best first.
   * @throws SubagentGraphError `NOT_FOUND` when `kb` names one `uid` cannot see,
   *   `VALIDATION_FAILED` for an empty query or a `top_k` out of range.
   */
  async search(uid: string, request: KbSearchRequest): Promise<KbSearchHit[]> {
    const wanted = request.kb === undefined ? undefined : [request.kb].flat();
    const records =
      wanted === undefined
        ? await this.repository.list(uid)
        : await Promise.all(wanted.map((kb) => this.repository.get(uid, kb)));
    return this.searchIn(records, request);
  }

  /**
   * Searches exactly `records` (already visible to the caller: a run's snapshot), best first.
   * @throws SubagentGraphError `VALIDATION_FAILED` for an empty query or a bad `top_k`.
   */
  async searchIn(
    records: readonly KnowledgeBaseRecord[],
    request: KbSearchRequest,
  ): Promise<KbSearchHit[]> {
    const query = request.query.trim();
    if (query === "" || hasNul(query)) {
      throw new SubagentGraphError(
        ErrorCode.Validation,
        "query is empty: say what to look for, in a few words",
        { field: "query" },
      );
    }
    const topK = request.top_k ?? DEFAULT_TOP_K;
    if (!Number.isInteger(topK) || topK < 1 || topK > MAX_TOP_K) {
      throw new SubagentGraphError(
        ErrorCode.Validation,
        `top_k ${JSON.stringify(request.top_k)} is invalid: use a whole number from 1 to ${MAX_TOP_K}`,
        { field: "top_k" },
      );
    }
    const byId = new Map(records.map((record) => [record.id, record]));
    const kbIds = [...byId.keys()];
    const fileIds =
      request.file === undefined || hasNul(request.file)
        ? request.file === undefined
          ? undefined
          : []
        : await this.files.idsByName(kbIds, request.file);
    const hits = await hybridSearch(this.hybrid, records, {
      fileIds,
      query,
      limit: topK,
      weights: request.fusion,
    });
    const files = await this.files.byIds(hits.map((hit) => hit.file_id));
    return hits.map((hit) => ({
      kb_id: hit.kb_id,
      kb: byId.get(hit.kb_id)?.name ?? hit.kb_id,
      file_id: hit.file_id,
      file: files.get(hit.file_id)?.name ?? hit.file_id,
      line_start: hit.line_start,
      line_end: hit.line_end,
      score: hit.score,
      text: hit.text,
    }));
  }

  /**
   * A numbered window of an indexed file's lines: from `line` (default 1), `lines` of them
   * (default 80, at most 400).
   * @throws SubagentGraphError `NOT_FOUND` (no such file), `VALIDATION_FAILED` (not indexed
   *   yet, or a line past the end).
   */
  async readIn(
    record: KnowledgeBaseRecord,
    fileId: string,
    window: { line?: number | undefined; lines?: number | undefined } = {},
  ): Promise<KbReadResult> {
    const file = hasNul(fileId) ? undefined : await this.files.get(record.id, fileId);
    if (!file) throw fileNotFound(record, fileId);
    const text = file.status === "indexed" ? await this.files.text(file.id) : undefined;
    if (text === undefined) {
      throw new SubagentGraphError(
        ErrorCode.Validation,
        `file "${file.name}" of knowledge base "${record.name}" is ${file.status}${file.error ? ` (${file.error})` : ""}, not indexed: wait until it is indexed, or choose another file`,
        { field: "file_id" },
      );
    }
    const all = text.split("\n");
    const start = Math.max(1, Math.trunc(window.line ?? 1));
    const count = Math.min(
      MAX_READ_LINES,
      Math.max(1, Math.trunc(window.lines ?? DEFAULT_READ_LINES)),
    );
    if (start > all.length) {
      throw new SubagentGraphError(
        ErrorCode.Validation,
        `line ${start} is past the end of "${file.name}", which has ${all.length} lines: use a line from 1 to ${all.length}`,
        { field: "line" },
      );
    }
    const end = Math.min(all.length, start + count - 1);
    const width = String(end).length;
    const numbered = all
      .slice(start - 1, end)
      .map((line, index) => `${String(start + index).padStart(width, " ")}| ${line}`)
      .join("\n");
    return {
      kb: record.name,
      file_id: file.id,
      file: file.name,
      line_start: start,
      line_end: end,
      line_count: all.length,
      next_line: end < all.length ? end + 1 : null,
      text: numbered,
    };
  }

  /** Like {@link readIn}, for a knowledge base `uid` may see by id or name. */
  async read(
    uid: string,
    kb: string,
    fileId: string,
    window: { line?: number; lines?: number } = {},
  ): Promise<KbReadResult> {
    return this.readIn(await this.repository.get(uid, kb), fileId, window);
  }

  /**
   * The knowledge bases an agent's `context.knowledge_bases` gives `uid`: every visible one when
   * unset, none for `[]`, else those named (by name or id), in order.
   * @throws SubagentGraphError `UNKNOWN_KNOWLEDGE_BASE` naming every entry `uid` cannot see
   *   (never granting access), and the agent.
   */
  async resolveSelection(
    uid: string,
    selection: readonly string[] | undefined,
    agentSlug: string,
  ): Promise<KnowledgeBaseRecord[]> {
    if (selection === undefined) return this.repository.list(uid);
    if (selection.length === 0) return [];
    const found: KnowledgeBaseRecord[] = [];
    const unknown: string[] = [];
    for (const entry of new Set(selection)) {
      const record = await this.repository.find(uid, entry);
      if (record === undefined) unknown.push(entry);
      else if (!found.some((kb) => kb.id === record.id)) found.push(record);
    }
    if (unknown.length > 0) {
      throw new SubagentGraphError(
        ErrorCode.UnknownKnowledgeBase,
        `agent "${agentSlug}" lists knowledge base(s) ${unknown.map((name) => JSON.stringify(name)).join(", ")} in context.knowledge_bases, which this user cannot see (absent, or not shared with them): remove them, share them with this user, or leave knowledge_bases out for every visible one`,
        { field: "context.knowledge_bases" },
      );
    }
    return found;
  }

  /** The knowledge bases with these ids that `uid` still sees (a run's snapshot, re-checked). */
  visibleByIds(uid: string, ids: readonly string[]): Promise<KnowledgeBaseRecord[]> {
    return this.repository.findByIds(uid, ids);
  }

  /** Resolves once every queued file has been handled (for scripts, benchmarks and tests). */
  async idle(): Promise<void> {
    this.queue.kick();
    await this.queue.idle();
  }
}

function checkFileName(name: string): void {
  if (name.trim() === "" || name.length > 255 || hasNul(name) || /[/\\]/.test(name)) {
    throw new SubagentGraphError(
      ErrorCode.Validation,
      `file name ${JSON.stringify(name.slice(0, 60))} is invalid: use 1-255 characters without "/", "\\" or NUL`,
      { field: "file" },
    );
  }
}

function fileNotFound(record: KnowledgeBaseRecord, fileId: string): SubagentGraphError {
  return new SubagentGraphError(
    ErrorCode.NotFound,
    `knowledge base "${record.name}" has no file "${fileId}": list its files to get their ids`,
    { field: "file_id" },
  );
}
