import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { createRuntime } from "../../runtime.js";
import { type FakeOpenAIServer, startFakeOpenAIServer } from "../support/fake-openai-server.js";
import { until } from "../support/until.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

interface Served {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<number | null>;
}

/** `tsx cli/main.ts serve --port 0` in its own process, as `npm start` runs it. */
function serve(dataDir: string, env: NodeJS.ProcessEnv): Served {
  const child = spawn(
    process.execPath,
    ["--import", "tsx", "cli/main.ts", "serve", "--port", "0", "--data", dataDir],
    { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] },
  );
  let out = "";
  let err = "";
  child.stdout?.setEncoding("utf8").on("data", (text: string) => {
    out += text;
  });
  child.stderr?.setEncoding("utf8").on("data", (text: string) => {
    err += text;
  });
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  return { child, stdout: () => out, stderr: () => err, exited };
}

function cleanEnv(extra: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const env = Object.fromEntries(
    Object.entries(process.env).filter(
      ([key]) => !key.startsWith("OPENAI_") && !key.startsWith("SUBAGENT_") && key !== "PORT",
    ),
  );
  return { ...env, ...extra };
}

describe("serve (npm start)", { timeout: 120_000 }, () => {
  let dataDir = "";
  let fake: FakeOpenAIServer | undefined;
  const processes: Served[] = [];
  afterEach(async () => {
    for (const served of processes) served.child.kill("SIGKILL");
    processes.length = 0;
    await fake?.close();
    fake = undefined;
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it("seeds the demo user once, prints its token once, and shuts down cleanly on SIGTERM mid-run", async () => {
    dataDir = await mkdtemp(join(tmpdir(), "serve-"));
    // The main agent delegates to the researcher, whose model call hangs until it is aborted.
    fake = await startFakeOpenAIServer((request) => {
      const system = JSON.stringify(request.messages[0] ?? {});
      if (system.includes("careful researcher")) return { content: "late", delayMs: 30_000 };
      return {
        content: "",
        toolCalls: [
          { name: "task", arguments: { description: "dig", subagent_type: "researcher" } },
        ],
      };
    });
    const env = cleanEnv({
      OPENAI_API_KEY: "test-key",
      OPENAI_BASE_URL: fake.url,
      OPENAI_MAX_RETRIES: "0",
      SUBAGENT_GRAPH_MODEL: "openai:fake-model",
    });
    const first = serve(dataDir, env);
    processes.push(first);
    // The first start builds the web console on a fresh checkout: give it time on a busy machine.
    await until(() => /token of user "demo"/.test(first.stdout()), 60_000);
    const base = /serving on (http:\/\/\S+)/.exec(first.stdout())?.[1] ?? "";
    const token = /\(shown once, keep it\): (\S+)/.exec(first.stdout())?.[1] ?? "";
    expect(first.stdout()).toContain('created the demo agents for user "demo"');
    // The web console is served at / without a token (built first when it was missing).
    expect(first.stdout()).toContain(`web console: ${base}/`);
    const page = await fetch(`${base}/`);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain("<title>subagent-graph console</title>");
    const script = /src="(\/assets\/[^"]+\.js)"/.exec(html)?.[1] ?? "";
    const bundle = await fetch(`${base}${script}`);
    expect(bundle.status).toBe(200);
    expect(bundle.headers.get("content-type")).toContain("javascript");
    const headers = { authorization: `Bearer ${token}`, "content-type": "application/json" };

    const thread = (await (
      await fetch(`${base}/threads`, { method: "POST", headers, body: "{}" })
    ).json()) as { thread_id: string };
    const started = await fetch(`${base}/threads/${thread.thread_id}/runs`, {
      method: "POST",
      headers,
      body: JSON.stringify({
        assistant_id: "assistant",
        input: { messages: [{ type: "human", content: "research tides" }] },
      }),
    });
    expect(started.status).toBe(200);
    await until(() => (fake?.requests.length ?? 0) >= 2, 20_000);

    first.child.kill("SIGTERM");
    expect(await first.exited).toBe(0);
    expect(first.stderr()).toContain("SIGTERM: shutting down");
    // The child's model request was aborted, not left running.
    await until(() => (fake?.aborted.length ?? 0) >= 1);

    // The thread was repaired before the databases closed: the child is recorded cancelled.
    const runtime = await createRuntime({ dataDir, env: {} });
    try {
      const state = await runtime.threads.state("demo", thread.thread_id);
      const values = state?.values as { subagent_runs: { status: string }[]; messages: unknown[] };
      expect(values.subagent_runs.map((run) => run.status)).toEqual(["cancelled"]);
      expect(state?.next).toEqual([]);
    } finally {
      await runtime.close();
    }

    // A second start creates nothing and prints no token.
    const second = serve(dataDir, env);
    processes.push(second);
    await until(
      () => /serving on/.test(second.stdout()) && /tokens issue/.test(second.stdout()),
      20_000,
    );
    expect(second.stdout()).not.toContain("sgk_");
    expect(second.stdout()).not.toContain("created the demo agents");
    second.child.kill("SIGINT");
    expect(await second.exited).toBe(0);
  });
});
