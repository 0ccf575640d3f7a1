/** Wall-clock timing on `process.hrtime.bigint()` (monotonic, nanoseconds). */
import { Rng } from "../../test/support/json-fuzz.js";

/** A monotonic timestamp in nanoseconds. */
export function nowNs(): bigint {
  return process.hrtime.bigint();
}

/** Milliseconds elapsed since `startNs`. */
export function msSince(startNs: bigint): number {
  return Number(process.hrtime.bigint() - startNs) / 1e6;
}

/** How long `fn` takes, in milliseconds. */
export async function timeMs(fn: () => Promise<unknown>): Promise<number> {
  const start = nowNs();
  await fn();
  return msSince(start);
}

/** How many runs to throw away first and how many to keep. */
export interface Repeat {
  warmup: number;
  iterations: number;
}

/** Runs `fn` `warmup` times untimed, then `iterations` times timed; the kept times in ms. */
export async function measure(fn: () => Promise<unknown>, repeat: Repeat): Promise<number[]> {
  for (let i = 0; i < repeat.warmup; i += 1) await fn();
  const samples: number[] = [];
  for (let i = 0; i < repeat.iterations; i += 1) samples.push(await timeMs(fn));
  return samples;
}

/**
 * Measures several variants interleaved (round-robin, one sample of each per round), so slow
 * drift of the machine (GC pressure, a growing database, thermal) is spread over all of them
 * instead of favouring whichever ran first, and the order turns each round. Warm-up rounds are
 * untimed.
 */
export async function measureInterleaved<K extends string>(
  variants: Record<K, () => Promise<unknown>>,
  repeat: Repeat,
): Promise<Record<K, number[]>> {
  const keys = Object.keys(variants) as K[];
  const samples = Object.fromEntries(keys.map((key) => [key, [] as number[]])) as Record<
    K,
    number[]
  >;
  for (let round = 0; round < repeat.warmup + repeat.iterations; round += 1) {
    for (const key of rotated(keys, round)) {
      const ms = await timeMs(variants[key]);
      if (round >= repeat.warmup) samples[key].push(ms);
    }
  }
  return samples;
}

/** Calls `global.gc` when node runs with `--expose-gc` (the bench script does). */
export function collectGarbage(): void {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc) {
    gc();
    gc();
  }
}

/**
 * `items` turned left by `round` places: measured in this order, no variant always runs first,
 * right after the previous one's garbage.
 */
export function rotated<T>(items: readonly T[], round: number): T[] {
  return items.map((_, i) => items[(i + round) % items.length] as T);
}

/**
 * `items` in an order drawn from `seed` (the same seed, the same order; Fisher–Yates over the
 * test suite's seeded `Rng`): a round of measurements taken in this order puts no item at a fixed
 * place in the round, where the garbage of a fixed predecessor or a collection due every so many
 * runs would always land on it.
 */
export function shuffled<T>(items: readonly T[], seed: number): T[] {
  const rng = new Rng(seed);
  const result = [...items];
  for (let i = result.length - 1; i > 0; i -= 1) {
    const j = rng.int(i + 1);
    [result[i], result[j]] = [result[j] as T, result[i] as T];
  }
  return result;
}
