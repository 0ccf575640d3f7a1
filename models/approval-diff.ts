import type { HITLRequest } from "langchain";
import type { RecordedApprovalRequest } from "./recording-format.js";

/**
 * How the request a replay paused with differs from the one the recording holds at that call
 * (empty when they agree): which tools are gated, in which order, and the decisions allowed for
 * each. The arguments come from the recorded response, and the descriptions are wording, so
 * neither is compared.
 */
export function approvalDifferences(
  recorded: Pick<RecordedApprovalRequest, "actionRequests" | "reviewConfigs">,
  actual: Pick<HITLRequest, "actionRequests" | "reviewConfigs">,
): string[] {
  const before = recorded.actionRequests.map((action) => action.name);
  const after = actual.actionRequests.map((action) => action.name);
  const dropped = before.filter((name) => !after.includes(name));
  const added = after.filter((name) => !before.includes(name));
  const differences: string[] = [];
  if (dropped.length > 0) differences.push(`the agent no longer gates ${list(dropped)}`);
  if (added.length > 0) differences.push(`the agent now gates ${list(added)}`);
  if (differences.length > 0) return differences;
  if (before.join("\n") !== after.join("\n")) {
    // The same tools, in another order or number (two calls of one tool where one was gated).
    return [`the gated calls differ: recorded ${before.join(", ")}, now ${after.join(", ")}`];
  }
  actual.reviewConfigs.forEach((config, index) => {
    const was = recorded.reviewConfigs[index]?.allowedDecisions ?? [];
    const now = config.allowedDecisions;
    if (was.join(",") !== now.join(",")) {
      differences.push(
        `the decisions allowed for ${config.actionName} changed: recorded ${was.join(", ") || "none"}, now ${now.join(", ") || "none"}`,
      );
    }
  });
  return differences;
}

/** The tool names of a request, for messages: "write_file, note". */
export function gatedTools(request: Pick<HITLRequest, "actionRequests">): string {
  return list(request.actionRequests.map((action) => action.name));
}

function list(names: readonly string[]): string {
  return [...new Set(names)].join(", ");
}
