/**
 * Everything of a connection that needs the MCP SDK and LangChain's MCP adapter. `connection.ts`
 * imports this module on a server's first connection, so a process that never talks to an MCP
 * server (a CLI command, a runtime without servers) never loads either.
 */

import type { DynamicStructuredTool } from "@langchain/core/tools";
import { loadMcpTools } from "@langchain/mcp-adapters";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { McpError, ErrorCode as McpErrorCode } from "@modelcontextprotocol/sdk/types.js";
import type { McpServerDefinition } from "./config.js";
import { describeError, type StderrTail } from "./diagnostics.js";

/** A transport to one server: a child process (stdio) or an HTTP session. */
export type McpTransport = StdioClientTransport | StreamableHTTPClientTransport;

/**
 * The SDK client, with `callTool` failures marked: the adapter rethrows an error named
 * `ToolException` unchanged (any other it flattens into a message), so the wrapper can still
 * tell a broken connection from a tool that failed.
 */
export class GuardedClient extends Client {
  override async callTool(...args: Parameters<Client["callTool"]>): ReturnType<Client["callTool"]> {
    try {
      return await super.callTool(...args);
    } catch (error) {
      throw new McpCallFailure(error);
    }
  }
}

class McpCallFailure extends Error {
  readonly connectionLost: boolean;

  constructor(cause: unknown) {
    super(describeError(cause), { cause });
    this.name = "ToolException";
    this.connectionLost = classifyLoss(cause);
  }
}

/** A JSON-RPC error is the server answering; anything else below it means the link is broken. */
function classifyLoss(error: unknown): boolean {
  if (error instanceof McpError) return error.code === McpErrorCode.ConnectionClosed;
  if ((error as { name?: unknown } | null)?.name === "AbortError") return false;
  return true;
}

/** The SDK's "connection closed" error: the process exited or the session ended. */
export function isClosedError(error: unknown): boolean {
  return error instanceof McpError && error.code === McpErrorCode.ConnectionClosed;
}

/** Whether a tool call failed because its connection broke (not because the tool failed). */
export function isConnectionLoss(error: unknown): boolean {
  return error instanceof McpCallFailure && error.connectionLost;
}

/** The error the SDK would give for a connection closed right after the tools were listed. */
export function closedError(): Error {
  return new McpError(McpErrorCode.ConnectionClosed, "Connection closed");
}

/** The adapter's tools of a connected client, by the server's own names. */
export function listTools(serverName: string, client: Client): Promise<DynamicStructuredTool[]> {
  return loadMcpTools(serverName, client, { throwOnLoadError: true });
}

/** A transport for a server's definition; a stdio server's stderr goes to `stderr`. */
export function createTransport(definition: McpServerDefinition, stderr: StderrTail): McpTransport {
  if ("url" in definition) {
    return new StreamableHTTPClientTransport(new URL(definition.url), {
      requestInit: { headers: definition.headers },
    });
  }
  const transport = new StdioClientTransport({
    command: definition.command,
    args: definition.args,
    env: definition.env,
    ...(definition.cwd ? { cwd: definition.cwd } : {}),
    // Piped, not inherited: a server's logging must not interleave with ours (CLI output).
    stderr: "pipe",
  });
  transport.stderr?.on("data", (chunk: Buffer) => stderr.append(chunk));
  return transport;
}

/** The process id of a stdio server, when it runs. */
export function processIdOf(transport: McpTransport): number | undefined {
  return transport instanceof StdioClientTransport ? (transport.pid ?? undefined) : undefined;
}

/** Ends an HTTP server's session (a stdio server ends with its process). Never throws. */
export async function endSession(transport: McpTransport): Promise<void> {
  if (transport instanceof StreamableHTTPClientTransport) {
    await transport.terminateSession().catch(() => undefined);
  }
}
