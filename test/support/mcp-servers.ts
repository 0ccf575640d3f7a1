import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { readdir, readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Runtime } from "../../runtime.js";
import type { McpServerConfig } from "../../tools/mcp/config.js";
import type { McpServerState } from "../../tools/mcp/connection.js";
import type { McpServerInfo } from "../../tools/mcp/manager.js";
import { nodeEntry } from "./node-entry.js";
import { isAlive } from "./process-alive.js";
import { until } from "./until.js";

/**
 * Real MCP servers for the tests: the npm packages' own entry files, run with this Node (never
 * npx), so nothing is fetched and the pinned versions are the ones tested.
 */

const require = createRequire(import.meta.url);
const ROOT = fileURLToPath(new URL("../..", import.meta.url));

/** The file a package's (first) `bin` entry names. */
function binOf(pkg: string): string {
  const manifest = require.resolve(`${pkg}/package.json`);
  const { bin } = JSON.parse(readFileSync(manifest, "utf8")) as {
    bin: string | Record<string, string>;
  };
  const entry = typeof bin === "string" ? bin : Object.values(bin)[0];
  if (!entry) throw new Error(`${pkg} has no bin entry`);
  return join(dirname(manifest), entry);
}

export const FILESYSTEM_SERVER_ENTRY = binOf("@modelcontextprotocol/server-filesystem");
export const EVERYTHING_SERVER_ENTRY = binOf("@modelcontextprotocol/server-everything");

/** The reference filesystem server, confined to `root`. */
export function filesystemServer(root: string): McpServerConfig {
  return { command: process.execPath, args: [FILESYSTEM_SERVER_ENTRY, root] };
}

/** The reference "everything" server over stdio (echo, get-sum, long-running operations, …). */
export function everythingServer(): McpServerConfig {
  return { command: process.execPath, args: [EVERYTHING_SERVER_ENTRY, "stdio"] };
}

/** `test/support/mcp-fixture-server.ts`, serving the tools named in the JSON list in `toolsFile`. */
export function fixtureServer(toolsFile: string): McpServerConfig {
  return {
    command: process.execPath,
    args: nodeEntry("test/support/mcp-fixture-server.ts"),
    env: { MCP_FIXTURE_TOOLS: toolsFile },
    cwd: ROOT,
  };
}

/** Pids of live processes whose command line contains `needle` (Linux `/proc`). */
export async function processesWith(needle: string): Promise<number[]> {
  const pids: number[] = [];
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const cmdline = await readFile(`/proc/${entry}/cmdline`, "utf8").catch(() => "");
    if (cmdline.includes(needle)) pids.push(Number(entry));
  }
  return pids;
}

/** The process id of a connected stdio server, as the runtime reports it. */
export async function serverPid(runtime: Runtime, name: string): Promise<number> {
  const server = (await runtime.mcp.list({ connect: false })).find((s) => s.name === name);
  if (server?.pid === undefined) {
    throw new Error(`MCP server "${name}" has no process: ${JSON.stringify(server)}`);
  }
  return server.pid;
}

/** Polls an async `condition` every 10 ms until it holds; fails after `limitMs`. */
export async function untilAsync(
  condition: () => Promise<boolean>,
  limitMs = 5_000,
): Promise<void> {
  const deadline = Date.now() + limitMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${limitMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** Polls the runtime until server `name` reports `status` (at most 5 s). */
export async function waitForStatus(
  runtime: Runtime,
  name: string,
  status: McpServerState,
): Promise<McpServerInfo> {
  const deadline = Date.now() + 5_000;
  for (;;) {
    const server = (await runtime.mcp.list({ connect: false })).find((s) => s.name === name);
    if (server?.status === status) return server;
    if (Date.now() > deadline) {
      throw new Error(`MCP server "${name}" is not ${status}: ${JSON.stringify(server)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** SIGKILLs a server's process and waits until it is gone. */
export async function killServer(pid: number): Promise<void> {
  process.kill(pid, "SIGKILL");
  await until(() => !isAlive(pid));
}

/** The "everything" server over Streamable HTTP on `port`, started by the test itself. */
export interface HttpMcpServer {
  url: string;
  process: ChildProcess;
  stop(): Promise<void>;
}

export async function startEverythingHttp(port: number): Promise<HttpMcpServer> {
  const child = spawn(process.execPath, [EVERYTHING_SERVER_ENTRY, "streamableHttp"], {
    env: { PATH: process.env.PATH ?? "", PORT: String(port) },
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  let exited = false;
  child.stderr?.setEncoding("utf8").on("data", (text: string) => {
    stderr += text;
  });
  child.on("exit", () => {
    exited = true;
  });
  try {
    await until(() => exited || stderr.includes(`listening on port ${port}`), 20_000);
  } catch (error) {
    child.kill("SIGKILL");
    throw error;
  }
  if (exited) throw new Error(`the MCP HTTP server did not start: ${stderr}`);
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    process: child,
    async stop() {
      if (exited) return;
      child.kill("SIGKILL");
      await until(() => exited);
    },
  };
}
