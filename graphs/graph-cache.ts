/**
 * A small least-recently-used cache of compiled graphs. Keys carry everything that changes a
 * graph (agent id and version, the resolved subagents and their versions), so an updated agent
 * is simply a new key and the old entry ages out.
 */
export class GraphCache<T> {
  private readonly entries = new Map<string, T>();

  constructor(private readonly capacity = 256) {}

  getOrBuild(key: string, build: () => T): T {
    const hit = this.entries.get(key);
    if (hit !== undefined) {
      // Re-insert to mark as most recently used (Map keeps insertion order).
      this.entries.delete(key);
      this.entries.set(key, hit);
      return hit;
    }
    const built = build();
    this.entries.set(key, built);
    if (this.entries.size > this.capacity) {
      const oldest = this.entries.keys().next();
      if (!oldest.done) this.entries.delete(oldest.value);
    }
    return built;
  }

  get size(): number {
    return this.entries.size;
  }

  clear(): void {
    this.entries.clear();
  }
}
