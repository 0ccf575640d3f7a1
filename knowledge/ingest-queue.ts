/**
 * The ingest queue of one process: parse → chunk → index, one file at a time, the queue itself
 * being the `kb_files` rows (`KbFileStore.claimNext`). Nothing lives only in memory: a file
 * queued or half-indexed when the process stops is picked up by the next queue over the same
 * store (at once after a graceful stop, which requeues it; after a crash once its lease lapses).
 *
 * Never blocks the event loop for long: chunks are written in small batches with a turn of the
 * event loop between them, and a file's failure (unreadable, damaged) is that file's `error`,
 * never the knowledge base's or the process's.
 */

import { setImmediate as nextTurn } from "node:timers/promises";
import { ErrorCode, messageOf, SubagentGraphError } from "../errors.js";
import { chunkText, lineCount } from "./chunk.js";
import { activeEmbedder, type Embedder, type EmbedderFactory } from "./embedder.js";
import { extractFileText } from "./extract.js";
import type { ClaimedFile, KbFileStore } from "./files.js";
import { FILE_FORMATS, type FileFormat } from "./formats.js";
import type { KbFileRecord } from "./schema.js";
import type { VectorStore } from "./vector-store.js";

/** How often a started queue looks for work it was not told about, at most. */
const POLL_MS = 5_000;

/** Options of {@link IngestQueue}. */
export interface IngestQueueOptions {
  /** How long a claimed file stays this process's without renewal. Default 60 s. */
  leaseMs?: number;
  /** Chunks written per transaction (and between two turns of the event loop). Default 200. */
  batchSize?: number;
  /** Where unexpected failures are reported (they also go into the file's `error`). */
  warn(message: string): void;
  /** The embedder of a knowledge base's settings. */
  embedders: EmbedderFactory;
  /** Where vectors are written. */
  vectors: VectorStore;
}

/** Indexes queued files in the background, one at a time. */
export class IngestQueue {
  readonly #files: KbFileStore;
  readonly #leaseMs: number;
  readonly #batchSize: number;
  readonly #warn: (message: string) => void;
  readonly #embedders: EmbedderFactory;
  readonly #vectors: VectorStore;
  #draining: Promise<void> | undefined;
  #again = false;
  #stopped = false;
  #poll: NodeJS.Timeout | undefined;

  constructor(files: KbFileStore, options: IngestQueueOptions) {
    this.#files = files;
    this.#leaseMs = options.leaseMs ?? 60_000;
    this.#batchSize = options.batchSize ?? 200;
    this.#warn = options.warn;
    this.#embedders = options.embedders;
    this.#vectors = options.vectors;
  }

  /**
   * Starts the queue: it looks for work now, and again every few seconds, which is how it finds
   * files whose indexing process died (their lease lapses) and files other processes queued.
   */
  start(): void {
    if (this.#stopped || this.#poll) return;
    this.kick();
    const every = Math.min(POLL_MS, Math.max(100, Math.floor(this.#leaseMs / 2)));
    // Unref'd: an idle queue never keeps the process alive.
    this.#poll = setInterval(() => this.kick(), every).unref();
  }

  /** Makes the queue look for work now (after an upload, at start-up). Returns at once. */
  kick(): void {
    if (this.#stopped) return;
    if (this.#draining) {
      this.#again = true;
      return;
    }
    this.#draining = this.#drain().finally(() => {
      this.#draining = undefined;
      if (this.#again && !this.#stopped) {
        this.#again = false;
        this.kick();
      }
    });
  }

  /** Resolves when the queue has nothing left to do (for scripts and benchmarks). */
  async idle(): Promise<void> {
    while (this.#draining) await this.#draining;
  }

  /**
   * Stops taking files; the file being indexed is put back in the queue (the next process
   * indexes it from the start). Resolves once the queue has let go of the store.
   */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearInterval(this.#poll);
    await this.#draining;
  }

  async #drain(): Promise<void> {
    this.#again = false;
    while (!this.#stopped) {
      let claimed: ClaimedFile | undefined;
      let toEmbed: KbFileRecord | undefined;
      try {
        claimed = await this.#files.claimNext(this.#leaseMs);
        // New files first; then the files of knowledge bases whose embedder changed.
        if (!claimed) toEmbed = await this.#files.claimEmbedding(this.#leaseMs);
      } catch (error) {
        this.#warn(`knowledge ingest: cannot read the queue: ${messageOf(error)}`);
        return;
      }
      if (claimed) await this.#index(claimed);
      else if (toEmbed) await this.#embedAgain(toEmbed);
      else return;
    }
  }

  /** The embedder knowledge base `kbId` has now, if any. */
  async #embedderOf(kbId: string): Promise<Embedder | undefined> {
    const settings = await this.#files.embedderOf(kbId);
    const active = settings === undefined ? undefined : activeEmbedder(settings);
    return active === undefined ? undefined : this.#embedders(active);
  }

  async #index({ file, content }: ClaimedFile): Promise<void> {
    try {
      const format = formatOf(file.format);
      const text = await extractFileText(file.name, format, content);
      if (this.#stopped) return await this.#files.requeue(file.id);
      const chunks = await chunkText(text, format);
      const embedder = await this.#embedderOf(file.kb_id);
      // The embedder whose vectors every chunk gets; undefined once its knowledge base has
      // another (the file is then queued for new vectors when it is indexed).
      let embeddedWith = embedder?.key;
      await this.#files.beginIndex(file.id, text);
      for (let start = 0; start < chunks.length; start += this.#batchSize) {
        if (this.#stopped) return await this.#files.requeue(file.id);
        const batch = chunks.slice(start, start + this.#batchSize).map((chunk, offset) => ({
          kb_id: file.kb_id,
          file_id: file.id,
          seq: start + offset,
          line_start: chunk.lineStart,
          line_end: chunk.lineEnd,
          text: chunk.text,
        }));
        const ids = await this.#files.addChunks(batch);
        if (embedder !== undefined && embeddedWith !== undefined) {
          const vectors = await embedder.embed(batch.map((chunk) => chunk.text));
          const written = await this.#vectors.write(
            file.kb_id,
            embedder.key,
            embedder.dimensions,
            ids.map((chunkId, index) => ({ chunkId, vector: vectors[index] as Float32Array })),
          );
          if (!written) embeddedWith = undefined;
        }
        // Another process may have taken the file over (our lease lapsed): leave it to them.
        if (!(await this.#files.renewLease(file.id, this.#leaseMs))) return;
        await nextTurn();
      }
      await this.#files.markIndexed(
        file,
        { chunks: chunks.length, lines: lineCount(text) },
        embeddedWith,
      );
    } catch (error) {
      const known = SubagentGraphError.isInstance(error);
      if (!known) this.#warn(`knowledge ingest: file ${file.id} failed: ${messageOf(error)}`);
      const message = known
        ? error.message
        : `file "${file.name}" could not be indexed (${messageOf(error)}): upload it again, or report this if it keeps failing`;
      await this.#files.markError(file.id, message).catch((markError: unknown) => {
        this.#warn(
          `knowledge ingest: cannot record the failure of ${file.id}: ${messageOf(markError)}`,
        );
      });
    }
  }

  /**
   * Gives an indexed file the vectors of its knowledge base's embedder now (a reindex after a
   * change of model or length), batch by batch from its stored chunks: its text is not parsed
   * again, and full-text search finds it all along.
   */
  async #embedAgain(file: KbFileRecord): Promise<void> {
    try {
      const embedder = await this.#embedderOf(file.kb_id);
      if (embedder !== undefined) {
        let after = -1;
        for (;;) {
          if (this.#stopped) return await this.#files.embeddingFailed(file.id, undefined);
          const chunks = await this.#files.chunksAfter(file.id, after, this.#batchSize);
          const last = chunks.at(-1);
          if (last === undefined) break;
          const vectors = await embedder.embed(chunks.map((chunk) => chunk.text));
          const written = await this.#vectors.write(
            file.kb_id,
            embedder.key,
            embedder.dimensions,
            chunks.map((chunk, index) => ({
              chunkId: Number(chunk.id),
              vector: vectors[index] as Float32Array,
            })),
          );
          // The embedder changed again: that change queued the file anew.
          if (!written) return;
          after = last.seq;
          if (!(await this.#files.renewEmbeddingLease(file.id, this.#leaseMs))) return;
          await nextTurn();
        }
      }
      await this.#files.finishEmbedding(file, embedder?.key);
    } catch (error) {
      const known = SubagentGraphError.isInstance(error);
      if (!known) this.#warn(`knowledge ingest: vectors of ${file.id} failed: ${messageOf(error)}`);
      const message = known
        ? error.message
        : `the vectors of file "${file.name}" could not be made (${messageOf(error)}): change the knowledge base's embedder to try again`;
      await this.#files.embeddingFailed(file.id, message).catch((markError: unknown) => {
        this.#warn(
          `knowledge ingest: cannot record the failure of ${file.id}: ${messageOf(markError)}`,
        );
      });
    }
  }
}

function formatOf(stored: string): FileFormat {
  const format = FILE_FORMATS.find((known) => known === stored);
  // Only formats detectFormat returned are stored; anything else is a damaged row.
  if (format === undefined) {
    throw new SubagentGraphError(
      ErrorCode.Internal,
      `knowledge file row has an unknown stored format "${stored}" (the row is damaged: re-add the file)`,
    );
  }
  return format;
}
