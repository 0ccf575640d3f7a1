/** What a client process answers a command with: the level's runs, latencies and errors. */
export interface LoadReport {
  runs: number;
  latenciesMs: number[];
  errors: string[];
  wallMs: number;
  p50Ms: number;
  p99Ms: number;
}

/**
 * The child side of `load-client-process.ts`: answers each command the parent sends with the
 * report `runLevel` makes (a report of the failure when it throws), and exits when the parent
 * disconnects. Does nothing when the module is not running as a forked child.
 */
export function answerParent<Command>(runLevel: (command: Command) => Promise<LoadReport>): void {
  if (!process.send) return;
  process.on("message", (command: Command) => {
    runLevel(command).then(
      (report) => process.send?.(report),
      (error: unknown) =>
        process.send?.({
          runs: 0,
          latenciesMs: [],
          errors: [`client process: ${String(error)}`],
          wallMs: 0,
          p50Ms: Number.NaN,
          p99Ms: Number.NaN,
        } satisfies LoadReport),
    );
  });
  process.on("disconnect", () => process.exit(0));
}
