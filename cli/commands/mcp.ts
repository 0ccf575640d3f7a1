import { noMoreArguments, subcommandError } from "../command-line.js";
import { declareCommand, type StoreOptions } from "./declaration.js";
import { DATA } from "./options.js";

/** `mcp list`: the MCP servers, connected to show their status and tools (`cli/mcp.ts`). */
export const mcp = declareCommand<{ name: "mcp-list"; store: StoreOptions }>({
  name: "mcp",
  forms: [
    {
      usage: "mcp list",
      about: [
        "List the MCP servers (<data>/mcp.json or $SUBAGENT_GRAPH_MCP): each one is",
        "connected to show its status and its tools (mcp_<server>_<tool>).",
      ],
    },
  ],
  options: [DATA],
  examples: ["mcp list"],
  parse: ({ args: [sub, ...more], store }) => {
    if (sub !== "list") throw subcommandError("mcp", sub, "list");
    noMoreArguments("mcp list", more);
    return { name: "mcp-list", store };
  },
  action: {
    needs: "runtime",
    run: async ({ runtime, io }) => (await import("../mcp.js")).listMcpServers(runtime, io),
  },
});
