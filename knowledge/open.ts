/**
 * Opens the knowledge base parts over an open database: the repository, the file store, the
 * ingest queue (started at once, so files a previous process left queued get indexed) and the
 * API over them.
 */

import type { Database } from "../store/database.js";
import type { StampedReads } from "../store/stamped-reads.js";
import { type EmbedderFactory, memoizedEmbedders, openAIEmbedderFactory } from "./embedder.js";
import { KbFileStore } from "./files.js";
import { IngestQueue } from "./ingest-queue.js";
import { KnowledgeBaseRepository } from "./repository.js";
import { KnowledgeBases } from "./service.js";
import { VectorStore } from "./vector-store.js";

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
  /**
   * Where knowledge bases' embedders read `OPENAI_BASE_URL` and their API key variable
   * (`embedder.api_key_env`, default `OPENAI_API_KEY`). Default: `process.env`.
   */
  env?: Readonly<Record<string, string | undefined>>;
  /** Builds embedders (default: OpenAI-compatible endpoints over `env`). */
  embedders?: EmbedderFactory;
  /** Keeps knowledge base lookups until one is written (see `store/stamped-reads.ts`). */
  reads?: StampedReads;
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
  const vectors = new VectorStore(database);
  const embedders = memoizedEmbedders(
    options.embedders ?? openAIEmbedderFactory(options.env ?? process.env),
  );
  const queue = new IngestQueue(files, {
    warn: options.warn,
    embedders,
    vectors,
    ...(options.leaseMs === undefined ? {} : { leaseMs: options.leaseMs }),
  });
  if (options.ingest === false) void queue.stop();
  else queue.start();
  const api = new KnowledgeBases(
    new KnowledgeBaseRepository(database, options.reads ? { reads: options.reads } : {}),
    files,
    queue,
    { maxFileBytes: options.maxFileBytes ?? 50 * 1024 * 1024 },
    { database, vectors, embedders, warn: options.warn },
  );
  return { api, close: () => queue.stop() };
}
