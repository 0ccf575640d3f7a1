/**
 * `npm run bench [-- --quick] [-- --only dispatch,parallel] [-- --check]`: runs the scenarios,
 * each in a fresh process of its own (so one scenario's heap, JIT state or RSS never colours the
 * next), prints their tables and the targets, and writes `bench/results/latest.json`. With
 * `--check` it exits 1 when a target of the scenarios run is missed (a re-check for anyone's
 * machine; never part of `npm test`, which asserts no timing).
 */
import { fork } from "node:child_process";
import { setMaxListeners } from "node:events";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { cpus, totalmem } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { stopPostgres } from "./lib/postgres.js";
import type { BenchOptions, Scenario, ScenarioResult, TargetCheck } from "./lib/scenario.js";
import { renderTable } from "./lib/table.js";
import { msSince, nowNs } from "./lib/timing.js";
import { approvalsScenario } from "./scenarios/approvals.js";
import { backgroundScenario } from "./scenarios/background.js";
import { buildScenario } from "./scenarios/build.js";
import { checkpointScenario } from "./scenarios/checkpoints.js";
import { cpuScenario } from "./scenarios/cpu.js";
import { dispatchScenario } from "./scenarios/dispatch.js";
import { fleetScenario } from "./scenarios/fleet.js";
import { knowledgeScenario } from "./scenarios/knowledge.js";
import { loadScenario } from "./scenarios/load.js";
import { parallelScenario } from "./scenarios/parallel.js";
import { promptScenario } from "./scenarios/prompt.js";
import { snapshotScenario } from "./scenarios/snapshots.js";
import { streamingScenario } from "./scenarios/streaming.js";

const SCENARIOS: readonly Scenario[] = [
  dispatchScenario,
  parallelScenario,
  checkpointScenario,
  snapshotScenario,
  loadScenario,
  fleetScenario,
  buildScenario,
  promptScenario,
  knowledgeScenario,
  approvalsScenario,
  streamingScenario,
  backgroundScenario,
  cpuScenario,
];

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");

/** Versions of the packages the numbers depend on. */
const PACKAGES = [
  "langchain",
  "@langchain/core",
  "@langchain/langgraph",
  "@langchain/langgraph-checkpoint",
  "@langchain/langgraph-checkpoint-sqlite",
  "@langchain/langgraph-checkpoint-postgres",
  "deepagents",
  "@langchain/langgraph-sdk",
  "@langchain/langgraph-api",
  "better-sqlite3",
  "pg",
  "fastify",
];

interface Args {
  quick: boolean;
  /** `--saver sqlite|postgres`: our server's store where a scenario runs `serve` (cpu). */
  saver: BenchOptions["saver"];
  /** `--fleet <n>`: our `serve` processes on one PostgreSQL database (cpu; needs postgres). */
  fleet: number;
  /** Exit non-zero when a target is missed. */
  check: boolean;
  only: Set<string> | undefined;
  /** Internal: run this one scenario and send its result to the parent process. */
  scenario: string | undefined;
}

/** What a scenario process sends back. */
type ScenarioMessage =
  | { ok: true; result: ScenarioResult; seconds: number }
  | { ok: false; error: string };

const SCENARIO_FLAG = "--scenario-process";

function parseArgs(argv: string[]): Args {
  const args: Args = {
    quick: false,
    saver: "sqlite",
    fleet: 1,
    check: false,
    only: undefined,
    scenario: undefined,
  };
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i];
    if (arg === "--quick") args.quick = true;
    else if (arg === "--saver") {
      const saver = argv[++i];
      if (saver !== "sqlite" && saver !== "postgres") {
        usage(`--saver: "${saver ?? ""}" is not sqlite or postgres`);
      }
      args.saver = saver;
    } else if (arg === "--fleet") {
      const value = argv[++i] ?? "";
      args.fleet = Number(value);
      if (!/^\d+$/.test(value) || args.fleet < 1) usage(`--fleet: "${value}" is not a count ≥ 1`);
    } else if (arg === "--check") args.check = true;
    else if (arg === SCENARIO_FLAG) args.scenario = argv[++i];
    else if (arg === "--only" || arg?.startsWith("--only=")) {
      const value = arg === "--only" ? argv[++i] : arg.slice("--only=".length);
      const names = (value ?? "").split(",").filter(Boolean);
      const unknown = names.filter((name) => !SCENARIOS.some((s) => s.name === name));
      if (names.length === 0 || unknown.length > 0) {
        usage(`unknown scenario(s) ${unknown.join(", ") || "(none given)"}`);
      }
      args.only = new Set(names);
    } else if (arg === "--help" || arg === "-h") usage();
    else usage(`unknown option ${arg}`);
  }
  return args;
}

function usage(error?: string): never {
  if (error) console.error(`bench: ${error}`);
  console.error(
    `usage: npm run bench -- [--quick] [--check] [--saver sqlite|postgres] [--fleet <n>] [--only ${SCENARIOS.map((s) => s.name).join("|")}[,…]]`,
  );
  process.exit(error ? 2 : 0);
}

function packageVersion(name: string): string {
  try {
    const json = JSON.parse(
      readFileSync(join(ROOT, "node_modules", name, "package.json"), "utf8"),
    ) as { version?: string };
    return json.version ?? "?";
  } catch {
    return "not installed";
  }
}

function machine() {
  const cpu = cpus();
  return {
    node: process.version,
    platform: `${process.platform} ${process.arch}`,
    cpus: cpu.length,
    cpuModel: cpu[0]?.model ?? "?",
    memoryGiB: Math.round((totalmem() / 1024 ** 3) * 10) / 10,
    exposeGc: typeof (globalThis as { gc?: unknown }).gc === "function",
  };
}

function renderTargets(checks: TargetCheck[]): string {
  const mark = (met: boolean | undefined) => (met === undefined ? "n/a " : met ? "MET " : "MISS");
  return [
    "### Targets",
    "",
    ...checks.map((check) => `- ${mark(check.met)} ${check.target}: ${check.detail}`),
  ].join("\n");
}

/** In a scenario process: runs one scenario and sends its result to the parent. */
async function scenarioProcess(name: string, options: BenchOptions): Promise<void> {
  // LangGraph's tools node adds one abort listener per parallel tool call to the run's signal
  // (ours and Deep Agents' alike); with K = 16 Node would warn about a possible leak.
  setMaxListeners(64);
  const scenario = SCENARIOS.find((candidate) => candidate.name === name);
  let message: ScenarioMessage;
  try {
    if (!scenario) throw new Error(`no scenario ${name}`);
    const start = nowNs();
    const result = await scenario.run(options);
    message = { ok: true, result, seconds: msSince(start) / 1000 };
  } catch (error) {
    message = {
      ok: false,
      error: error instanceof Error ? (error.stack ?? error.message) : String(error),
    };
  } finally {
    stopPostgres();
  }
  await new Promise<void>((resolve) => process.send?.(message, () => resolve()));
  // Whatever a library left scheduled (idle pool timers…) must not keep the bench waiting.
  process.exit(message.ok ? 0 : 1);
}

/** Runs a scenario in a fresh process (same node flags) and waits for its result. */
function runInProcess(name: string, options: BenchOptions): Promise<ScenarioMessage> {
  return new Promise((resolve) => {
    const child = fork(
      fileURLToPath(import.meta.url),
      [
        SCENARIO_FLAG,
        name,
        ...(options.quick ? ["--quick"] : []),
        ...["--saver", options.saver, "--fleet", String(options.fleet)],
      ],
      { stdio: ["ignore", "inherit", "inherit", "ipc"] },
    );
    let message: ScenarioMessage | undefined;
    child.on("message", (received) => {
      message = received as ScenarioMessage;
    });
    child.on("exit", (code, signal) => {
      resolve(
        message ?? {
          ok: false,
          error: `the scenario process exited (${signal ?? code}) without a result`,
        },
      );
    });
  });
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  // A fleet shares one queue on PostgreSQL: SQLite's store is one process's.
  if (args.fleet > 1 && args.saver !== "postgres") usage("--fleet needs --saver postgres");
  const options: BenchOptions = { quick: args.quick, saver: args.saver, fleet: args.fleet };
  if (args.scenario !== undefined) {
    await scenarioProcess(args.scenario, options);
    return;
  }
  const selected = SCENARIOS.filter((scenario) => !args.only || args.only.has(scenario.name));
  const meta = {
    date: new Date().toISOString(),
    mode: args.quick ? "quick" : "full",
    saver: args.saver,
    fleet: args.fleet,
    machine: machine(),
    packages: Object.fromEntries(PACKAGES.map((name) => [name, packageVersion(name)])),
  };
  console.log(
    `subagent-graph bench (${meta.mode}) — Node ${meta.machine.node}, ${meta.machine.cpus} × ${meta.machine.cpuModel}`,
  );
  console.log(
    Object.entries(meta.packages)
      .map(([name, version]) => `${name} ${version}`)
      .join(", "),
  );
  const started = nowNs();
  const results: Record<string, ScenarioResult & { seconds: number }> = {};
  const allTargets: TargetCheck[] = [];
  let failed = false;
  for (const scenario of selected) {
    // The heading names the scenario as bench/README.md does ("Scenario: dispatch").
    console.log(`\n## Scenario: ${scenario.name} — ${scenario.title}\n`);
    const message = await runInProcess(scenario.name, options);
    if (!message.ok) {
      failed = true;
      console.error(`scenario ${scenario.name} failed: ${message.error}`);
      continue;
    }
    results[scenario.name] = { ...message.result, seconds: message.seconds };
    for (const table of message.result.tables) console.log(`${renderTable(table)}\n`);
    console.log(`(${message.seconds.toFixed(1)} s)`);
    allTargets.push(...message.result.targets);
  }
  const totalSeconds = msSince(started) / 1000;
  console.log(`\n${renderTargets(allTargets)}\n`);
  console.log(`total ${totalSeconds.toFixed(1)} s`);
  const out = join(ROOT, "bench", "results", "latest.json");
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(
    out,
    `${JSON.stringify({ ...meta, totalSeconds, targets: allTargets, scenarios: results }, null, 2)}\n`,
  );
  console.log(`wrote ${out}`);
  if (failed) process.exitCode = 1;
  const missed = allTargets.filter((check) => check.met === false);
  if (args.check && missed.length > 0) {
    console.error(`bench --check: ${missed.length} of ${allTargets.length} targets missed:`);
    for (const check of missed) console.error(`- ${check.target}: ${check.detail}`);
    process.exitCode = 1;
  } else if (args.check && !failed) {
    console.log(`bench --check: every measured target met (${allTargets.length})`);
  }
}

await main();
