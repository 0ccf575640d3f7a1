/** Reading a V8 CPU profile: where the samples' time went, for the `bench/profile-*.ts` tools. */
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
/** A V8 CPU profile (`.cpuprofile`), the parts read here. */
export interface CpuProfile {
  /** When sampling began, in µs of the system's monotonic clock (`process.hrtime`'s). */
  startTime: number;
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

/** Where a frame's code lives: a package, one of our files, Node itself or V8. */
function place(url: string): string {
  if (url === "") return "(V8: GC, idle, native)";
  const packaged = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (packaged?.[1]) return packaged[1];
  if (url.startsWith("node:")) return "node (runtime)";
  const ours = url.replace(`file://${ROOT}/`, "");
  return ours === url ? url : `ours: ${ours}`;
}

function top(counter: Map<string, number>, total: number, n: number): string[] {
  return [...counter]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([key, us]) => `${((100 * us) / total).toFixed(1).padStart(5)}%  ${key}`);
}

/** The monotonic clock in µs, the clock of a profile's sample times (see {@link CpuProfile}). */
export function monotonicMicros(): number {
  return Number(process.hrtime.bigint() / 1000n);
}

/**
 * Self time by package (or our file) and by function, and the time below each of our files, as
 * text; only the samples taken within `window` (µs of {@link monotonicMicros}, e.g. the load
 * without the start-up and warm-up) when it is given.
 */
export function summarizeProfile(
  profile: CpuProfile,
  window?: { fromUs: number; toUs: number },
): string {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes)
    for (const child of node.children ?? []) parent.set(child, node.id);
  const self = new Map<number, number>();
  let at = profile.startTime;
  for (const [i, id] of profile.samples.entries()) {
    const delta = profile.timeDeltas[i] ?? 0;
    at += delta;
    if (window && (at < window.fromUs || at > window.toUs)) continue;
    self.set(id, (self.get(id) ?? 0) + delta);
  }
  const total = [...self.values()].reduce((a, b) => a + b, 0);
  const byPlace = new Map<string, number>();
  const byFunction = new Map<string, number>();
  const belowOurs = new Map<string, number>();
  for (const [id, us] of self) {
    const node = byId.get(id);
    if (!node) continue;
    const { functionName, url, lineNumber } = node.callFrame;
    const where = place(url);
    byPlace.set(where, (byPlace.get(where) ?? 0) + us);
    const fn = `${functionName || "(anonymous)"} ${where}:${lineNumber + 1}`;
    byFunction.set(fn, (byFunction.get(fn) ?? 0) + us);
    // Inclusive time of our files: each of our files on the stack once per sample.
    const seen = new Set<string>();
    for (
      let frameId: number | undefined = id;
      frameId !== undefined;
      frameId = parent.get(frameId)
    ) {
      const frame = byId.get(frameId);
      const file = frame ? place(frame.callFrame.url) : "";
      if (file.startsWith("ours: ") && !seen.has(file)) {
        seen.add(file);
        belowOurs.set(file, (belowOurs.get(file) ?? 0) + us);
      }
    }
  }
  return [
    `sampled ${(total / 1000).toFixed(0)} ms`,
    "",
    "self time by package or file:",
    ...top(byPlace, total, 20),
    "",
    "self time by function:",
    ...top(byFunction, total, 25),
    "",
    "time with one of our files on the stack (synchronous part only; awaits cut the stack):",
    ...top(belowOurs, total, 20),
  ].join("\n");
}
