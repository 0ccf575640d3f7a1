import type { Runtime } from "../runtime.js";
import { type Io, say } from "./context.js";
import { columns } from "./text.js";

/**
 * `mcp list`: every defined MCP server, connected to show its status and tool names. Exit code 1
 * when any server is unavailable (so it doubles as a health check), else 0.
 */
export async function listMcpServers(runtime: Runtime, io: Io): Promise<number> {
  const servers = await runtime.mcp.list();
  if (servers.length === 0) {
    say(
      io,
      'no MCP servers defined: add <data>/mcp.json (or point SUBAGENT_GRAPH_MCP at a file) with { "servers": { "<name>": { "command": "…", "args": [] } } }',
    );
    return 0;
  }
  say(
    io,
    columns([
      ["NAME", "TRANSPORT", "STATUS", "TOOLS"],
      ...servers.map((server) => [
        server.name,
        server.transport,
        server.status,
        server.tools.join(", ") || "-",
      ]),
    ]),
  );
  const failed = servers.filter((server) => server.error !== undefined);
  for (const server of failed) {
    io.stderr.write(`error: MCP server "${server.name}" is unavailable: ${server.error}\n`);
  }
  return failed.length > 0 ? 1 : 0;
}
