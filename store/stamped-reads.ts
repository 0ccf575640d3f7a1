/**
 * Reads of rarely written tables, kept until the database says they changed.
 *
 * Every run and every `task` call looks up agents and knowledge bases (the caller's current
 * limits, the subagent's record, the knowledge bases it may search), and they almost never
 * change between two lookups. Migration 0010 gives those tables a change counter that triggers
 * move on every write, whoever writes (this process, another process on the same database, a
 * hand edit), inside the writer's transaction. A kept read is answered while the counters read
 * the same as when it was loaded: one small query (or none, see {@link StampedReads.read})
 * instead of several, and no row decoding.
 */

/** Reads the change counters as one string that differs after any counted write. */
export type ChangeStamp = () => string | Promise<string>;

/** Most kept reads; past it the oldest is dropped (a store with that many users is a big one). */
const MAX_KEPT_READS = 10_000;

/**
 * Keeps reads by key for as long as the change stamp stays the same (see the file's comment).
 * Kept values are frozen, so a caller that tried to change one would throw instead of changing
 * what the next caller reads.
 */
export class StampedReads {
  readonly #stamp: ChangeStamp;
  readonly #maxKept: number;
  /** The reads loaded since the stamp last read `stamp`. */
  #kept: { stamp: string; reads: Map<string, Promise<unknown>> } | undefined;

  constructor(stamp: ChangeStamp, options: { maxKept?: number } = {}) {
    this.#stamp = stamp;
    this.#maxKept = options.maxKept ?? MAX_KEPT_READS;
  }

  /**
   * The value `load` gives for `key`, loaded again only after a counted write. Concurrent reads
   * of one key share one load; a load that fails is not kept.
   *
   * Why this is never stale: the stamp is read before `load` runs, so a kept value is at least
   * as new as the stamp it is kept under, and a later read that finds the same stamp knows no
   * counted write has committed since.
   */
  async read<T>(key: string, load: () => Promise<T>): Promise<T> {
    const read = this.#stamp();
    const stamp = typeof read === "string" ? read : await read;
    if (this.#kept?.stamp !== stamp) this.#kept = { stamp, reads: new Map() };
    // Loads started under this stamp land in its map, even if the stamp moves meanwhile.
    const { reads } = this.#kept;
    const kept = reads.get(key);
    if (kept) return kept as Promise<T>;
    const loading = load().then(deepFreeze);
    reads.set(key, loading);
    loading.catch(() => reads.delete(key));
    if (reads.size > this.#maxKept) {
      const oldest = reads.keys().next().value;
      if (oldest !== undefined) reads.delete(oldest);
    }
    return loading;
  }
}

/** Freezes `value` and everything reachable from it (plain data: records, arrays). */
function deepFreeze<T>(value: T): T {
  if (typeof value !== "object" || value === null || Object.isFrozen(value)) return value;
  Object.freeze(value);
  for (const inner of Object.values(value)) deepFreeze(inner);
  return value;
}
