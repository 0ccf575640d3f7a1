/**
 * Weighted reciprocal-rank fusion of the full-text and the vector ranking: a chunk scores
 * `weight / (k + rank)` in each list it is in (rank from 1), summed. Ranks, not scores, so BM25
 * and cosine distances never need a common scale.
 */

/**
 * The weights of hybrid search, BM25 dominant. Measured on Cranfield (`npm run bench -- --only
 * knowledge`, bench/README.md): with the test suite's hashed bag-of-words embedder, an equal
 * weight made every measure worse than BM25 alone (the issue saw the same with a weak real
 * embedder), and 0.25 for the vectors came out best of the weights tried. A good embedder would
 * deserve more; this errs on the side of never doing worse than full-text search by much.
 */
export const HYBRID_WEIGHTS = { bm25: 1, vector: 0.25 } as const;

/** RRF's rank offset (the usual 60): how fast a list's weight fades down its ranking. */
export const RRF_K = 60;

/** A ranked list of chunk ids, best first, and its weight. */
export interface RankedList {
  ids: readonly number[];
  weight: number;
}

/** The chunks of all lists by fused score, best first (ties: smaller id first). */
export function fuseRankings(
  lists: readonly RankedList[],
  k = RRF_K,
): { id: number; score: number }[] {
  const scores = new Map<number, number>();
  for (const { ids, weight } of lists) {
    ids.forEach((id, index) => {
      scores.set(id, (scores.get(id) ?? 0) + weight / (k + index + 1));
    });
  }
  return [...scores]
    .map(([id, score]) => ({ id, score }))
    .sort((a, b) => b.score - a.score || a.id - b.id);
}
