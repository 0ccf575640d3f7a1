import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type ConsumerProject,
  consumerEnv,
  createConsumerProject,
} from "../support/consumer-project.js";
import { until } from "../support/until.js";

// The package as a Node service installs it (`npm pack`, the tarball in another project's
// node_modules): plain `node` on its ESM, a strict `tsc` on its declarations, its bin.

/**
 * A main agent delegating to a subagent on the offline model, with nothing but the installed
 * package and plain Node. It prints what the test checks, as JSON.
 */
const DELEGATING_TURN = `
import { createRuntime, OFFLINE_LABEL } from "subagent-graph";
import { ScriptedChatModel } from "subagent-graph/testing";

const runtime = await createRuntime({ dataDir: process.argv[2] });
try {
  await runtime.agents.create("alice", {
    slug: "researcher",
    name: "Researcher",
    description: "Gathers facts",
    backend_id: "SubAgentBackend",
    config_json: { context: { system_prompt: "You are a researcher." } },
  });
  await runtime.agents.create("alice", {
    slug: "assistant",
    name: "Assistant",
    is_default: true,
    config_json: { context: { subagents: ["researcher"] } },
  });
  const result = await runtime.run({ uid: "alice", input: "What limits battery life in winter?" });
  const children = await Promise.all(
    result.subagentRuns.map((run) => runtime.childThread("alice", run.child_thread_id)),
  );
  console.log(
    JSON.stringify({
      resolved: import.meta.resolve("subagent-graph"),
      testingResolved: import.meta.resolve("subagent-graph/testing"),
      scriptedIsAClass: typeof ScriptedChatModel === "function",
      offlineLabel: OFFLINE_LABEL,
      threadId: result.threadId,
      output: result.output,
      runs: result.subagentRuns,
      childMessages: children.map((child) => child.messages.length),
    }),
  );
} finally {
  await runtime.close();
}
`;

/**
 * What a TypeScript service writes: the runtime, its stream's events narrowed on `type`, a
 * scripted model from `subagent-graph/testing`. The `@ts-expect-error` lines fail the check if
 * the types were loose (an `any` accepts everything).
 */
const CONSUMER_TS = `
import {
  createRuntime,
  ErrorCode,
  type RunEvent,
  type Runtime,
  type SubagentRun,
  SubagentGraphError,
} from "subagent-graph";
import { ScriptedChatModel, type ScriptStep } from "subagent-graph/testing";

const steps: ScriptStep[] = [
  {
    reply: {
      toolCalls: [{ name: "task", args: { description: "Find X", subagent_type: "researcher" } }],
    },
  },
  { reply: { text: "X is 42." } },
];
const main = new ScriptedChatModel("main", steps);
const researcher = new ScriptedChatModel("researcher", [{ reply: { text: "X is 42." } }]);

export async function ask(question: string): Promise<string> {
  const runtime: Runtime = await createRuntime({
    checkpointer: "memory",
    database: ":memory:",
    models: { "scripted:main": main, "scripted:researcher": researcher },
  });
  try {
    await runtime.agents.create("alice", {
      slug: "researcher",
      name: "Researcher",
      backend_id: "SubAgentBackend",
      config_json: { context: { model: "scripted:researcher" } },
    });
    let answer = "";
    const finished: SubagentRun[] = [];
    for await (const event of runtime.stream({ uid: "alice", input: question })) {
      switch (event.type) {
        case "token":
          if (event.childThreadId === undefined) answer += event.text;
          break;
        case "subagent_started": {
          const child: string = event.child_thread_id;
          console.log(\`\${event.subagent_type} started on \${child}\`);
          break;
        }
        case "subagent_finished":
          finished.push(event.run);
          break;
        case "run_finished":
          answer = event.result.output;
          break;
        default:
          break;
      }
    }
    const statuses: ("completed" | "failed" | "cancelled" | "timeout" | "waiting")[] = finished.map(
      (run) => run.status,
    );
    console.log(statuses);
    main.assertComplete();
    return answer;
  } catch (error) {
    if (SubagentGraphError.isInstance(error) && error.code === ErrorCode.NotFound) return "";
    throw error;
  } finally {
    await runtime.close();
  }
}

export function describeEvent(event: RunEvent): string {
  // @ts-expect-error: "tokens" is not one of the event types.
  if (event.type === "tokens") return "never";
  if (event.type === "run_finished") {
    // @ts-expect-error: a run_finished event has no text.
    return event.text;
  }
  return event.type;
}
`;

describe("the packed package in another project", { timeout: 300_000 }, () => {
  let project: ConsumerProject;
  let dataDir = "";
  beforeAll(async () => {
    project = await createConsumerProject();
    dataDir = await mkdtemp(join(tmpdir(), "consumer-data-"));
  }, 600_000);
  afterAll(async () => {
    await project?.remove();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it("runs a delegating turn under plain node, no key, on the offline model", async () => {
    await project.write("delegate.mjs", DELEGATING_TURN);
    const result = await project.node("delegate.mjs", [join(dataDir, "library")]);
    expect(result.code, result.stderr).toBe(0);
    const report = JSON.parse(result.stdout.trim().split("\n").at(-1) ?? "") as {
      resolved: string;
      testingResolved: string;
      scriptedIsAClass: boolean;
      offlineLabel: string;
      threadId: string;
      output: string;
      runs: {
        subagent_type: string;
        status: string;
        child_thread_id: string;
        result_preview: string;
      }[];
      childMessages: number[];
    };
    // The compiled files of the installed copy, not the repository's sources.
    expect(report.resolved).toBe(`file://${project.packageDir}/dist/index.js`);
    expect(report.testingResolved).toBe(`file://${project.packageDir}/dist/testing.js`);
    expect(report.scriptedIsAClass).toBe(true);
    expect(report.output.startsWith(report.offlineLabel)).toBe(true);
    expect(report.runs).toHaveLength(1);
    const [run] = report.runs;
    expect(run?.subagent_type).toBe("researcher");
    expect(run?.status).toBe("completed");
    expect(run?.child_thread_id).toMatch(
      new RegExp(`^${report.threadId}_sub_researcher_[0-9a-f]{8}$`),
    );
    expect(run?.result_preview.startsWith(report.offlineLabel)).toBe(true);
    // The child's own thread holds its conversation: the task description and its answer.
    expect(report.childMessages).toHaveLength(1);
    expect(report.childMessages[0]).toBeGreaterThanOrEqual(2);
  });

  it("type-checks a consumer's strict TypeScript (lib ES2022, declaration files checked)", async () => {
    await project.write("consumer.ts", CONSUMER_TS);
    const result = await project.typecheck();
    expect(result.stdout + result.stderr).toBe("");
    expect(result.code).toBe(0);
  });

  it("ships the compiled library, its declarations and the console's build, and no sources", async () => {
    const files = (await readdir(project.packageDir, { recursive: true, withFileTypes: true }))
      .filter((entry) => entry.isFile())
      .map((entry) => relative(project.packageDir, join(entry.parentPath, entry.name)));
    for (const needed of [
      "package.json",
      "README.md",
      "dist/index.js",
      "dist/index.d.ts",
      "dist/testing.js",
      "dist/testing.d.ts",
      "dist/cli/main.js",
      "web/dist/index.html",
    ]) {
      expect(files).toContain(needed);
    }
    const outside = files.filter(
      (file) =>
        !file.startsWith("dist/") &&
        !file.startsWith("web/dist/") &&
        !["package.json", "README.md"].includes(file),
    );
    expect(outside).toEqual([]);
    // TypeScript sources, tests, benchmarks, the console's sources and source maps stay home.
    expect(
      files.filter((file) => /(?<!\.d)\.ts$|\.map$|^(test|bench|web\/src)\//.test(file)),
    ).toEqual([]);
  });

  it("installs the subagent-graph bin", async () => {
    const result = await project.bin("subagent-graph", ["--help"]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain("serve");
    expect(result.stdout).toContain("chat [question]");
    // The help speaks of the bin as the consumer has it, not of the repository's tsx.
    expect(result.stdout).toContain("Usage: subagent-graph <command>");
    expect(result.stdout).not.toContain("tsx cli/main.ts");
  });

  it("says studio needs a clone instead of failing inside the dev server", async () => {
    const result = await project.bin("subagent-graph", ["studio", "--port", "0"]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("run it in a clone of the repository");
  });

  it("serves the API and the console it ships from the installed bin", async () => {
    const served = spawnServe(project, join(dataDir, "serve"));
    try {
      await until(
        () => served.ended() || /web console: (http:\/\/\S+)\//.test(served.output()),
        60_000,
      );
      expect(served.ended(), served.output()).toBe(false);
      const address = /web console: (http:\/\/\S+)\//.exec(served.output())?.[1];
      // No Vite in a consumer's node_modules: nothing was built, the shipped build is served.
      expect(served.output()).not.toContain("building the web console");
      const page = await fetch(`${address}/`);
      expect(page.status).toBe(200);
      const html = await page.text();
      const script = /<script[^>]+src="(\/assets\/[^"]+\.js)"/.exec(html)?.[1];
      expect(script).toBeDefined();
      const asset = await fetch(`${address}${script}`);
      expect(asset.status).toBe(200);
      expect((await asset.text()).length).toBeGreaterThan(1000);
      expect((await fetch(`${address}/ok`)).status).toBe(200);
    } finally {
      served.child.kill("SIGTERM");
      await served.exited;
    }
  });
});

interface Served {
  child: ChildProcess;
  output: () => string;
  /** True once the process has exited or could not start. */
  ended: () => boolean;
  exited: Promise<unknown>;
}

function spawnServe(project: ConsumerProject, data: string): Served {
  const child = spawn(
    join(project.dir, "node_modules", ".bin", "subagent-graph"),
    ["serve", "--port", "0", "--data", data],
    { cwd: project.dir, env: consumerEnv(), stdio: ["ignore", "pipe", "pipe"] },
  );
  let output = "";
  const append = (text: string) => {
    output += text;
  };
  child.stdout?.setEncoding("utf8").on("data", append);
  child.stderr?.setEncoding("utf8").on("data", append);
  let ended = false;
  const exited = new Promise((resolve) => {
    child.on("exit", resolve);
    child.on("error", (error) => {
      append(`${error.message}\n`);
      resolve(error);
    });
  }).finally(() => {
    ended = true;
  });
  return { child, output: () => output, ended: () => ended, exited };
}
