import { defineConfig } from "vitest/config";
import RunSequencer from "./test/support/sequencer.js";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // One private PostgreSQL cluster for the run (see test/support/global-setup.ts), one folder
    // for the run's packed package (test/support/pack-setup.ts), and the run's JavaScript of
    // the sources that CLI processes start from (test/support/compiled-sources-setup.ts).
    globalSetup: [
      "test/support/global-setup.ts",
      "test/support/pack-setup.ts",
      "test/support/compiled-sources-setup.ts",
    ],
    // The checkpoint-validation suite (a later issue) needs vitest's globals.
    globals: true,
    // vitest's order, with the files that install the packed package a little later and their
    // pack started with the run (test/support/sequencer.ts).
    sequence: { sequencer: RunSequencer },
    // The default report, then the ten slowest files with their seconds
    // (test/support/slowest-files-reporter.ts), so the suite's time budget stays in sight.
    reporters: ["default", "./test/support/slowest-files-reporter.ts"],
    // Three test files at a time on 2 cores. vitest's default is one fewer than the cores (one,
    // on the 2-core CI machines), but most files here wait on child processes, servers and
    // PostgreSQL rather than the CPU: with two the suite kept 1.3 of the 2 cores busy. Measured
    // here, whole suite, back to back: two 349 s, three 322 s.
    maxWorkers: 3,
    // Test files share their worker's modules instead of importing LangChain, LangGraph and the
    // runtime afresh each (measured here, whole suite: 207 s of imports isolated, 18 s shared;
    // test/runtime alone 95 s → 71 s). Nothing here mocks modules, and each file opens its own
    // runtime, data folder and database, so sharing the module graph is safe.
    isolate: false,
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
