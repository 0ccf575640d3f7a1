import type { UnnumberedEvent } from "./wire.js";

/** A namespace's status, as the protocol's `lifecycle` events and `agent.getTree` name them. */
export type AgentStatus = "started" | "running" | "completed" | "failed" | "interrupted";

/** A node of `agent.getTree`'s answer. */
export interface AgentTreeNode {
  namespace: string[];
  status: AgentStatus;
  graph_name: string;
  children?: AgentTreeNode[];
}

const TERMINAL: ReadonlySet<AgentStatus> = new Set(["completed", "failed", "interrupted"]);

/**
 * The namespaces one run has shown (the root graph, its model calls, its subagents and theirs),
 * each with its status: the source of the `lifecycle` events and of `agent.getTree`. A
 * namespace's graph name is its last segment before the `:` (`tools:<task id>` → `tools`), as
 * LangGraph names a subgraph.
 */
export class AgentTree {
  private readonly nodes = new Map<
    string,
    { namespace: string[]; status: AgentStatus; graphName: string }
  >();

  constructor(private readonly rootGraphName: string) {}

  /** The root's first event: the run is going. */
  start(): UnnumberedEvent[] {
    return this.set([], "running");
  }

  /** `lifecycle started` for each prefix of `namespace` not seen yet. */
  ensure(namespace: readonly string[]): UnnumberedEvent[] {
    const events: UnnumberedEvent[] = [];
    for (let length = 1; length <= namespace.length; length += 1) {
      const prefix = namespace.slice(0, length);
      if (!this.nodes.has(prefix.join("|"))) events.push(...this.set(prefix, "started"));
    }
    return events;
  }

  /**
   * Sets the status of `namespace` and of every namespace below it that has not ended yet
   * (deepest first), with their lifecycle events.
   */
  end(namespace: readonly string[], status: AgentStatus, error?: string): UnnumberedEvent[] {
    const key = namespace.join("|");
    const below = [...this.nodes.values()]
      .filter(
        (node) =>
          node.namespace.length > namespace.length &&
          node.namespace.slice(0, namespace.length).join("|") === key &&
          !TERMINAL.has(node.status),
      )
      .sort((a, b) => b.namespace.length - a.namespace.length);
    const events = below.flatMap((node) =>
      this.set(node.namespace, status === "failed" ? "failed" : status),
    );
    if (!TERMINAL.has(this.nodes.get(key)?.status ?? "started")) {
      events.push(...this.set([...namespace], status, error));
    }
    return events;
  }

  /** Whether the root has ended. */
  get ended(): boolean {
    return TERMINAL.has(this.nodes.get("")?.status ?? "started");
  }

  /** The tree below `namespace` (the whole run's from the root). */
  tree(namespace: readonly string[] = []): AgentTreeNode {
    const key = namespace.join("|");
    const node = this.nodes.get(key);
    const children = [...this.nodes.values()]
      .filter(
        (candidate) =>
          candidate.namespace.length === namespace.length + 1 &&
          candidate.namespace.slice(0, namespace.length).join("|") === key,
      )
      .sort((a, b) => a.namespace.join("|").localeCompare(b.namespace.join("|")))
      .map((child) => this.tree(child.namespace));
    return {
      namespace: [...namespace],
      status: node?.status ?? "started",
      graph_name: node?.graphName ?? this.graphNameOf(namespace),
      ...(children.length > 0 ? { children } : {}),
    };
  }

  private set(namespace: string[], status: AgentStatus, error?: string): UnnumberedEvent[] {
    const graphName = this.graphNameOf(namespace);
    this.nodes.set(namespace.join("|"), { namespace, status, graphName });
    return [
      {
        method: "lifecycle",
        namespace,
        data: { event: status, graph_name: graphName, ...(error ? { error } : {}) },
      },
    ];
  }

  private graphNameOf(namespace: readonly string[]): string {
    const last = namespace.at(-1);
    if (last === undefined) return this.rootGraphName;
    const colon = last.indexOf(":");
    return colon < 0 ? last : last.slice(0, colon);
  }
}
