import type { StructuredToolInterface } from "@langchain/core/tools";
import { ErrorCode, SubagentGraphError } from "../../errors.js";
import type { McpServers, McpTransportKind } from "./config.js";
import { McpServerConnection, type McpServerState } from "./connection.js";

/** What an agent gets from its `context.mcp_servers`. */
export interface McpToolSet {
  tools: StructuredToolInterface[];
  /**
   * Identity of the tool set (servers and each one's tool catalogue): part of the graph cache
   * key, so a server whose tools changed on reconnect rebuilds the graphs that use it.
   */
  key: string;
}

/** Options of {@link McpToolSource.toolsFor}. */
export interface McpToolsForOptions {
  /**
   * Fail instead of leaving out a server that cannot be reached: for a subagent that names its
   * servers, whose tools are what it is called for (see `graphs/compiled-graphs.ts`).
   */
  required?: boolean;
}

/** Where graph building gets MCP tools from (the runtime's {@link McpManager}). */
export interface McpToolSource {
  /**
   * The tools of the servers `selected` names (every defined server when undefined, none for
   * `[]`), connecting the ones not connected yet. A server that cannot be reached is left out
   * with a warning (the next build tries again), unless `options.required`.
   *
   * @throws SubagentGraphError `UNKNOWN_MCP_SERVER` when a name is not defined;
   *   `MCP_SERVER_UNAVAILABLE` with `options.required` when a server cannot be reached.
   */
  toolsFor(
    selected: readonly string[] | undefined,
    agentSlug: string,
    options?: McpToolsForOptions,
  ): Promise<McpToolSet>;
}

/** One server as {@link McpManager.list} reports it. */
export interface McpServerInfo {
  name: string;
  transport: McpTransportKind;
  status: McpServerState;
  /** Its tools' names as agents see them (`mcp_<server>_<tool>`), as last listed. */
  tools: string[];
  /** Why it is unavailable. */
  error?: string;
  /** Process id of a connected stdio server (diagnostics). */
  pid?: number;
}

export interface McpManagerOptions {
  /** Names MCP tools must not take: the registered tools'. */
  reservedNames?: Iterable<string>;
  /** Where the definitions came from, for messages (a file path or "the mcpServers option"). */
  source?: string;
  warn?: (message: string) => void;
  /** How long connecting to a server may take. Default 30 s. */
  connectTimeoutMs?: number;
}

const EMPTY: McpToolSet = { tools: [], key: "" };

/**
 * The MCP servers of a runtime: one shared, lazily opened connection per server, their tools
 * for graph building, their status, and their shutdown with the runtime.
 */
export class McpManager implements McpToolSource {
  private readonly connections = new Map<string, McpServerConnection>();
  private readonly source: string;
  private readonly warn: (message: string) => void;

  constructor(servers: McpServers, options: McpManagerOptions = {}) {
    const reserved = new Set(options.reservedNames ?? []);
    for (const [name, definition] of Object.entries(servers).sort(([a], [b]) =>
      a.localeCompare(b),
    )) {
      this.connections.set(
        name,
        new McpServerConnection(name, definition, {
          reserved,
          connectTimeoutMs: options.connectTimeoutMs ?? 30_000,
          clientInfo: { name: "subagent-graph", version: "0.1.0" },
        }),
      );
    }
    this.source = options.source ?? "the MCP server config";
    this.warn = options.warn ?? (() => undefined);
  }

  /** Defined server names, sorted. */
  names(): string[] {
    return [...this.connections.keys()];
  }

  async toolsFor(
    selected: readonly string[] | undefined,
    agentSlug: string,
    options: McpToolsForOptions = {},
  ): Promise<McpToolSet> {
    const names = selected === undefined ? this.names() : [...new Set(selected)];
    const unknown = names.filter((name) => !this.connections.has(name));
    if (unknown.length > 0) {
      const defined = this.names();
      throw new SubagentGraphError(
        ErrorCode.UnknownMcpServer,
        `agent "${agentSlug}" lists unknown MCP server(s) ${unknown.map((n) => `"${n}"`).join(", ")} in context.mcp_servers; defined servers: ${defined.join(", ") || "(none)"} (from ${this.source}). Remove them from the agent or define them`,
        { field: "context.mcp_servers" },
      );
    }
    if (names.length === 0) return EMPTY;
    const catalogues = await Promise.all(
      names.map(async (name) => {
        const connection = this.connection(name);
        const catalogue = await connection.tools();
        return { name, catalogue, error: connection.lastError() };
      }),
    );
    const down = catalogues.filter(({ catalogue }) => !catalogue);
    if (options.required && down.length > 0) {
      throw new SubagentGraphError(
        ErrorCode.McpUnavailable,
        `agent "${agentSlug}" names MCP server(s) in context.mcp_servers that cannot be reached: ${down.map(({ name, error }) => `"${name}" (${error ?? "not connected"})`).join("; ")}, so it was not run without their tools. Fix the server (its definition in ${this.source}, or what it needs to start; "mcp list" shows its status), or remove it from the agent's context.mcp_servers`,
        { field: "context.mcp_servers" },
      );
    }
    for (const { name, catalogue, error } of catalogues) {
      if (!catalogue) {
        this.warn(
          `agent "${agentSlug}": MCP server "${name}" is unavailable (${error ?? "not connected"}): its tools are left out for now; the next run tries again`,
        );
      }
    }
    return {
      tools: catalogues.flatMap(({ catalogue }) => catalogue?.tools ?? []),
      key: catalogues.map(({ name, catalogue }) => `${name}:${catalogue?.identity ?? "-"}`).join(),
    };
  }

  /**
   * Every defined server with its status and tools. With `connect` (the default) servers not
   * connected are connected first, so the tools are current and failures are reported.
   */
  async list(options: { connect?: boolean } = {}): Promise<McpServerInfo[]> {
    if (options.connect !== false) {
      await Promise.all([...this.connections.values()].map((connection) => connection.refresh()));
    }
    return [...this.connections.values()].map((connection) => {
      const { state, tools, error, pid } = connection.status();
      return {
        name: connection.name,
        transport: connection.transport,
        status: state,
        tools,
        ...(error === undefined ? {} : { error }),
        ...(pid === undefined ? {} : { pid }),
      };
    });
  }

  /** Closes every connection; stdio servers' processes end. Idempotent. */
  async close(): Promise<void> {
    await Promise.all([...this.connections.values()].map((connection) => connection.close()));
  }

  private connection(name: string): McpServerConnection {
    const connection = this.connections.get(name);
    if (!connection) {
      throw new SubagentGraphError(
        ErrorCode.UnknownMcpServer,
        `MCP server "${name}" is not defined; defined servers: ${this.names().join(", ") || "(none)"} (from ${this.source})`,
      );
    }
    return connection;
  }
}
