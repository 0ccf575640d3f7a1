/** Replaces items with the same `id` in place and appends new ones, keeping their order. */
export function upsertById<T extends { id: string }>(
  current: readonly T[],
  updates: readonly T[] | undefined,
): T[] {
  const merged = [...current];
  for (const item of updates ?? []) {
    const index = merged.findIndex((existing) => existing.id === item.id);
    if (index >= 0) merged[index] = item;
    else merged.push(item);
  }
  return merged;
}
