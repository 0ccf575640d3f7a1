import { mkdir, rm } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { glob } from "tinyglobby";
import ts from "typescript";
import type { TestProject } from "vitest/node";
import { CHILD_SCRIPTS } from "./node-entry.js";
import { foldersOfEndedProcesses } from "./process-alive.js";

declare module "vitest" {
  export interface ProvidedContext {
    /**
     * This run's JavaScript of the package's sources (see `test/support/node-entry.ts`): what
     * the tests' CLI and server processes run.
     */
    compiledSourcesDir: string;
  }
}

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

/** A run's build is `.tmp/test-build-<pid of the vitest process>`. */
const BUILD_PREFIX = "test-build-";

/**
 * What is transpiled, as absolute paths: the files `tsconfig.build.json` compiles into `dist/`
 * (read through TypeScript's own config parser, so the two never disagree), and the test
 * scripts started as processes with the test helpers they import.
 */
async function sourcesToCompile(): Promise<string[]> {
  const build = ts.getParsedCommandLineOfConfigFile(
    join(ROOT, "tsconfig.build.json"),
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (diagnostic) => {
        throw new Error(ts.flattenDiagnosticMessageText(diagnostic.messageText, "\n"));
      },
    },
  );
  if (build === undefined) throw new Error("tsconfig.build.json could not be read");
  const testHelpers = await glob(["test/support/**/*.ts"], {
    cwd: ROOT,
    absolute: true,
    ignore: ["**/*.d.ts"],
  });
  const childScripts = CHILD_SCRIPTS.map((file) => join(ROOT, file));
  return [...new Set([...build.fileNames, ...testHelpers, ...childScripts])];
}

/** Transpiles the package's sources file by file into `outDir`, as tsx would on the fly. */
async function compileSources(outDir: string): Promise<void> {
  await rm(outDir, { recursive: true, force: true });
  await build({
    entryPoints: await sourcesToCompile(),
    outdir: outDir,
    outbase: ROOT,
    bundle: false,
    format: "esm",
    platform: "node",
    target: "node20",
    tsconfig: join(ROOT, "tsconfig.json"),
    logLevel: "error",
  });
}

/**
 * Transpiles the package's sources once per run (and again before a watch-mode rerun) into a
 * folder under the repository's `.tmp/`, so the tests' `cli/main.ts` processes (a hundred or so
 * per run: servers, workers, one-off commands) start as plain `node` on JavaScript, as the
 * installed bin does, instead of each loading TypeScript through tsx.
 *
 * Measured here: a CLI command under tsx took 1.6 s and 2.6 s of CPU to start, from this build
 * 0.85 s and 1.1 s; the transpile takes about a second. The folder sits inside the repository
 * so the modules resolve the repository's node_modules and find its `web/` (see
 * `util/package-root.ts`). `npm start` and `npm run studio` still run under tsx in the tests
 * that stand for them (`test/server/serve.int.test.ts`, `test/studio/studio.int.test.ts`).
 */
export default async function setup(project: TestProject) {
  const parent = join(ROOT, ".tmp");
  await mkdir(parent, { recursive: true });
  // What killed runs left behind.
  for (const build of foldersOfEndedProcesses(parent, BUILD_PREFIX)) {
    await rm(build, { recursive: true, force: true });
  }
  const outDir = join(parent, `${BUILD_PREFIX}${process.pid}`);
  await compileSources(outDir);
  project.provide("compiledSourcesDir", outDir);
  project.onTestsRerun(() => compileSources(outDir));
  return () => rm(outDir, { recursive: true, force: true });
}
