import type { Reporter, TestModule } from "vitest/node";

/** How many files {@link SlowestFilesReporter} lists. */
const SHOWN = 10;

/**
 * Prints the ten slowest test files at the end of a run (after the default reporter's summary),
 * so the suite's time budget stays visible in every `npm test`: a file that grows slow shows up
 * here before the whole run does. A file's time is what its worker spent on it: preparing,
 * importing it (collecting its tests) and running its tests and hooks.
 */
export default class SlowestFilesReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    if (testModules.length < 2) return;
    const rows = testModules
      .map((module) => ({ file: module.relativeModuleId, seconds: secondsOf(module) }))
      .sort((a, b) => b.seconds - a.seconds)
      .slice(0, SHOWN);
    const width = Math.max(...rows.map((row) => row.seconds.toFixed(1).length));
    const lines = rows.map((row) => `  ${row.seconds.toFixed(1).padStart(width)} s  ${row.file}`);
    process.stdout.write(`\n Slowest ${rows.length} test files:\n${lines.join("\n")}\n`);
  }
}

function secondsOf(module: TestModule): number {
  const { prepareDuration, setupDuration, collectDuration, duration } = module.diagnostic();
  return (prepareDuration + setupDuration + collectDuration + duration) / 1000;
}
