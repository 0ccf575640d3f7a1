import { stat } from "node:fs/promises";

/**
 * Waits until `dir`'s change time is over a second old: from then on the skill library keeps its
 * listing of the folder (see `#skillFolders` in `sandbox/skills/library.ts`), so a test can
 * check that a change made afterwards is still seen.
 */
export async function settledFolder(dir: string): Promise<void> {
  const wait = (await stat(dir)).ctimeMs + 1100 - Date.now();
  if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
}
