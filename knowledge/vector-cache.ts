/**
 * Vector search by a scan in this process: each knowledge base's vectors are read once from the
 * database into one flat array, and read again when its stamp (its version, its embedder, what
 * its stored vectors are) changes. Used on PostgreSQL (no pgvector, see `postgres-vectors.ts`)
 * and on SQLite, where the scan is faster than sqlite-vec's own exact search (10 ms against
 * 25-35 ms for 24k vectors of 384 dimensions, bench/README.md, "Scenario: knowledge"); sqlite-vec
 * keeps storing them.
 *
 * The scan is a dot product per vector (they are unit length). Memory: 4 bytes per dimension per
 * chunk of every knowledge base searched by this process.
 */

import type { Kysely, Transaction } from "kysely";
import type { DatabaseSchema } from "../store/schema.js";

type Executor = Kysely<DatabaseSchema> | Transaction<DatabaseSchema>;

/** A chunk near the query, with its cosine distance (smaller is nearer). */
export interface VectorHit {
  id: number;
  distance: number;
}

/** A stored vector as the database gives it back. */
export interface StoredVector {
  id: number;
  vector: Float32Array;
}

/** Where a {@link VectorCache} reads vectors: one engine's tables. */
export interface VectorSource {
  /**
   * A value that changes whenever the vectors of `kbId` made by the embedder `key` may have
   * changed (read before each search: it must be cheap, and see other processes' writes).
   */
  stamp(db: Executor, kbId: string, key: string): Promise<string>;
  /** Every vector of `kbId` made by `key` (of length `dimensions`). */
  load(db: Executor, kbId: string, key: string, dimensions: number): Promise<StoredVector[]>;
  /** Of the chunks `ids`, those of files indexed now (and among `fileIds` when given). */
  live(
    db: Executor,
    ids: readonly number[],
    fileIds: readonly string[] | undefined,
  ): Promise<Set<number>>;
}

interface Cached {
  stamp: string;
  ids: Int32Array;
  vectors: Float32Array;
  dimensions: number;
}

/** The vectors of each knowledge base searched by this process, as one flat array each. */
export class VectorCache {
  readonly #cache = new Map<string, Cached>();

  constructor(private readonly source: VectorSource) {}

  /**
   * The `limit` chunks of knowledge base `kbId` nearest `vector` among those the embedder `key`
   * made (of `indexed` files, of `fileIds` when given), nearest first.
   */
  async nearest(
    db: Executor,
    search: {
      kbId: string;
      version: number;
      key: string;
      vector: Float32Array;
      limit: number;
      fileIds?: readonly string[] | undefined;
    },
  ): Promise<VectorHit[]> {
    if (search.fileIds !== undefined && search.fileIds.length === 0) return [];
    const cached = await this.#load(db, search);
    if (cached.dimensions !== search.vector.length || cached.ids.length === 0) return [];
    // A file filter and files being reindexed are applied after the scan: ask for more.
    const k = search.fileIds === undefined ? search.limit + 32 : search.limit * 4 + 64;
    const top = topByDot(cached, search.vector, k);
    if (top.length === 0) return [];
    const live = await this.source.live(
      db,
      top.map((hit) => hit.id),
      search.fileIds,
    );
    return top.filter((hit) => live.has(hit.id)).slice(0, search.limit);
  }

  async #load(
    db: Executor,
    search: { kbId: string; version: number; key: string; vector: Float32Array },
  ): Promise<Cached> {
    const { kbId, key } = search;
    const dimensions = search.vector.length;
    const stamp = JSON.stringify([
      search.version,
      key,
      dimensions,
      await this.source.stamp(db, kbId, key),
    ]);
    const hit = this.#cache.get(kbId);
    if (hit?.stamp === stamp) return hit;
    const stored = (await this.source.load(db, kbId, key, dimensions)).filter(
      (row) => row.vector.length === dimensions,
    );
    const ids = new Int32Array(stored.length);
    const vectors = new Float32Array(stored.length * dimensions);
    stored.forEach((row, index) => {
      ids[index] = row.id;
      vectors.set(row.vector, index * dimensions);
    });
    const loaded = { stamp, ids, vectors, dimensions };
    this.#cache.set(kbId, loaded);
    return loaded;
  }
}

/** The `k` cached vectors with the largest dot product with `query`, as cosine distances. */
function topByDot(cached: Cached, query: Float32Array, k: number): VectorHit[] {
  const { ids, vectors, dimensions } = cached;
  const best: VectorHit[] = [];
  let worst = Number.POSITIVE_INFINITY;
  for (let row = 0; row < ids.length; row += 1) {
    const distance = 1 - dotAt(vectors, row * dimensions, query);
    if (best.length < k || distance < worst) {
      best.push({ id: ids[row] as number, distance });
      if (best.length > k * 2) {
        best.sort(byDistance);
        best.length = k;
        worst = (best[k - 1] as VectorHit).distance;
      }
    }
  }
  return best.sort(byDistance).slice(0, k);
}

/**
 * The dot product of `query` with the vector at `offset` of `vectors`. Four sums side by side:
 * V8 keeps them in registers, ~7% faster than one (bench/README.md, "Scenario: knowledge").
 */
function dotAt(vectors: Float32Array, offset: number, query: Float32Array): number {
  let a = 0;
  let b = 0;
  let c = 0;
  let d = 0;
  const length = query.length;
  let i = 0;
  for (; i + 3 < length; i += 4) {
    a += (vectors[offset + i] as number) * (query[i] as number);
    b += (vectors[offset + i + 1] as number) * (query[i + 1] as number);
    c += (vectors[offset + i + 2] as number) * (query[i + 2] as number);
    d += (vectors[offset + i + 3] as number) * (query[i + 3] as number);
  }
  for (; i < length; i += 1) a += (vectors[offset + i] as number) * (query[i] as number);
  return a + b + c + d;
}

function byDistance(a: VectorHit, b: VectorHit): number {
  return a.distance - b.distance || a.id - b.id;
}
