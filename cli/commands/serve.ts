import {
  isWorkerCount,
  SERVER_ROLES,
  type ServerRole,
  workerCountProblem,
} from "../../server/roles.js";
import { noMoreArguments, UsageError } from "../command-line.js";
import type { ServeOptions } from "../serve.js";
import { declareCommand, type FlagOption, type TextOption } from "./declaration.js";
import { DATA, HOST, PORT, portOf } from "./options.js";

const NO_CONSOLE: FlagOption = {
  name: "no-console",
  type: "boolean",
  flag: "--no-console",
  about: "serve: the API only (no web console, nothing built).",
};

const ROLE: TextOption = {
  name: "role",
  type: "string",
  flag: "--role <all|api|worker>",
  about: "serve: what this process does in a fleet (default $SUBAGENT_ROLE, else all).",
};

const WORKERS: TextOption = {
  name: "workers",
  type: "string",
  flag: "--workers <n>",
  about: "serve: queued runs this process runs at once (default $SUBAGENT_WORKERS, else 10).",
};

/** `serve`: the HTTP API and the web console (`cli/serve.ts`). */
export const serve = declareCommand<{ name: "serve" } & ServeOptions>({
  name: "serve",
  forms: [
    {
      usage: "serve",
      about: [
        "Serve the HTTP API and the web console at / (default 127.0.0.1:$PORT,",
        "else 8787). The first start creates the demo user and agents and prints",
        "the user's token once. The console is built first when web/dist is",
        "missing or older than web/ (npm run build does it ahead).",
      ],
    },
  ],
  options: [DATA, PORT, HOST, NO_CONSOLE, ROLE, WORKERS],
  notes: [
    "On PostgreSQL (DATABASE_URL) every process of a fleet shares one queue of\nruns: --role api answers requests and queues runs, --role worker claims\nand runs them (serving /ok, /ready and /metrics only), --role all (the\ndefault) both. SIGTERM drains: no new claims, running runs finish within\nSUBAGENT_DRAIN_MS (default 30000) or go back to the queue.",
  ],
  examples: ["serve", "serve --port 9000 --no-console", "serve --role worker --workers 20"],
  parse: ({ args, store, env, text, flag }) => {
    noMoreArguments("serve", args);
    return {
      name: "serve",
      store,
      host: text(HOST) ?? "127.0.0.1",
      port: portOf(text(PORT) ?? (env.PORT?.trim() || "8787")),
      console: !flag(NO_CONSOLE),
      role: roleOf(text(ROLE) ?? (env.SUBAGENT_ROLE?.trim() || "all")),
      workers: workersOf(text(WORKERS) ?? (env.SUBAGENT_WORKERS?.trim() || "10")),
    };
  },
  action: {
    // The server owns its runtime and its signals: a Ctrl-C is a graceful shutdown there.
    needs: "nothing",
    run: async (command, io) => (await import("../serve.js")).serveCommand(command, io),
  },
});

/** @throws UsageError unless `text` is a role of `serve` */
function roleOf(text: string): ServerRole {
  if (!(SERVER_ROLES as readonly string[]).includes(text)) {
    throw new UsageError(`--role: "${text}" is not a role: use one of ${SERVER_ROLES.join(", ")}`);
  }
  return text as ServerRole;
}

/** @throws UsageError unless `text` is a whole number of runs a process may run at once */
function workersOf(text: string): number {
  const workers = Number(text);
  if (!/^\d+$/.test(text) || !isWorkerCount(workers)) {
    throw new UsageError(workerCountProblem("--workers", `"${text}"`));
  }
  return workers;
}
