import cors from "@fastify/cors";
import multipart from "@fastify/multipart";
import swagger from "@fastify/swagger";
import Fastify, { type FastifyInstance } from "fastify";
import {
  jsonSchemaTransform,
  serializerCompiler,
  validatorCompiler,
} from "fastify-type-provider-zod";
import { ErrorCode, SubagentGraphError } from "../errors.js";
import type { Runtime } from "../runtime.js";
import { authHook } from "./auth.js";
import { hasBuiltConsole, isConsolePath, registerConsole } from "./console.js";
import { handleError, sendCode } from "./http-errors.js";
import { registerJsonBodyParser } from "./json-body.js";
import { serviceNotifier } from "./live-runs/notify-parent.js";
import { QueueWorker } from "./live-runs/queue-worker.js";
import { RunAdmission, type RunAdmissionOptions } from "./live-runs/run-admission.js";
import { RunRegistry } from "./live-runs/run-registry.js";
import { RunService } from "./live-runs/run-service.js";
import { checkServerRole, checkWorkerCount, type ServerRole } from "./roles.js";
import { agentRoutes } from "./routes/agents.js";
import { assistantRoutes } from "./routes/assistants.js";
import { asyncTaskRoutes } from "./routes/async-tasks.js";
import { catalogRoutes } from "./routes/catalog.js";
import { fileRoutes } from "./routes/files.js";
import { healthRoutes } from "./routes/health.js";
import { knowledgeRoutes } from "./routes/knowledge.js";
import { mcpRoutes } from "./routes/mcp.js";
import { runRoutes } from "./routes/runs.js";
import { threadProtocolRoutes } from "./routes/thread-protocol.js";
import { threadRoutes } from "./routes/threads.js";
import { unsupportedRoutes } from "./routes/unsupported.js";
import { registerThreadScope } from "./thread-scope.js";

/** Options of {@link createServer}. */
export interface ServerOptions {
  /** Largest JSON body. Default 1 MiB. */
  bodyLimit?: number;
  /** Largest upload. Default 50 MiB. */
  maxUploadBytes?: number;
  /** Origins allowed by CORS: `true` (any, the default: tokens travel in headers, never cookies) or a list. */
  corsOrigins?: true | string[];
  /** Fastify's logger: `false` (default) or pino options. */
  logger?: boolean | Record<string, unknown>;
  /**
   * A built web console (a folder with `index.html`, see `server/console-build.ts`) to serve at
   * `/`. Default: none (the API only).
   */
  consoleDir?: string;
  /**
   * What this process does in a fleet on PostgreSQL: `"api"` answers requests and queues runs,
   * `"worker"` claims and runs queued runs (serving only `/ok`, `/ready` and `/metrics`), `"all"`
   * (the default) both. On SQLite only `"all"`.
   */
  role?: ServerRole;
  /** Queued runs this process's worker runs at once (fleet only). Default 10. */
  workers?: number;
  /**
   * How this process admits the runs it starts itself to its event loop, in arrival order
   * (`server/live-runs/run-admission.ts`). Default: 4 at once, more while the loop has time to spare.
   */
  admission?: RunAdmissionOptions;
}

/** The HTTP server and what it owns besides the runtime. */
export interface SubagentGraphServer {
  app: FastifyInstance;
  runs: RunRegistry;
  /** How every door starts, finds, reads, cancels and waits for runs. */
  service: RunService;
  /** The worker loop (a fleet process whose role includes it); started, to drain on shutdown. */
  worker: QueueWorker | undefined;
}

/** Path of the OpenAPI document. */
export const OPENAPI_PATH = "/openapi.json";

/**
 * The HTTP API over a runtime: `/api/agent` (agent management), the LangGraph Platform API
 * subset for threads and runs (what `@langchain/langgraph-sdk` and `useStream` speak), thread
 * files, `/api/mcp` (MCP servers and their tools), and the OpenAPI document at
 * {@link OPENAPI_PATH}. Every route but `/ok`, `/info` and the
 * document needs a token (`Authorization: Bearer` or `x-api-key`).
 */
export async function createServer(
  runtime: Runtime,
  options: ServerOptions = {},
): Promise<SubagentGraphServer> {
  const maxUploadBytes = options.maxUploadBytes ?? 50 * 1024 * 1024;
  const app = Fastify({
    bodyLimit: options.bodyLimit ?? 1024 * 1024,
    logger: options.logger ?? false,
    // Ids are chosen by clients; keep them out of the router's length limits' way.
    routerOptions: { maxParamLength: 512 },
    // Errors the router raises before any hook (a URL that does not decode, an over-long
    // parameter) would otherwise answer in Fastify's own shape, not ours.
    frameworkErrors: (error, request, reply) => handleError(error, request, reply),
  });
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  app.setErrorHandler(handleError);
  registerJsonBodyParser(app);
  app.setNotFoundHandler((request, reply) =>
    sendCode(reply, ErrorCode.NotFound, `no route ${request.method} ${request.url.split("?")[0]}`),
  );

  await app.register(cors, {
    origin: options.corsOrigins ?? true,
    // The plugin's default is GET, HEAD, POST: a browser app on another origin could not PATCH
    // or DELETE a thread, nor PUT an agent. Every method a route of ours answers.
    methods: ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"],
    allowedHeaders: ["content-type", "authorization", "x-api-key", "last-event-id"],
    exposedHeaders: ["content-location", "location", "x-pagination-total", "x-pagination-next"],
  });
  await app.register(multipart, { limits: { fileSize: maxUploadBytes, files: 1 } });
  await app.register(swagger, {
    openapi: {
      info: {
        title: "subagent-graph",
        description:
          "Agents that delegate to subagents. /api/agent manages agents; /assistants, /threads and runs speak the LangGraph Platform API subset used by @langchain/langgraph-sdk.",
        version: "1",
      },
      components: {
        securitySchemes: {
          bearer: { type: "http", scheme: "bearer" },
          apiKey: { type: "apiKey", in: "header", name: "x-api-key" },
        },
      },
      security: [{ bearer: [] }, { apiKey: [] }],
    },
    transform: jsonSchemaTransform,
  });
  const consoleDir = options.consoleDir;
  if (consoleDir !== undefined && !hasBuiltConsole(consoleDir)) {
    throw new SubagentGraphError(
      ErrorCode.ConsoleUnavailable,
      `consoleDir "${consoleDir}" has no index.html: build the console first (\`npm run build\`)`,
      { field: "consoleDir" },
    );
  }
  app.addHook("onRequest", authHook(runtime.users, consoleDir ? isConsolePath : undefined));
  registerThreadScope(app, runtime);
  if (consoleDir) await registerConsole(app, consoleDir);

  const runs = new RunRegistry(runtime, new RunAdmission(options.admission));
  const role = checkServerRole(options.role ?? "all", runtime.fleet !== undefined);
  const worker =
    runtime.fleet && role !== "api"
      ? new QueueWorker(runtime.fleet, runs, {
          concurrency: checkWorkerCount(options.workers ?? 10),
          warn: (message) => app.log.warn(message),
        })
      : undefined;
  const service = new RunService(runtime, runs, worker);
  runtime.asyncTasks.setParentNotifier(
    serviceNotifier(runtime, service, (message) => app.log.warn(message)),
  );
  healthRoutes(app, runtime, worker);
  if (worker) {
    // A closed server claims nothing more (`serve` drains it first, see `cli/serve.ts`).
    app.addHook("onClose", async () => worker.stop());
    await worker.start();
  }
  if (role === "worker") return { app, runs, service, worker };
  app.get(OPENAPI_PATH, { schema: { hide: true } }, async () => app.swagger());
  app.get("/info", { schema: { hide: true } }, async () => ({
    name: "subagent-graph",
    flags: { assistants: true, crons: false },
  }));
  agentRoutes(app, runtime);
  assistantRoutes(app, runtime);
  threadRoutes(app, runtime, service);
  asyncTaskRoutes(app, runtime);
  runRoutes(app, service);
  fileRoutes(app, runtime, maxUploadBytes);
  mcpRoutes(app, runtime);
  knowledgeRoutes(app, runtime, maxUploadBytes);
  catalogRoutes(app, runtime);
  await threadProtocolRoutes(app, runtime, runs, service);
  unsupportedRoutes(app);
  return { app, runs, service, worker };
}
