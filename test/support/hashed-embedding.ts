/**
 * A deterministic stand-in for an embedding model: a hashed bag of words and of character
 * trigrams. Texts that share words or parts of words ("colour" and "color") get close vectors,
 * which is enough for a test to tell vector search from word matching, and weak next to a
 * real model (it knows no synonyms): the bench says so when it reports it.
 */

/** FNV-1a, 32 bits: a stable hash for spreading features over dimensions. */
function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i += 1) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

const WORD = /[\p{L}\p{N}]+/gu;

/**
 * The vector of `text` with `dimensions` entries (not normalised): each lowercase word adds 1
 * and each of its character trigrams (with word boundaries) 0.5 at a hashed position, with a
 * hashed sign so unrelated features cancel rather than pile up.
 */
export function hashedEmbedding(text: string, dimensions: number): number[] {
  const vector = new Array<number>(dimensions).fill(0);
  const add = (feature: string, weight: number) => {
    const hash = fnv1a(feature);
    const sign = hash & 1 ? 1 : -1;
    const index = (hash >>> 1) % dimensions;
    vector[index] = (vector[index] as number) + sign * weight;
  };
  for (const word of text.toLowerCase().match(WORD) ?? []) {
    add(`w:${word}`, 1);
    const bounded = `#${word}#`;
    for (let i = 0; i + 3 <= bounded.length; i += 1) add(`t:${bounded.slice(i, i + 3)}`, 0.5);
  }
  return vector;
}
