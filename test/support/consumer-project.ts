/**
 * The package as another project gets it: `npm pack` of the working tree (with its `prepack`
 * build), installed into a fresh project outside the repository. Tests use it to check what a
 * Node service sees: plain `node` on the compiled ESM, a consumer's strict `tsc` on the `.d.ts`
 * files, the `bin`. Packing happens at most once per vitest run, whichever test files ask.
 *
 * @example
 * const project = await createConsumerProject();
 * try {
 *   await project.write("app.mjs", 'import { createRuntime } from "subagent-graph";\n…');
 *   const run = await project.node("app.mjs");
 *   expect(run.code, run.stderr).toBe(0);
 *   await project.write("app.ts", "…");
 *   const check = await project.typecheck();
 *   expect(check.code, check.stdout).toBe(0);
 * } finally {
 *   await project.remove();
 * }
 */

import { execFile, spawn } from "node:child_process";
import { existsSync, readFileSync, rmSync } from "node:fs";
import {
  chmod,
  copyFile,
  lstat,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  readlink,
  rename,
  rm,
  symlink,
  writeFile,
} from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { inject } from "vitest";
import { isAlive } from "./process-alive.js";

const execFileAsync = promisify(execFile);

/** The repository: what is packed, and whose node_modules a consumer's dependencies come from. */
const ROOT = fileURLToPath(new URL("../..", import.meta.url));

/** The package's name, as a consumer installs and imports it. */
export const PACKAGE_NAME = "subagent-graph";

/**
 * The compiler options of a consumer's `tsconfig.json`: strict, nothing newer than ES2022 in
 * `lib`, every declaration file checked (ours and our dependencies'), Node's ESM resolution (so
 * the `exports` map and its `types` conditions decide what is found).
 */
export const CONSUMER_COMPILER_OPTIONS = {
  target: "ES2022",
  lib: ["ES2022"],
  module: "NodeNext",
  moduleResolution: "NodeNext",
  strict: true,
  skipLibCheck: false,
  types: ["node"],
  outDir: "out",
} as const;

/** What a command run in the project printed and how it exited. */
export interface CommandResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Options of {@link ConsumerProject.run} and its shorthands. */
export interface RunOptions {
  /** Added to {@link consumerEnv} (which has no OpenAI, subagent-graph or npm variables). */
  env?: NodeJS.ProcessEnv;
}

/** A project with the packed package installed (see {@link createConsumerProject}). */
export interface ConsumerProject {
  /** The project's folder, in the OS temp folder (never below the repository). */
  dir: string;
  /** The installed package: `<dir>/node_modules/subagent-graph`, extracted from the tarball. */
  packageDir: string;
  /** The `.tgz` that was installed (shared by every project of the run: do not change it). */
  tarball: string;
  /** Writes `text` to `relativePath` in the project (folders made as needed); its full path. */
  write(relativePath: string, text: string): Promise<string>;
  /** Runs `command` in the project's folder with {@link consumerEnv} and waits for its end. */
  run(command: string, args?: readonly string[], options?: RunOptions): Promise<CommandResult>;
  /** `node <file> …args` with the running Node and no loader or `NODE_OPTIONS`: plain Node. */
  node(file: string, args?: readonly string[], options?: RunOptions): Promise<CommandResult>;
  /** `node_modules/.bin/<name> …args`, a bin as npm links it (the package's, or tsc's). */
  bin(name: string, args?: readonly string[], options?: RunOptions): Promise<CommandResult>;
  /**
   * The project's own `tsc --noEmit` with {@link CONSUMER_COMPILER_OPTIONS}, over `files`
   * (paths relative to {@link dir}) or, without them, every `.ts` file in the project;
   * `options` override compiler options for this check only (with `files`).
   * Diagnostics are in `stdout`; `code` is 0 when there are none.
   */
  typecheck(
    files?: readonly string[],
    options?: Readonly<Record<string, unknown>>,
  ): Promise<CommandResult>;
  /** Deletes the project's folder. */
  remove(): Promise<void>;
}

/** Options of {@link createConsumerProject}. */
export interface ConsumerProjectOptions {
  /** Part of the folder's name, to tell projects apart in the temp folder (default none). */
  name?: string;
  /**
   * Packages of the repository's node_modules the consumer has as its own (development)
   * dependencies, their bins linked too. Default: `typescript` and `@types/node`, what a
   * TypeScript service has; add `tsx` to run `.ts` files the way the README does.
   */
  devDependencies?: readonly string[];
}

/**
 * Makes a project that depends on the packed package, ready in about a second once the run's
 * tarball exists (the first call of a run packs it: a full `npm pack`, build included).
 *
 * The project's `node_modules` holds the tarball's contents as a real folder, like npm
 * installs it, and a symbolic link for each top-level package of the repository's production
 * dependency tree (read from package-lock.json; their own dependencies resolve from the links'
 * real paths). Nothing is installed from a registry and no native addon is rebuilt, and a
 * development dependency the package used at run time would be missing here, as for a user.
 * The project has `"type": "module"` and a `tsconfig.json` with {@link CONSUMER_COMPILER_OPTIONS}.
 *
 * Call {@link ConsumerProject.remove} when done (the tarball is cleaned up with the run).
 */
export async function createConsumerProject(
  options: ConsumerProjectOptions = {},
): Promise<ConsumerProject> {
  const { name = "", devDependencies = ["typescript", "@types/node"] } = options;
  const tarball = await packedTarball();
  const dir = await mkdtemp(join(tmpdir(), `subagent-graph-consumer-${name ? `${name}-` : ""}`));
  try {
    const modules = join(dir, "node_modules");
    const packageDir = join(modules, PACKAGE_NAME);
    await mkdir(packageDir, { recursive: true });
    await execFileAsync("tar", ["-xzf", tarball, "-C", packageDir, "--strip-components=1"]);
    for (const name of new Set([...productionPackages(), ...devDependencies])) {
      const source = join(ROOT, "node_modules", name);
      if (!existsSync(source)) {
        // An optional dependency for another platform (esbuild's, fsevents) is not installed.
        if (devDependencies.includes(name)) {
          throw new Error(
            `${name} is not in ${ROOT}node_modules: the consumer project links it from there, so install it in the repository first`,
          );
        }
        continue;
      }
      await mkdir(dirname(join(modules, name)), { recursive: true });
      await symlink(source, join(modules, name), "dir");
    }
    await linkBins(modules, PACKAGE_NAME, true);
    for (const name of devDependencies) await linkBins(modules, name, false);
    await writeJson(join(dir, "package.json"), {
      name: "consumer",
      private: true,
      type: "module",
      dependencies: { [PACKAGE_NAME]: `file:${tarball}` },
      devDependencies: Object.fromEntries(devDependencies.map((name) => [name, "*"])),
    });
    await writeJson(join(dir, "tsconfig.json"), {
      compilerOptions: CONSUMER_COMPILER_OPTIONS,
      include: ["**/*.ts"],
      exclude: ["node_modules", "out"],
    });
    return consumerProject(dir, packageDir, tarball);
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
}

/**
 * The environment a consumer's commands get: this process's, minus what would change their
 * outcome: a real model (`OPENAI_*`), our settings (`SUBAGENT_*`), the npm script that runs the
 * tests (`npm_*`), and loaders (`NODE_OPTIONS`: a `--import tsx` there would hide a package that
 * only works under tsx).
 */
export function consumerEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const kept = Object.entries(process.env).filter(
    ([key]) =>
      !key.startsWith("OPENAI_") &&
      !key.startsWith("SUBAGENT_") &&
      !key.toLowerCase().startsWith("npm_") &&
      key !== "NODE_OPTIONS",
  );
  return { ...Object.fromEntries(kept), ...extra };
}

function consumerProject(dir: string, packageDir: string, tarball: string): ConsumerProject {
  let checks = 0;
  const run = (command: string, args: readonly string[] = [], options: RunOptions = {}) =>
    runCommand(command, args, dir, consumerEnv(options.env));
  return {
    dir,
    packageDir,
    tarball,
    async write(relativePath, text) {
      const path = join(dir, relativePath);
      await mkdir(dirname(path), { recursive: true });
      await writeFile(path, text);
      return path;
    },
    run,
    node: (file, args = [], options) => run(process.execPath, [file, ...args], options),
    bin: (name, args = [], options) => run(join(dir, "node_modules", ".bin", name), args, options),
    async typecheck(files, options = {}) {
      let project = ".";
      if (files) {
        // A tsconfig naming the files: tsc given files on its command line ignores tsconfig.json.
        project = `tsconfig.check-${++checks}.json`;
        await writeJson(join(dir, project), {
          extends: "./tsconfig.json",
          compilerOptions: options,
          files,
          include: [],
        });
      }
      return run(join(dir, "node_modules", ".bin", "tsc"), ["--noEmit", "-p", project]);
    },
    remove: () => rm(dir, { recursive: true, force: true }),
  };
}

/** The packed tarball of this run (see {@link createConsumerProject}); packs on first use. */
let packing: Promise<string> | undefined;

/**
 * The path of the run's `.tgz`. In a vitest run, test files (each in its own worker) share the
 * folder `test/support/pack-setup.ts` provides: the first process to create its `lock` folder
 * packs (usually vitest's own, ahead of the files: see {@link packAhead}), the others wait for
 * its `result.json`. Outside vitest the process packs on its own.
 */
export function packedTarball(): Promise<string> {
  packing ??= (async () => {
    const provided = providedPackDir();
    if (provided !== undefined) return packInto(provided);
    const own = await mkdtemp(join(tmpdir(), "subagent-graph-pack-"));
    process.once("exit", () => rmSync(own, { recursive: true, force: true }));
    return packInto(own);
  })();
  return packing;
}

/**
 * Starts packing into the run's `packDir` now, in this process, without waiting: vitest's main
 * process calls it when the run has files that will ask for the tarball
 * (`test/support/sequencer.ts`), so the build runs beside the first files instead of inside
 * the first consumer file while the second waits. A failure is left in `result.json`, where
 * those files read it.
 */
export function packAhead(packDir: string): void {
  packInto(packDir).catch(() => {});
}

/** Packs into `packDir` unless another process holds its lock, then waits for that one. */
async function packInto(packDir: string): Promise<string> {
  const lock = join(packDir, "lock");
  const resultFile = join(packDir, "result.json");
  try {
    await mkdir(lock);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    return awaitPackResult(resultFile, lock);
  }
  await writeFile(join(lock, "pid"), String(process.pid));
  let result: { tarball: string } | { error: string };
  try {
    result = { tarball: await pack(packDir) };
  } catch (error) {
    result = { error: (error as Error).message };
  }
  await writeJson(`${resultFile}.${process.pid}`, result);
  await rename(`${resultFile}.${process.pid}`, resultFile);
  if ("error" in result) throw new Error(result.error);
  return result.tarball;
}

function providedPackDir(): string | undefined {
  try {
    return inject("consumerPackDir");
  } catch {
    // Not inside a vitest worker (a script importing this module): pack for this process.
    return undefined;
  }
}

/** Waits for the process holding `lock` to write `resultFile`, or fails when it died first. */
async function awaitPackResult(resultFile: string, lock: string): Promise<string> {
  for (;;) {
    if (existsSync(resultFile)) {
      const result = JSON.parse(await readFile(resultFile, "utf8")) as
        | { tarball: string }
        | { error: string };
      if ("error" in result)
        throw new Error(`packing failed in another test file: ${result.error}`);
      return result.tarball;
    }
    const pid = Number(await readFile(join(lock, "pid"), "utf8").catch(() => ""));
    if (pid > 0 && !isAlive(pid) && !existsSync(resultFile)) {
      throw new Error(`the process packing the package (pid ${pid}) ended without a result`);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/**
 * `npm pack` (its `prepack` builds `dist/` and the console) in a copy of the working tree, so
 * the repository's own `dist/` and `web/dist` (served by other tests meanwhile) are left alone.
 * The copy holds the files git would commit (tracked and new, not ignored) as they are now, and
 * a link to the repository's node_modules for the build tools.
 */
async function pack(packDir: string): Promise<string> {
  const source = join(packDir, "source");
  const { stdout } = await execFileAsync(
    "git",
    ["ls-files", "-z", "--cached", "--others", "--exclude-standard"],
    { cwd: ROOT, maxBuffer: 64 * 1024 * 1024 },
  );
  for (const file of stdout.split("\0")) {
    // The build's node_modules is linked below (git lists a node_modules that is itself a
    // link, as in a worktree, because `node_modules/` in .gitignore matches folders only).
    if (file === "" || file === "node_modules") continue;
    // A tracked file deleted in the working tree is not part of it.
    const stat = await lstat(join(ROOT, file)).catch(() => undefined);
    if (!stat) continue;
    await mkdir(dirname(join(source, file)), { recursive: true });
    if (stat.isSymbolicLink()) {
      await symlink(await readlink(join(ROOT, file)), join(source, file));
    } else {
      await copyFile(join(ROOT, file), join(source, file));
    }
  }
  await symlink(join(ROOT, "node_modules"), join(source, "node_modules"), "dir");
  const packed = await runCommand(
    "npm",
    ["pack", "--pack-destination", packDir],
    source,
    consumerEnv(),
  );
  const tarballs = (await readdir(packDir)).filter((name) => name.endsWith(".tgz"));
  if (packed.code !== 0 || tarballs.length !== 1 || tarballs[0] === undefined) {
    throw new Error(
      `npm pack failed (exit ${packed.code}, tarballs ${JSON.stringify(tarballs)}):\n${packed.stdout}\n${packed.stderr}`,
    );
  }
  await rm(source, { recursive: true, force: true });
  return join(packDir, tarballs[0]);
}

/**
 * Top-level packages of the repository's production dependency tree: package-lock.json marks
 * every package only development dependencies need with `dev: true`.
 */
function productionPackages(): string[] {
  const lock = JSON.parse(readFileSync(join(ROOT, "package-lock.json"), "utf8")) as {
    packages: Record<string, { dev?: boolean; link?: boolean }>;
  };
  const names: string[] = [];
  for (const [path, entry] of Object.entries(lock.packages)) {
    if (!path.startsWith("node_modules/") || entry.dev) continue;
    const name = path.slice("node_modules/".length);
    if (!name.includes("/node_modules/")) names.push(name);
  }
  return names;
}

/**
 * Links the bins `name` declares into `node_modules/.bin`, as npm does on install (which also
 * makes them executable: a tarball keeps the files' modes, and `tsc` emits without the x bit).
 */
async function linkBins(modules: string, name: string, makeExecutable: boolean): Promise<void> {
  const manifest = JSON.parse(await readFile(join(modules, name, "package.json"), "utf8")) as {
    name: string;
    bin?: string | Record<string, string>;
  };
  const bins =
    typeof manifest.bin === "string"
      ? { [manifest.name.replace(/^@[^/]+\//, "")]: manifest.bin }
      : (manifest.bin ?? {});
  const binDir = join(modules, ".bin");
  await mkdir(binDir, { recursive: true });
  for (const [bin, target] of Object.entries(bins)) {
    const path = join(modules, name, target);
    if (makeExecutable) await chmod(path, 0o755);
    await symlink(relative(binDir, path), join(binDir, bin));
  }
}

function runCommand(
  command: string,
  args: readonly string[],
  cwd: string,
  env: NodeJS.ProcessEnv,
): Promise<CommandResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (text: string) => {
      stdout += text;
    });
    child.stderr.setEncoding("utf8").on("data", (text: string) => {
      stderr += text;
    });
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

async function writeJson(path: string, value: unknown): Promise<void> {
  await writeFile(path, `${JSON.stringify(value, null, 2)}\n`);
}
