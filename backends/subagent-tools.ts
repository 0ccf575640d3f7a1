import type { StructuredToolInterface } from "@langchain/core/tools";
import type { AgentRecord } from "../agents/schema.js";
import { TASK_TOOL_NAME } from "../contract.js";
import type { ToolRegistry } from "../tools/registry.js";

/**
 * Tools a subagent may never have, whatever its config says: delegation (no nesting), talking
 * to the user or other tasks, shell commands, and cross-plugin `call_*` APIs. `mcp_*` tools stay.
 */
export const SUBAGENT_FORBIDDEN_TOOLS: ReadonlySet<string> = new Set([
  TASK_TOOL_NAME,
  "ask_user",
  "send_message",
  "run_command",
  "list_my_tasks",
  "create_subtask",
  "inject_task",
]);

/** True when a subagent may be given a tool of this name. */
export function isToolAllowedForSubagent(name: string): boolean {
  return !SUBAGENT_FORBIDDEN_TOOLS.has(name) && !name.startsWith("call_");
}

/** `tools` without the ones a subagent may never have. */
export function withoutForbiddenTools(
  tools: readonly StructuredToolInterface[],
): StructuredToolInterface[] {
  return tools.filter((tool) => isToolAllowedForSubagent(tool.name));
}

/**
 * The names of the tools a subagent may use: its configured selection (every registered tool
 * when unset) plus `extraTools` (its MCP tools), minus the never-allowed ones.
 */
export function subagentToolNames(
  record: AgentRecord,
  registry: ToolRegistry,
  extraTools: readonly StructuredToolInterface[] = [],
): string[] {
  return withoutForbiddenTools([
    ...registry.select(record.config_json.context.tools, record.slug),
    ...extraTools,
  ]).map((tool) => tool.name);
}
