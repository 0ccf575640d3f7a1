import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // One private PostgreSQL cluster for the run (see test/support/global-setup.ts), and one
    // folder for the run's packed package (test/support/pack-setup.ts).
    globalSetup: ["test/support/global-setup.ts", "test/support/pack-setup.ts"],
    // The checkpoint-validation suite (a later issue) needs vitest's globals.
    globals: true,
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
