/**
 * Small vector arithmetic for knowledge base search (`knowledge/sqlite-vectors.ts`) and the
 * migration that moved SQLite's vectors into sign bits (`store/migrations.ts`, 0010).
 */

/**
 * The sign bits of `vector`, packed 8 to a byte (element i is bit i % 8 of byte i / 8, set when
 * the element is above 0), padded with zero bits to a whole byte: what a sqlite-vec `bit[n]`
 * column stores. The Hamming distance of two such packings approximates the angle between the
 * vectors, which is what a first pass over many vectors needs.
 */
export function signBits(vector: Float32Array): Uint8Array {
  const bits = new Uint8Array(Math.ceil(vector.length / 8));
  for (let i = 0; i < vector.length; i += 1) {
    if ((vector[i] as number) > 0) bits[i >> 3] = (bits[i >> 3] as number) | (1 << (i & 7));
  }
  return bits;
}

/**
 * The cosine distance of two vectors (0: same direction, 2: opposite); 1 when either is zero
 * (an empty text's vector is near nothing).
 */
export function cosineDistance(a: Float32Array, b: Float32Array): number {
  let dot = 0;
  let normA = 0;
  let normB = 0;
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i += 1) {
    const x = a[i] as number;
    const y = b[i] as number;
    dot += x * y;
    normA += x * x;
    normB += y * y;
  }
  return normA === 0 || normB === 0 ? 1 : 1 - dot / Math.sqrt(normA * normB);
}
