import { DEMO_UID, seedDemo } from "../agents/demo.js";
import { createRuntime } from "../runtime.js";
import { createServer } from "../server/app.js";
import { hasBuiltConsole } from "../server/console.js";
import { buildConsole, CONSOLE_DIST_DIR, consoleIsStale } from "../server/console-build.js";
import { checkServerRole, type ServerRole } from "../server/roles.js";
import type { StoreOptions } from "./commands/declaration.js";
import { type Io, say } from "./context.js";

/** Default port of `serve` (`PORT` or `--port` override it). */
export const DEFAULT_PORT = 8787;

/** What `serve` listens on and does (parsed by `cli/commands/serve.ts`). */
export interface ServeOptions {
  store: StoreOptions;
  host: string;
  port: number;
  /** Serve the web console at `/` (built first when missing or stale). */
  console: boolean;
  /** What this process does in a fleet on PostgreSQL (`--role`). */
  role: ServerRole;
  /** Queued runs this process runs at once (`--workers`). */
  workers: number;
}

/** How long a draining worker waits for its runs before it gives them back to the queue. */
const DEFAULT_DRAIN_MS = 30_000;

/**
 * How long a response still being sent may hold the shutdown once the runs are cancelled. A
 * client that stopped reading a large body (a console bundle, a long history) would otherwise
 * keep its connection, and the process, open until it went away.
 */
const RESPONSE_GRACE_MS = 3_000;

/**
 * The `serve` command (`npm start`): the HTTP API on `host:port` over the data dir. On the first
 * start it creates the `demo` user with the demo agents and prints that user's token once.
 * SIGINT/SIGTERM shut down gracefully: no new connections, running runs cancelled cleanly (their
 * threads repaired, so they take the next message), responses still being sent given
 * {@link RESPONSE_GRACE_MS}, then the databases closed. A second signal exits at once.
 *
 * @returns the exit code once the server has stopped.
 */
export async function serveCommand(options: ServeOptions, io: Io): Promise<number> {
  const runtime = await createRuntime({ dataDir: options.store.dataDir, env: io.env });
  let server: Awaited<ReturnType<typeof createServer>> | undefined;
  try {
    // Refused before the first start seeds anything: its token is printed only once.
    checkServerRole(options.role, runtime.fleet !== undefined);
    const firstStart = (await runtime.users.get(DEMO_UID)) === undefined;
    await runtime.users.ensure(DEMO_UID, { displayName: "Demo user" });
    const seeded = await seedDemo(runtime, DEMO_UID);
    const token = firstStart
      ? (await runtime.users.issueToken(DEMO_UID, { label: "first start" })).token
      : undefined;
    const consoleDir =
      options.console && options.role !== "worker" ? await prepareConsole(io) : undefined;
    server = await createServer(runtime, {
      logger: { level: io.env.LOG_LEVEL ?? "warn" },
      ...(consoleDir ? { consoleDir } : {}),
      role: options.role,
      workers: options.workers,
    });
    const address = await server.app.listen({ host: options.host, port: options.port });
    say(io, `subagent-graph serving on ${address} (data: ${options.store.dataDir})`);
    if (runtime.fleet) {
      say(
        io,
        `fleet on PostgreSQL: role ${options.role}${server.worker ? `, ${options.workers} queued runs at once` : ""}`,
      );
    }
    const servesApi = options.role !== "worker";
    if (consoleDir) say(io, `web console: ${address}/`);
    if (servesApi) say(io, `API docs: ${address}/openapi.json`);
    else
      say(
        io,
        `worker only: ${address} serves /ok, /ready and /metrics; the API is on the fleet's api and all processes`,
      );
    if (seeded.length > 0) {
      say(
        io,
        `created the demo agents for user "${DEMO_UID}": ${seeded.map((a) => a.slug).join(", ")}`,
      );
    }
    if (token) {
      say(io, `token of user "${DEMO_UID}" (shown once, keep it): ${token}`);
      if (servesApi) {
        say(io, `try: curl -H "Authorization: Bearer ${token}" ${address}/api/agent`);
      }
    } else {
      say(
        io,
        `users and tokens: subagent-graph tokens issue ${DEMO_UID} (the first token was printed on the first start)`,
      );
    }
  } catch (error) {
    await server?.app.close();
    await runtime.close();
    throw error;
  }

  const running = server;
  return new Promise<number>((resolve) => {
    let stopping = false;
    const stop = async (signal: NodeJS.Signals) => {
      if (stopping) {
        io.stderr.write(`\n${signal} again: exiting now\n`);
        process.exit(130);
      }
      stopping = true;
      const worker = running.worker;
      if (worker) {
        const drainMs = Number(io.env.SUBAGENT_DRAIN_MS?.trim()) || DEFAULT_DRAIN_MS;
        io.stderr.write(
          `\n${signal}: draining (no new claims; ${worker.active} queued runs get ${drainMs} ms to finish, then go back to the queue)\n`,
        );
        await worker.drain(drainMs);
      }
      // A drained worker has no runs left here: they ended, or went back to the queue.
      io.stderr.write(
        worker
          ? `\n${signal}: shutting down (no new requests)\n`
          : `\n${signal}: shutting down (no new requests; running runs are cancelled cleanly)\n`,
      );
      const closing = running.app.close();
      await running.runs.cancelAll();
      const lingering = setTimeout(
        () => running.app.server.closeAllConnections(),
        RESPONSE_GRACE_MS,
      ).unref();
      await closing;
      clearTimeout(lingering);
      await runtime.close();
      process.off("SIGINT", stop);
      process.off("SIGTERM", stop);
      resolve(0);
    };
    process.on("SIGINT", stop);
    process.on("SIGTERM", stop);
  });
}

/**
 * The web console to serve: built first when missing or older than its sources (`npm run build`
 * does the same ahead of time). A failed build is reported and the API is served without it.
 */
async function prepareConsole(io: Io): Promise<string | undefined> {
  if (consoleIsStale()) {
    say(io, "building the web console (web/ → web/dist)…");
    try {
      await buildConsole();
    } catch (error) {
      io.stderr.write(
        `warning: the web console could not be built, serving the API only: ${(error as Error).message}\n`,
      );
    }
  }
  return hasBuiltConsole(CONSOLE_DIST_DIR) ? CONSOLE_DIST_DIR : undefined;
}
