import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seedDemo } from "../../agents/demo.js";
import { createServer, type SubagentGraphServer } from "../../server/app.js";
import { type ConsumerProject, createConsumerProject } from "../support/consumer-project.js";
import { codeBlocks, isTypeScript, shellCommands } from "../support/readme-blocks.js";
import { makeRuntime, type RuntimeFixture } from "../support/runtime-fixture.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const README = readFileSync(join(ROOT, "README.md"), "utf8");
const BLOCKS = codeBlocks(README);
const TS_BLOCKS = BLOCKS.filter(isTypeScript);
/** The blocks that talk to a running server through `@langchain/langgraph-sdk`. */
const SDK_BLOCKS = ["sdk.ts", "sdk-approvals.ts", "sdk-thread-stream.ts"];

/**
 * Runs a saved README block as its reader would (`npx tsx <file>`), in the consumer project,
 * with no key and none of our settings; its stdout.
 */
async function runBlock(
  project: ConsumerProject,
  file: string,
  env: NodeJS.ProcessEnv = {},
): Promise<string> {
  const result = await project.bin("tsx", [file], { env });
  if (result.code !== 0) {
    throw new Error(
      `README block ${file} exited ${result.code}:\n${result.stdout}\n${result.stderr}`,
    );
  }
  return result.stdout;
}

describe("the README's code, pasted as written", () => {
  it("names the file of every TypeScript block, once", () => {
    expect(TS_BLOCKS.length).toBeGreaterThanOrEqual(7);
    const unnamed = TS_BLOCKS.filter((block) => !block.file?.endsWith(".ts"));
    expect(unnamed.map((block) => `line ${block.line}`)).toEqual([]);
    const names = TS_BLOCKS.map((block) => block.file);
    expect(new Set(names).size).toBe(names.length);
  });

  it("uses only npm scripts that exist and binaries a fresh install has, never a bare tsx", () => {
    const scripts = Object.keys(
      (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { scripts: object }).scripts,
    );
    const problems: string[] = [];
    for (const block of BLOCKS.filter((b) => b.language === "sh")) {
      for (const command of shellCommands(block)) {
        for (const step of command.split(/&&|;|\|/).map((part) => part.trim())) {
          const words = step.split(/\s+/).filter((word) => !/^[A-Z_]+=/.test(word));
          const [program, first] = words;
          if (program === "tsx") problems.push(`line ${block.line}: bare tsx in "${step}"`);
          if (program === "npm" && first === "run" && !scripts.includes(words[2] ?? "")) {
            problems.push(`line ${block.line}: no npm script "${words[2]}" in "${step}"`);
          }
          if (program === "npx" && first && !first.startsWith("-")) {
            const bin = first.split("@")[0] === "" ? first : first.split("@")[0];
            if (
              !first.startsWith("@") &&
              !existsSync(join(ROOT, "node_modules", ".bin", bin ?? ""))
            ) {
              problems.push(`line ${block.line}: npx ${first} is not installed by npm ci`);
            }
          }
        }
      }
    }
    expect(problems).toEqual([]);
  });

  describe("in a project that installed the packed package", { timeout: 600_000 }, () => {
    let project: ConsumerProject;

    beforeAll(async () => {
      project = await createConsumerProject({
        name: "readme",
        // What the README's reader installs besides the package: TypeScript, tsx to run the
        // blocks, and the SDK for the HTTP example.
        devDependencies: ["typescript", "@types/node", "tsx", "@langchain/langgraph-sdk"],
      });
      for (const block of TS_BLOCKS) {
        if (block.file) await project.write(block.file, block.code);
      }
    }, 600_000);

    afterAll(async () => {
      await project?.remove();
    });

    it("typechecks every TypeScript block under a consumer's strict tsconfig", async () => {
      const ours = TS_BLOCKS.flatMap((block) =>
        block.file && !SDK_BLOCKS.includes(block.file) ? [block.file] : [],
      );
      // The blocks themselves, strictly. The package's declaration files under this same strict
      // config are test/package/consumer.int.test.ts's check: tsc reading them again here, twice,
      // cost 15-25 s and could find nothing more.
      const check = await project.typecheck(ours, { skipLibCheck: true });
      expect(check.stdout).toBe("");
      expect(check.code).toBe(0);
      // The SDK's own declarations use DOM's fetch types (HeadersInit), so a project that uses
      // it adds "DOM" to lib, as the README says; everything else stays strict.
      await project.write(
        "tsconfig.sdk.json",
        JSON.stringify({
          extends: "./tsconfig.json",
          compilerOptions: { lib: ["ES2022", "DOM"], noEmit: true, skipLibCheck: true },
          include: SDK_BLOCKS,
        }),
      );
      const sdk = await project.bin("tsc", ["-p", "tsconfig.sdk.json"]);
      expect(sdk.stdout).toBe("");
      expect(sdk.code).toBe(0);
    });

    it("library.ts: delegates on the offline model, streams, reads the child, and runs again", async () => {
      for (const attempt of [1, 2]) {
        const out = await runBlock(project, "library.ts");
        expect(out, `run ${attempt}`).toContain("[offline model]");
        expect(out).toMatch(/subagent_type: 'researcher'[\s\S]*status: 'completed'/);
        expect(out).toContain("▸ researcher started");
        expect(out).toContain("✓ researcher: completed");
      }
    });

    it("approvals.ts: pauses before write_file, approves, and the file is written", async () => {
      for (const attempt of [1, 2]) {
        const out = await runBlock(project, "approvals.ts");
        expect(out, `run ${attempt}`).toMatch(/^[0-9a-f]{32} main agent \[/m);
        expect(out).toContain("name: 'write_file'");
        expect(out).toContain("The plan is written.");
        expect(out).toContain("path: '/home/gem/user-data/outputs/plan.md'");
      }
    });

    it("approvals-replay.ts: records a paused thread and replays it; a dropped gate fails", async () => {
      const out = await runBlock(project, "approvals-replay.ts");
      expect(out).toContain("replay checks the gates");
    });

    it("scripted.ts: the scripted-model test passes", async () => {
      await runBlock(project, "scripted.ts");
    });

    it("time-travel.ts: replays, forks with an edited question and reads a child's history", async () => {
      const out = await runBlock(project, "time-travel.ts");
      expect(out).toMatch(/_sub_researcher_[0-9a-f]{8}/);
      expect(out).toContain('about "Compare X and Z instead"');
    });

    it("record.ts then replay.test.ts: a recording made offline replays green", async () => {
      await runBlock(project, "record.ts");
      const recording = JSON.parse(
        readFileSync(join(project.dir, "fixtures", "my-thread.json"), "utf8"),
      ) as { inputs: string[]; children: unknown[] };
      expect(recording.inputs).toEqual(["What limits battery life?", "And in winter?"]);
      expect(recording.children.length).toBe(2);
      await runBlock(project, "replay.test.ts");
    });

    it("replay.test.ts goes red when an agent changes, and green again after rerecord.ts", async () => {
      const agents = TS_BLOCKS.find((block) => block.file === "agents.ts")?.code ?? "";
      const changed = agents.replace(
        "Gathers facts and lists open questions",
        "Gathers facts, nothing else",
      );
      expect(changed).not.toBe(agents);
      await project.write("agents.ts", changed);
      const red = await project.bin("tsx", ["replay.test.ts"]);
      expect(red.code).not.toBe(0);
      expect(red.stderr).toContain("SCRIPT_VIOLATION");
      expect(red.stderr).toContain("researcher");

      await runBlock(project, "rerecord.ts");
      await runBlock(project, "replay.test.ts");
    });

    describe("sdk.ts against a running server", () => {
      let fixture: RuntimeFixture | undefined;
      let server: SubagentGraphServer | undefined;
      let base = "";
      let token = "";

      beforeAll(async () => {
        fixture = await makeRuntime({ saver: "sqlite" });
        await fixture.runtime.users.ensure("demo");
        await seedDemo(fixture.runtime, "demo");
        token = (await fixture.runtime.users.issueToken("demo", { label: "readme" })).token;
        server = await createServer(fixture.runtime);
        base = await server.app.listen({ host: "127.0.0.1", port: 0 });
      }, 60_000);

      afterAll(async () => {
        await server?.runs.cancelAll();
        await server?.app.close();
        await fixture?.dispose();
      });

      it("streams the demo agent's subagents and reads the thread's state", async () => {
        const out = await runBlock(project, "sdk.ts", {
          SUBAGENT_GRAPH_URL: base,
          SUBAGENT_GRAPH_TOKEN: token,
        });
        expect(out).toMatch(
          /messages\|tools:[0-9a-f-]{36} child thread [0-9a-f-]+_sub_researcher_[0-9a-f]{8}/,
        );
        expect(out).toContain("subagent_runs");
      });
    });
  });
});
