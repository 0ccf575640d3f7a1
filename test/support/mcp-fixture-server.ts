/**
 * A tiny MCP server over stdio for tests whose tool set can change between starts: its tools are
 * the names in the JSON list that the file `MCP_FIXTURE_TOOLS` holds, read at start-up; each one
 * answers `<name> says <text>`. With `MCP_FIXTURE_LOG` set, each call first appends a line
 * `<name> <text>` to that file, so a test counts a tool's executions across processes. Run it
 * with `node --import tsx` from the project root.
 */
import { appendFileSync, readFileSync } from "node:fs";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";

const file = process.env.MCP_FIXTURE_TOOLS;
if (!file) throw new Error("set MCP_FIXTURE_TOOLS to a JSON file listing the tool names");
const names = JSON.parse(readFileSync(file, "utf8")) as string[];
const log = process.env.MCP_FIXTURE_LOG;

const server = new McpServer({ name: "fixture", version: "1.0.0" });
for (const name of names) {
  server.registerTool(
    name,
    { description: `the ${name} tool`, inputSchema: { text: z.string() } },
    async ({ text }) => {
      if (log) appendFileSync(log, `${name} ${text}\n`);
      return { content: [{ type: "text", text: `${name} says ${text}` }] };
    },
  );
}
await server.connect(new StdioServerTransport());
