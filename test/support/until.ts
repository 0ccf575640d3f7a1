/** Polls `condition` every 10 ms until it holds; fails after `limitMs`. */
export async function until(condition: () => boolean, limitMs = 5_000): Promise<void> {
  const deadline = Date.now() + limitMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${limitMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
