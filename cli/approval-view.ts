import type { PendingApproval } from "../middleware/approval-request.js";
import { oneLine } from "./text.js";

/** How long a task description or an argument list may be on one line of a listing. */
const LINE_CHARS = 100;

/**
 * Who asks: the main agent (by slug when known), or the subagent with the task it was given.
 * One line, for a listing.
 */
export function askedBy(pending: PendingApproval, mainAgent: string | undefined): string {
  const { subagent } = pending.value;
  if (subagent) {
    return `subagent "${subagent.subagent_type}" (task: ${oneLine(subagent.description, LINE_CHARS)})`;
  }
  return mainAgent ? `the main agent "${mainAgent}"` : "the main agent";
}

/**
 * One pending request as the chat shows it before asking: who asks, then each tool call with its
 * arguments as indented JSON, the description its gate gives, and the decisions allowed.
 *
 * @example
 * ⏸ approval needed (1 of 1), asked by subagent "researcher" (task: find sources)
 *   id: 6c1f…
 *   tool: write_file
 *   arguments:
 *     { "path": "/home/gem/user-data/outputs/a.md", "content": "…" }
 *   description: Tool execution requires approval
 *   decisions: approve, edit, reject
 */
export function describePending(
  pending: PendingApproval,
  position: { index: number; count: number },
  mainAgent: string | undefined,
): string {
  const { actionRequests } = pending.value;
  const lines = [
    `⏸ approval needed (${position.index + 1} of ${position.count}), asked by ${askedBy(pending, mainAgent)}`,
    `  id: ${pending.id}`,
  ];
  actionRequests.forEach((action, index) => {
    if (actionRequests.length > 1) lines.push(`  call ${index + 1} of ${actionRequests.length}:`);
    lines.push(`  tool: ${action.name}`);
    lines.push("  arguments:");
    lines.push(indent(JSON.stringify(action.args ?? {}, null, 2), "    "));
    const description = ownDescription(action.description, action.name);
    if (description) lines.push(`  description: ${indent(description, "    ").trimStart()}`);
    lines.push(`  decisions: ${allowedDecisions(pending, index).join(", ")}`);
  });
  return lines.join("\n");
}

/** The decisions allowed on the `index`th tool call of a request. */
export function allowedDecisions(pending: PendingApproval, index: number): string[] {
  return [...(pending.value.reviewConfigs[index]?.allowedDecisions ?? [])];
}

/** A tool call's arguments on one line, cut to fit a listing. */
export function argumentsLine(args: unknown): string {
  return oneLine(JSON.stringify(args ?? {}), LINE_CHARS);
}

/**
 * A call's description without the "Tool: <name>\nArgs: <json>" that langchain's middleware
 * appends to its default one: the tool and its arguments are shown above it already.
 */
function ownDescription(description: string | undefined, tool: string): string | undefined {
  if (!description) return undefined;
  const repeated = description.indexOf(`\n\nTool: ${tool}\nArgs: `);
  return (repeated >= 0 ? description.slice(0, repeated) : description).trim() || undefined;
}

function indent(text: string, prefix: string): string {
  return text
    .split("\n")
    .map((line) => `${prefix}${line}`)
    .join("\n");
}
