/**
 * Opens the knowledge base parts over an open database: the repository, the file store, the
 * ingest queue (started at once, so files a previous process left queued get indexed) and the
 * API over them.
 */

import type { Database } from "../store/database.js";
import { KbFileStore } from "./files.js";
import { IngestQueue } from "./ingest-queue.js";
import { KnowledgeBaseRepository } from "./repository.js";
import { KnowledgeBases } from "./service.js";

/** Options of {@link openKnowledge}. */
export interface KnowledgeOptions {
  /** Largest file accepted, in bytes. Default 50 MiB. */
  maxFileBytes?: number;
  /**
   * Index queued files in this process. Default true. A process that only serves (others
   * index, over the same PostgreSQL database) sets it false: its uploads wait in the queue.
   */
  ingest?: boolean;
  /** How long a file being indexed stays this process's without renewal. Default 60 s. */
  leaseMs?: number;
  warn(message: string): void;
}

/** The opened knowledge base parts. */
export interface KnowledgeParts {
  api: KnowledgeBases;
  /** Stops the ingest queue (the file in progress goes back to the queue). */
  close(): Promise<void>;
}

/** Opens the knowledge base parts over `database`. */
export function openKnowledge(database: Database, options: KnowledgeOptions): KnowledgeParts {
  const files = new KbFileStore(database);
  const queue = new IngestQueue(files, {
    warn: options.warn,
    ...(options.leaseMs === undefined ? {} : { leaseMs: options.leaseMs }),
  });
  if (options.ingest === false) void queue.stop();
  else queue.start();
  const api = new KnowledgeBases(new KnowledgeBaseRepository(database), files, queue, database, {
    maxFileBytes: options.maxFileBytes ?? 50 * 1024 * 1024,
  });
  return { api, close: () => queue.stop() };
}
