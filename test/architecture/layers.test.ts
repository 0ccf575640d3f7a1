import { execFile } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";

// The import-direction check (`npm run layers`) runs on the real tree in `npm test`; these tests
// prove it can fail: the same command and config, run on small trees laid out like ours.

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const CONFIG = ".dependency-cruiser.mjs";

/** The `layers` script's arguments, after its `depcruise` command. */
function layersArgs(): string[] {
  const scripts = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).scripts as Record<
    string,
    string
  >;
  const [command, ...args] = (scripts.layers ?? "").split(/\s+/);
  expect(command).toBe("depcruise");
  expect(args).toContain(CONFIG);
  return args;
}

/** The depcruise command of the installed dependency-cruiser (its package.json `bin`). */
function depcruiseBin(): string {
  const packageDir = join(ROOT, "node_modules", "dependency-cruiser");
  const { bin } = JSON.parse(readFileSync(join(packageDir, "package.json"), "utf8")) as {
    bin: Record<string, string>;
  };
  return join(packageDir, bin.depcruise ?? "");
}

const made: string[] = [];
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

/** A tree with our config and tsconfig and the given files; runs the `layers` script in it. */
async function layersOn(files: Record<string, string>): Promise<{ code: number; output: string }> {
  const dir = mkdtempSync(join(tmpdir(), "layers-"));
  made.push(dir);
  copyFileSync(join(ROOT, CONFIG), join(dir, CONFIG));
  copyFileSync(join(ROOT, "tsconfig.json"), join(dir, "tsconfig.json"));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return new Promise((done) => {
    execFile(
      process.execPath,
      [depcruiseBin(), ...layersArgs()],
      { cwd: dir, env: { ...process.env, NO_COLOR: "1", FORCE_COLOR: "0" } },
      (error, out, err) => {
        const code = error ? (typeof error.code === "number" ? error.code : 1) : 0;
        done({ code, output: `${out}${err}` });
      },
    );
  });
}

/** Files every tree has, importing only downwards. */
const CLEAN: Record<string, string> = {
  "errors.ts": "export class AppError extends Error {}\n",
  "run-context.ts": 'import { AppError } from "./errors.js";\nexport const context = AppError;\n',
  "util/text.ts":
    'import { AppError } from "../errors.js";\nexport const fail = () => new AppError();\n',
  "store/rows.ts": 'import { fail } from "../util/text.js";\nexport const row = fail;\n',
  "agents/schema.ts": 'import { row } from "../store/rows.js";\nexport const schema = row;\n',
  "middleware/task.ts":
    'import { schema } from "../agents/schema.js";\nexport const task = schema;\n',
  "backends/chat.ts":
    'import { schema } from "../agents/schema.js";\nexport const chat = schema;\n',
  "graphs/graph.ts":
    'import { chat } from "../backends/chat.js";\nimport { task } from "../middleware/task.js";\nexport const graph = [chat, task];\nexport interface Graph { id: string }\n',
  "threads/state.ts": 'import { graph } from "../graphs/graph.js";\nexport const state = graph;\n',
  "runs/run.ts": 'import { state } from "../threads/state.js";\nexport const run = state;\n',
  "runtime.ts": 'import { run } from "./runs/run.js";\nexport const runtime = run;\n',
  "server/protocol/wire.ts": "export const wire = 1;\n",
  "server/live-runs/registry.ts":
    'import { runtime } from "../../runtime.js";\nimport { wire } from "../protocol/wire.js";\nexport const registry = [runtime, wire];\n',
  "server/app.ts":
    'import { registry } from "./live-runs/registry.js";\nexport const app = registry;\n',
  "cli/main.ts": 'import { app } from "../server/app.js";\nexport const main = app;\n',
};

// Each case starts dependency-cruiser (a few seconds, more on a loaded machine).
describe.concurrent("the import-direction check (npm run layers)", { timeout: 120_000 }, () => {
  it("passes a tree whose imports all point down the floors", async () => {
    const { code, output } = await layersOn(CLEAN);
    expect(output).toContain("no dependency violations found");
    expect(code).toBe(0);
  });

  it("fails on an upward import, naming the rule and both files", async () => {
    const { code, output } = await layersOn({
      ...CLEAN,
      "util/a.ts": 'import { run } from "../runs/run.js";\nexport const a = run;\n',
    });
    expect(code).not.toBe(0);
    expect(output).toContain("error leaf-imports-no-higher-floor: util/a.ts → runs/run.ts");
    // The folder-cycle rule sees the same import close a loop util → runs → … → util.
    expect(output).toMatch(/x \d+ dependency violations/);
  });

  it("counts type-only imports", async () => {
    const { code, output } = await layersOn({
      ...CLEAN,
      "store/typed.ts":
        'import type { Graph } from "../graphs/graph.js";\nexport type T = Graph;\n',
    });
    expect(code).not.toBe(0);
    expect(output).toContain(
      "error domain-imports-no-higher-floor: store/typed.ts → graphs/graph.ts",
    );
  });

  it("keeps errors.ts free of imports, the leaves and backends/ and middleware/ apart, server/ in its floors, folders acyclic", async () => {
    const { code, output } = await layersOn({
      ...CLEAN,
      "errors.ts": 'import "./util/text.js";\nexport class AppError extends Error {}\n',
      "backends/chat.ts":
        'import { task } from "../middleware/task.js";\nexport const chat = task;\n',
      "server/protocol/wire.ts":
        'import type { registry } from "../live-runs/registry.js";\nexport const wire = 1;\nexport type R = typeof registry;\n',
      "util/context.ts":
        'import { context } from "../run-context.js";\nexport const c = context;\n',
      "store/back.ts":
        'import { schema } from "../agents/schema.js";\nexport const back = schema;\n',
    });
    expect(code).not.toBe(0);
    for (const violation of [
      "error errors-imports-nothing: errors.ts → util/text.ts",
      "error leaf-parts-apart: util/context.ts → run-context.ts",
      "error backends-and-middleware-apart: backends/chat.ts → middleware/task.ts",
      "error server-protocol-imports-no-higher-server-floor: server/protocol/wire.ts → server/live-runs/registry.ts",
      "error domain-folders-not-circular: store → ",
    ]) {
      expect(output).toContain(violation);
    }
  });
});
