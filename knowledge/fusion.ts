/**
 * Weighted reciprocal-rank fusion of the full-text and the vector ranking: a chunk scores
 * `weight / (k + rank)` in each list it is in (rank from 1), summed. Ranks, not scores, so BM25
 * and cosine distances never need a common scale.
 */

/**
 * The weights of hybrid search, BM25 dominant. Measured on Cranfield (`npm run bench -- --only
 * knowledge`, bench/README.md, "Scenario: knowledge") with the only embedder reachable here, the
 * test suite's hashed bag of words and trigrams (weak: it knows no synonyms): every weight given
 * to the vectors above this one did worse (on SQLite, 0.25 already dropped recall@10 from 0.403 to 0.394 and
 * equal weights to 0.356); at 0.1 SQLite's hybrid matches BM25 alone (0.405 / 0.387 / 0.528
 * against 0.403 / 0.386 / 0.530 recall@10 / nDCG@10 / MRR) and PostgreSQL's beats `ts_rank`
 * alone on every measure (0.344 / 0.337 / 0.505 against 0.330 / 0.323 / 0.486). A good
 * embedder would deserve more weight; measure it before raising this.
 */
export const HYBRID_WEIGHTS = { bm25: 1, vector: 0.1 } as const;

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
