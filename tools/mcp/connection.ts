import { createHash } from "node:crypto";
import type { CallbackManagerForToolRun } from "@langchain/core/callbacks/manager";
import { ToolMessage } from "@langchain/core/messages";
import type { RunnableConfig } from "@langchain/core/runnables";
import { DynamicStructuredTool, type StructuredToolInterface } from "@langchain/core/tools";
import { ErrorCode, SubagentGraphError } from "../../errors.js";
import type { GuardedClient, McpTransport } from "./client.js";
import { type McpServerDefinition, type McpTransportKind, transportOf } from "./config.js";
import { describeError, StderrTail } from "./diagnostics.js";
import { mcpToolNames } from "./names.js";

/** The SDK side of a connection, imported on the first connection (see `client.ts`). */
type McpClientKit = typeof import("./client.js");
let loadingKit: Promise<McpClientKit> | undefined;
function loadKit(): Promise<McpClientKit> {
  loadingKit ??= import("./client.js");
  return loadingKit;
}

/**
 * Where a server stands:
 * - `idle`: not connected yet (servers connect on first use) or closed with the runtime;
 * - `connecting`: a connection is being set up;
 * - `connected`: live, its tools listed;
 * - `unavailable`: the last connection failed or was lost (`error` says why); the next call
 *   (or `mcp list`) connects again.
 */
export type McpServerState = "idle" | "connecting" | "connected" | "unavailable";

/** The tools one connection of a server offered, exposed under their `mcp_` names. */
export interface McpCatalogue {
  /** Changes when the tool set changes (names, descriptions or schemas): graphs keyed by it. */
  identity: string;
  /** One tool per server tool; each calls the server's current connection. */
  tools: StructuredToolInterface[];
}

export interface McpConnectionOptions {
  /** Names the MCP tools must not take (the registered tools'). */
  reserved: ReadonlySet<string>;
  /** How long connecting (start-up, handshake, tool listing) may take. */
  connectTimeoutMs: number;
  /** Who we are to the server. */
  clientInfo: { name: string; version: string };
}

interface Live {
  kit: McpClientKit;
  client: GuardedClient;
  transport: McpTransport;
  /** The adapter's tools of this connection, by the server's own tool names. */
  inner: Map<string, DynamicStructuredTool>;
  /** Set once the connection is closed or found broken: nothing may use it any more. */
  lost: boolean;
  stderr: StderrTail;
}

/**
 * One MCP server of a runtime: at most one connection at a time, opened on first use and shared
 * by every graph and run. Its tools are exposed as stable wrappers that call whatever connection
 * is current, so a reconnect needs no graph rebuild unless the tool set itself changed.
 *
 * A connection that breaks (the process exits, the HTTP session is gone) is dropped; the call
 * that sees the break, or the next call when it broke in between, gets an error ToolMessage
 * ("MCP server … is unavailable: …; it will be reconnected on the next call"), and the call
 * after that connects again. Calls never throw for a server problem, so a run goes on.
 */
export class McpServerConnection {
  readonly transport: McpTransportKind;
  private live: Live | undefined;
  private connecting: Promise<Live> | undefined;
  /** The connection {@link connecting} is setting up, so closing can cut a slow start short. */
  private opening: Live | undefined;
  private catalogue: McpCatalogue | undefined;
  private error: string | undefined;
  /** A connection was lost and no call has reported it yet. */
  private unreported = false;
  private closed = false;
  private readonly closing = new Set<Promise<void>>();

  constructor(
    readonly name: string,
    private readonly definition: McpServerDefinition,
    private readonly options: McpConnectionOptions,
  ) {
    this.transport = transportOf(definition);
  }

  /** State, last error, tool names (as last listed) and the process id of a live stdio server. */
  status(): { state: McpServerState; error?: string; tools: string[]; pid?: number } {
    const tools = this.catalogue?.tools.map((tool) => tool.name) ?? [];
    if (this.live) {
      const pid = this.live.kit.processIdOf(this.live.transport);
      return { state: "connected", tools, ...(pid ? { pid } : {}) };
    }
    if (this.connecting) return { state: "connecting", tools };
    if (this.error !== undefined && !this.closed) {
      return { state: "unavailable", error: this.error, tools };
    }
    return { state: "idle", tools };
  }

  /**
   * The server's tools, for a graph build: connects on first use; after that the tools as last
   * listed, also while the server is down (its calls then say so and reconnect). Undefined when
   * it never connected; {@link lastError} says why.
   */
  async tools(): Promise<McpCatalogue | undefined> {
    if (this.catalogue) return this.catalogue;
    try {
      await this.connect();
    } catch {
      return undefined;
    }
    return this.catalogue;
  }

  /** Why the last connection failed or was lost. */
  lastError(): string | undefined {
    return this.error;
  }

  /** Connects unless connected (an explicit refresh, e.g. `mcp list`); failures land in status. */
  async refresh(): Promise<void> {
    await this.connect().catch(() => undefined);
  }

  /** Closes the connection (a stdio server's process ends with it). Idempotent. */
  async close(): Promise<void> {
    this.closed = true;
    // A server still starting (or hanging) is stopped now rather than after the connect timeout.
    await this.opening?.client.close().catch(() => undefined);
    await this.connecting?.catch(() => undefined);
    const live = this.live;
    this.live = undefined;
    if (live) this.closing.add(this.shutDown(live));
    await Promise.allSettled([...this.closing]);
  }

  private connect(): Promise<Live> {
    if (this.live) return Promise.resolve(this.live);
    if (this.closed) return Promise.reject(this.closedError());
    this.connecting ??= this.open().finally(() => {
      this.connecting = undefined;
    });
    return this.connecting;
  }

  private closedError(): SubagentGraphError {
    return new SubagentGraphError(
      ErrorCode.Closed,
      `MCP server "${this.name}" is not connected: the runtime is closed (create a new runtime to use it again)`,
    );
  }

  private async open(): Promise<Live> {
    const kit = await loadKit();
    if (this.closed) throw this.closedError();
    const stderr = new StderrTail();
    const transport = kit.createTransport(this.definition, stderr);
    const client = new kit.GuardedClient(this.options.clientInfo, { capabilities: {} });
    const live: Live = { kit, client, transport, inner: new Map(), lost: false, stderr };
    this.opening = live;
    let listed: DynamicStructuredTool[];
    try {
      await client.connect(transport, { timeout: this.options.connectTimeoutMs });
      listed = await kit.listTools(this.name, client);
      // Closed right after listing, before `onclose` below could notice: a failed start too.
      if (!client.transport) throw kit.closedError();
      // Start-up chatter is not a crash report: only what comes after counts.
      stderr.clear();
    } catch (error) {
      live.lost = true;
      await client.close().catch(() => undefined);
      const closed = kit.isClosedError(error);
      const reason = !closed
        ? describeError(error)
        : this.transport === "stdio"
          ? "its process exited during start-up"
          : "the connection was closed during start-up";
      this.error = `${reason}${stderr.suffix()}`;
      this.unreported = false;
      throw new SubagentGraphError(
        ErrorCode.McpUnavailable,
        `MCP server "${this.name}" cannot be reached: ${this.error}`,
        { cause: error },
      );
    } finally {
      this.opening = undefined;
    }
    if (this.closed) {
      live.lost = true;
      await this.shutDown(live);
      throw this.closedError();
    }
    for (const tool of listed) live.inner.set(tool.name, tool);
    client.onclose = () => this.lose(live, this.closeReason(live));
    this.live = live;
    this.error = undefined;
    this.unreported = false;
    this.updateCatalogue(listed);
    return live;
  }

  private closeReason(live: Live): string {
    const what = this.transport === "stdio" ? "its process exited" : "the connection was closed";
    return `${what}${live.stderr.suffix()}`;
  }

  /** Drops a broken connection (once) and closes what is left of it in the background. */
  private lose(live: Live, reason: string): void {
    if (live.lost) return;
    live.lost = true;
    if (this.live === live) this.live = undefined;
    this.error = reason;
    this.unreported = true;
    const closing = this.shutDown(live);
    this.closing.add(closing);
    void closing.finally(() => this.closing.delete(closing));
  }

  private async shutDown(live: Live): Promise<void> {
    live.lost = true;
    await live.kit.endSession(live.transport);
    await live.client.close().catch(() => undefined);
  }

  private updateCatalogue(listed: readonly DynamicStructuredTool[]): void {
    const names = mcpToolNames(
      this.name,
      listed.map((tool) => tool.name),
      this.options.reserved,
    );
    const entries = listed.map((tool) => ({
      tool,
      exposed: names.get(tool.name) ?? tool.name,
    }));
    const identity = createHash("sha256")
      .update(
        JSON.stringify(
          entries
            .map(({ tool, exposed }) => [exposed, tool.name, tool.description, tool.schema])
            .sort((a, b) => String(a[0]).localeCompare(String(b[0]))),
        ),
      )
      .digest("hex")
      .slice(0, 12);
    if (this.catalogue?.identity === identity) return;
    this.catalogue = {
      identity,
      tools: entries.map(({ tool, exposed }) => this.wrap(tool, exposed)),
    };
  }

  /** A stable tool under the exposed name that runs the server tool on the current connection. */
  private wrap(tool: DynamicStructuredTool, exposed: string): StructuredToolInterface {
    const original = tool.name;
    return new DynamicStructuredTool({
      name: exposed,
      description: tool.description || `Tool "${original}" of MCP server "${this.name}".`,
      schema: tool.schema,
      responseFormat: "content_and_artifact",
      metadata: { ...tool.metadata, mcp_server: this.name, mcp_tool: original },
      func: (input: unknown, runManager?: CallbackManagerForToolRun, config?: RunnableConfig) =>
        this.call(original, exposed, input, runManager, config),
    });
  }

  private async call(
    original: string,
    exposed: string,
    input: unknown,
    runManager: CallbackManagerForToolRun | undefined,
    config: RunnableConfig | undefined,
  ): Promise<[unknown, unknown]> {
    const toolCallId = (config as { toolCall?: { id?: string } } | undefined)?.toolCall?.id ?? "";
    const fail = (text: string): [ToolMessage, undefined] => [
      new ToolMessage({ content: text, tool_call_id: toolCallId, name: exposed, status: "error" }),
      undefined,
    ];
    if (this.closed) return fail(`MCP server "${this.name}" is unavailable: the runtime is closed`);
    if (this.unreported) {
      // The connection broke since the last call: say so once; the next call reconnects.
      this.unreported = false;
      return fail(this.unavailable());
    }
    let live: Live;
    try {
      live = await this.connect();
    } catch {
      return fail(this.unavailable());
    }
    const inner = live.inner.get(original);
    if (!inner) {
      return fail(
        `MCP server "${this.name}" no longer offers the tool "${original}" (it lists: ${[...live.inner.keys()].join(", ") || "none"}); use another tool`,
      );
    }
    try {
      const [content, artifact] = (await inner.func(input, runManager, config)) as [
        unknown,
        unknown,
      ];
      return [plainContent(content), artifact];
    } catch (error) {
      if (config?.signal?.aborted) throw error;
      if (live.lost || live.kit.isConnectionLoss(error)) {
        // Already lost (its process exited): the reason recorded then is the better one.
        if (!live.lost) this.lose(live, describeError(error));
        this.unreported = false;
        return fail(this.unavailable());
      }
      // The adapter's own messages already name the tool and the server.
      const message = describeError(error);
      return fail(
        message.startsWith("MCP tool ")
          ? message
          : `MCP tool "${original}" of server "${this.name}" failed: ${message}`,
      );
    }
  }

  private unavailable(): string {
    return `MCP server "${this.name}" is unavailable: ${this.error ?? "not connected"}; it will be reconnected on the next call`;
  }
}

/**
 * The adapter returns one text block with structured content as an object, which a ToolMessage
 * would show as JSON: the model gets the text (the structured content stays in the artifact).
 */
function plainContent(content: unknown): unknown {
  if (typeof content === "object" && content !== null && !Array.isArray(content)) {
    const block = content as { type?: unknown; text?: unknown };
    if (block.type === "text" && typeof block.text === "string") return block.text;
  }
  return content;
}
