/**
 * Deep Agents' documented minimal Agent Protocol server for async subagents
 * (deepagentsjs `examples/async-subagent-server/server.ts`, the server its README points a
 * self-hosting user to): Hono on `@hono/node-server`, threads and runs in PostgreSQL (`pg`), a
 * run executed fire-and-forget by `agent.invoke`, the client polling
 * `GET /threads/:id/runs/:run_id`. The routes, tables and queries are the example's; what differs
 * is what its README tells a user to swap: the agent (`createDeepAgent` with the bench's scripted
 * researcher model and no tools instead of Claude with a web-search tool, so it runs offline),
 * and the port (free, not 2024). Its request logger is left out (console noise only), and
 * `uuid` is node's `randomUUID`. It runs in the bench's process.
 *
 * `hono` and `@hono/node-server` are not dependencies of this package: they come with
 * @langchain/langgraph-api (the dev server, a devDependency), which is built on them.
 */
import { randomUUID } from "node:crypto";
import type { AddressInfo } from "node:net";
import { serve } from "@hono/node-server";
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { HumanMessage } from "@langchain/core/messages";
import { createDeepAgent } from "deepagents";
import { Hono } from "hono";
import pg from "pg";

interface Thread {
  thread_id: string;
  created_at: string;
  messages: { role: string; content: string }[];
  output: string | null;
}

interface Run {
  run_id: string;
  thread_id: string;
  assistant_id: string;
  status: "pending" | "running" | "success" | "error" | "cancelled";
  created_at: string;
  error?: string;
}

/** The running server. */
export interface DeepAsyncServer {
  /** `http://127.0.0.1:<port>`: the `url` of the supervisor's `AsyncSubAgent`. */
  url: string;
  /** Runs started, by status now (for the scenario's sanity checks). */
  runStatuses(): Promise<Record<string, number>>;
  /** Waits for the runs in flight, stops listening, ends the pool. */
  close(): Promise<void>;
}

/**
 * Starts the example server on `databaseUrl` (an empty database: the tables are created as the
 * example does at startup) with `researcherModel` as the hosted researcher's model.
 */
export async function startDeepAsyncServer(
  databaseUrl: string,
  researcherModel: BaseChatModel,
  systemPrompt: string,
): Promise<DeepAsyncServer> {
  const pool = new pg.Pool({ connectionString: databaseUrl });
  await pool.query(`
    CREATE TABLE IF NOT EXISTS threads (
      thread_id  TEXT        PRIMARY KEY,
      created_at TIMESTAMPTZ NOT NULL DEFAULT NOW(),
      messages   JSONB       NOT NULL DEFAULT '[]',
      output     TEXT
    );

    CREATE TABLE IF NOT EXISTS runs (
      run_id       TEXT        PRIMARY KEY,
      thread_id    TEXT        NOT NULL REFERENCES threads(thread_id),
      assistant_id TEXT        NOT NULL,
      status       TEXT        NOT NULL DEFAULT 'pending',
      created_at   TIMESTAMPTZ NOT NULL DEFAULT NOW(),
      error        TEXT
    );
  `);

  const getThread = async (threadId: string): Promise<Thread | null> => {
    const { rows } = await pool.query<Thread>(
      "SELECT thread_id, created_at, messages, output FROM threads WHERE thread_id = $1",
      [threadId],
    );
    return rows[0] ?? null;
  };
  const getRun = async (runId: string): Promise<Run | null> => {
    const { rows } = await pool.query<Run>(
      "SELECT run_id, thread_id, assistant_id, status, created_at, error FROM runs WHERE run_id = $1",
      [runId],
    );
    return rows[0] ?? null;
  };

  // The example's "replace this with your own agent": created once, reused for every run.
  const agent = createDeepAgent({ model: researcherModel, systemPrompt, tools: [] });

  const inFlight = new Set<Promise<void>>();
  const executeRun = async (runId: string, threadId: string, input: string): Promise<void> => {
    await pool.query("UPDATE runs SET status = 'running' WHERE run_id = $1", [runId]);
    try {
      const result = await agent.invoke({ messages: [new HumanMessage(input)] });
      const lastMessage = result.messages[result.messages.length - 1];
      const output =
        typeof lastMessage?.content === "string"
          ? lastMessage.content
          : JSON.stringify(lastMessage?.content);
      await pool.query(
        `UPDATE threads
            SET output   = $1,
                messages = messages || $2::jsonb
          WHERE thread_id = $3`,
        [output, JSON.stringify([{ role: "assistant", content: output }]), threadId],
      );
      await pool.query("UPDATE runs SET status = 'success' WHERE run_id = $1", [runId]);
    } catch (e) {
      await pool.query("UPDATE runs SET status = 'error', error = $1 WHERE run_id = $2", [
        String(e),
        runId,
      ]);
      console.error(`[deep async server: run ${runId}] error:`, e);
    }
  };

  const app = new Hono();
  app.get("/ok", (c) => c.json({ ok: true }));
  app.post("/threads", async (c) => {
    const { rows } = await pool.query<Thread>(
      `INSERT INTO threads (thread_id) VALUES ($1)
       RETURNING thread_id, created_at, messages, output`,
      [randomUUID()],
    );
    return c.json(rows[0]);
  });
  app.post("/threads/:threadId/runs", async (c) => {
    const thread = await getThread(c.req.param("threadId"));
    if (!thread) return c.json({ error: "Thread not found" }, 404);
    const body = await c.req.json<{
      input?: { messages?: { role: string; content: string }[] };
      assistant_id?: string;
      multitask_strategy?: string;
    }>();
    if (body.multitask_strategy === "interrupt") {
      await pool.query(
        `UPDATE runs SET status = 'cancelled'
          WHERE thread_id = $1 AND status = 'running'`,
        [thread.thread_id],
      );
      await pool.query("UPDATE threads SET output = NULL WHERE thread_id = $1", [thread.thread_id]);
    }
    const userMessage = body.input?.messages?.find((m) => m.role === "user")?.content ?? "";
    await pool.query(
      `UPDATE threads
          SET messages = messages || $1::jsonb
        WHERE thread_id = $2`,
      [JSON.stringify([{ role: "user", content: userMessage }]), thread.thread_id],
    );
    const { rows } = await pool.query<Run>(
      `INSERT INTO runs (run_id, thread_id, assistant_id)
       VALUES ($1, $2, $3)
       RETURNING run_id, thread_id, assistant_id, status, created_at, error`,
      [randomUUID(), thread.thread_id, body.assistant_id ?? "researcher"],
    );
    const run = rows[0] as Run;
    // Fire and forget, as the example does (tracked here only so close() can wait for it).
    const running = executeRun(run.run_id, run.thread_id, userMessage);
    inFlight.add(running);
    void running.finally(() => inFlight.delete(running));
    return c.json(run);
  });
  app.get("/threads/:threadId/runs/:runId", async (c) => {
    const run = await getRun(c.req.param("runId"));
    if (!run || run.thread_id !== c.req.param("threadId")) {
      return c.json({ error: "Run not found" }, 404);
    }
    return c.json(run);
  });
  app.get("/threads/:threadId/state", async (c) => {
    const thread = await getThread(c.req.param("threadId"));
    if (!thread) return c.json({ error: "Thread not found" }, 404);
    return c.json({ values: { messages: thread.messages }, next: [], metadata: {} });
  });
  app.post("/threads/:threadId/runs/:runId/cancel", async (c) => {
    const run = await getRun(c.req.param("runId"));
    if (!run || run.thread_id !== c.req.param("threadId")) {
      return c.json({ error: "Run not found" }, 404);
    }
    await pool.query("UPDATE runs SET status = 'cancelled' WHERE run_id = $1", [run.run_id]);
    return c.json({ ...run, status: "cancelled" });
  });

  const server = await new Promise<ReturnType<typeof serve>>((resolve) => {
    const started = serve({ fetch: app.fetch, port: 0, hostname: "127.0.0.1" }, () =>
      resolve(started),
    );
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    async runStatuses() {
      const { rows } = await pool.query<{ status: string; n: string }>(
        "SELECT status, count(*) AS n FROM runs GROUP BY status",
      );
      return Object.fromEntries(rows.map((row) => [row.status, Number(row.n)]));
    },
    async close() {
      await Promise.allSettled([...inFlight]);
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await pool.end();
    },
  };
}
