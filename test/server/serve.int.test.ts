import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, inject, it } from "vitest";
import { createRuntime } from "../../runtime.js";
import { type FakeOpenAIServer, startFakeOpenAIServer } from "../support/fake-openai-server.js";
import { createTestDatabase } from "../support/postgres-cluster.js";
import { TcpProxy } from "../support/tcp-proxy.js";
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
    // Left unread on purpose: a client that stops reading a large body must not hold the
    // shutdown below past its grace (cli/serve.ts).
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
    // Bounded: the unread bundle above must not keep the process alive until the client gives up.
    await until(() => first.child.exitCode !== null, 20_000);
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

  it("answers /ready and /metrics without a token; /ready turns 503 naming the store while PostgreSQL is unreachable, and 200 once it is back", async () => {
    dataDir = await mkdtemp(join(tmpdir(), "serve-ready-"));
    // PostgreSQL behind a proxy the test can cut, as a network partition would.
    const target = new URL(await createTestDatabase(inject("postgresUrl"), "ready"));
    const proxy = new TcpProxy(target.hostname, Number(target.port));
    await proxy.listen();
    const proxied = new URL(target);
    proxied.port = String(proxy.port);
    try {
      const served = serve(dataDir, cleanEnv({ DATABASE_URL: proxied.toString() }));
      processes.push(served);
      await until(() => /token of user "demo"/.test(served.stdout()), 60_000);
      const base = /serving on (http:\/\/\S+)/.exec(served.stdout())?.[1] ?? "";
      const token = /\(shown once, keep it\): (\S+)/.exec(served.stdout())?.[1] ?? "";
      const ready = async () => {
        const answer = await fetch(`${base}/ready`).catch((error: unknown) => {
          throw new Error(`GET /ready failed; the server's stderr:\n${served.stderr()}`, {
            cause: error,
          });
        });
        return {
          status: answer.status,
          body: (await answer.json()) as {
            ready: boolean;
            checks: Record<string, { ok: boolean; error?: string }>;
          },
        };
      };
      const metrics = async () => {
        const answer = await fetch(`${base}/metrics`);
        expect(answer.status).toBe(200);
        expect(answer.headers.get("content-type")).toContain("text/plain");
        return answer.text();
      };

      const up = await ready();
      expect(up.status).toBe(200);
      expect(up.body).toMatchObject({
        ready: true,
        checks: { store: { ok: true }, checkpoints: { ok: true } },
      });
      expect(await metrics()).toContain("subagent_graph_runs_started_total 0\n");

      // One run (the offline model: no API key) moves the counters.
      const headers = { authorization: `Bearer ${token}`, "content-type": "application/json" };
      const thread = (await (
        await fetch(`${base}/threads`, { method: "POST", headers, body: "{}" })
      ).json()) as { thread_id: string };
      const waited = await fetch(`${base}/threads/${thread.thread_id}/runs/wait`, {
        method: "POST",
        headers,
        body: JSON.stringify({
          assistant_id: "assistant",
          input: { messages: [{ type: "human", content: "hello" }] },
        }),
      });
      expect(waited.status).toBe(200);
      const counted = await metrics();
      expect(counted).toContain("# TYPE subagent_graph_runs_started_total counter\n");
      expect(counted).toContain("subagent_graph_runs_started_total 1\n");
      expect(counted).toContain('subagent_graph_runs_finished_total{status="success"} 1\n');
      expect(counted).toContain("subagent_graph_store_up 1\n");
      expect(counted).toContain("subagent_graph_store_runs_running 0\n");
      // The event loop's delay since the previous scrape, in seconds: p50 ≤ p99 ≤ max.
      const lag = (name: string) => {
        const line = counted
          .split("\n")
          .find((l) => l.startsWith(`nodejs_eventloop_lag_${name}_seconds `));
        return Number(line?.split(" ")[1]);
      };
      expect(counted).toContain("# TYPE nodejs_eventloop_lag_p50_seconds gauge\n");
      expect(lag("p50")).toBeGreaterThanOrEqual(0);
      expect(lag("p50")).toBeLessThanOrEqual(lag("p99"));
      expect(lag("p99")).toBeLessThanOrEqual(lag("max"));

      await proxy.cut();
      const down = await ready();
      expect(down.status).toBe(503);
      expect(down.body.ready).toBe(false);
      expect(down.body.checks.store?.ok).toBe(false);
      expect(down.body.checks.store?.error).toMatch(/\S/);
      // The password of the database URL never shows.
      expect(JSON.stringify(down.body)).not.toContain(target.password || "\u0000");
      // Metrics still answer, with the process's own counters and the store marked down.
      const partial = await metrics();
      expect(partial).toContain("subagent_graph_store_up 0\n");
      expect(partial).toContain("subagent_graph_runs_started_total 1\n");
      // A request that needs the store is answered 503 (try again), not a 500, and says why.
      const unreachable = await fetch(`${base}/threads/${thread.thread_id}`, { headers });
      expect(unreachable.status).toBe(503);
      expect(unreachable.headers.get("retry-after")).toBe("1");
      expect(((await unreachable.json()) as { error: { code: string } }).error.code).toBe(
        "DATABASE_UNAVAILABLE",
      );

      await proxy.listen();
      const deadline = Date.now() + 30_000;
      let back = await ready();
      while (back.status !== 200 && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 200));
        back = await ready();
      }
      expect(back.body).toMatchObject({ ready: true, checks: { store: { ok: true } } });
      served.child.kill("SIGTERM");
      expect(await served.exited).toBe(0);
    } finally {
      await proxy.cut();
    }
  });
});
