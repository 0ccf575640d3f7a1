import type { StructuredToolInterface } from "@langchain/core/tools";
import { ErrorCode, SubagentGraphError } from "../errors.js";

/**
 * The tools agents may be given, by name. An agent's `context.tools` selects from it; unset means
 * every registered tool (the design's default-all rule), `[]` means none.
 */
export class ToolRegistry {
  private readonly tools = new Map<string, StructuredToolInterface>();

  constructor(tools: Iterable<StructuredToolInterface> = []) {
    for (const tool of tools) this.register(tool);
  }

  /** Adds a tool; a second tool with the same name is an error (never a silent replacement). */
  register(tool: StructuredToolInterface): void {
    if (this.tools.has(tool.name)) {
      throw new SubagentGraphError(
        ErrorCode.Validation,
        `tool name "${tool.name}" is registered twice: rename one of the tools`,
        { field: "tools" },
      );
    }
    this.tools.set(tool.name, tool);
  }

  /** Registered tool names, sorted. */
  names(): string[] {
    return [...this.tools.keys()].sort();
  }

  /** Registered tools' names and descriptions, sorted by name. */
  describe(): { name: string; description: string }[] {
    return this.names().map((name) => ({
      name,
      description: (this.tools.get(name) as StructuredToolInterface).description,
    }));
  }

  /**
   * The tools an agent's config selects: all of them when `names` is undefined, else exactly
   * the named ones (in the given order). An unknown name is an error naming the agent, the
   * tool and the registered tools.
   */
  select(names: readonly string[] | undefined, agentSlug: string): StructuredToolInterface[] {
    if (names === undefined) return [...this.tools.values()];
    const unknown = names.filter((name) => !this.tools.has(name));
    if (unknown.length > 0) {
      throw new SubagentGraphError(
        ErrorCode.UnknownTool,
        `agent "${agentSlug}" lists unknown tool(s) ${unknown.map((n) => `"${n}"`).join(", ")} in context.tools; registered tools: ${this.names().join(", ") || "(none)"}. Remove them or register the tools`,
        { field: "context.tools" },
      );
    }
    return [...new Set(names)].map((name) => this.tools.get(name) as StructuredToolInterface);
  }
}
