import type { AIMessage, BaseMessage, ToolMessage } from "@langchain/core/messages";
import { isFileWriteArtifact, isOutputPath } from "../sandbox/artifacts.js";
import type { SubagentRun, SubagentRunStatus, SubagentUsage } from "./subagent-runs.js";

/** The fields of a record known when a call starts. */
export interface RunIdentity {
  id: string;
  subagent_type: string;
  /**
   * Empty when the call ended before its child ran (refused, or the subagent could not be
   * loaded or built), so no child thread was made.
   */
  child_thread_id: string;
  description: string;
  started_at: string;
}

/** No tokens. */
export function zeroUsage(): SubagentUsage {
  return { input_tokens: 0, output_tokens: 0, total_tokens: 0 };
}

/** Token usage summed over the AI messages' usage metadata (absent metadata counts as zero). */
export function sumUsage(messages: readonly BaseMessage[]): SubagentUsage {
  const usage = zeroUsage();
  for (const message of messages) {
    const metadata = (message as AIMessage).usage_metadata;
    if (message.getType() !== "ai" || !metadata) continue;
    usage.input_tokens += metadata.input_tokens ?? 0;
    usage.output_tokens += metadata.output_tokens ?? 0;
    usage.total_tokens += metadata.total_tokens ?? 0;
  }
  return usage;
}

/** Adds usages together. */
export function addUsage(usages: readonly SubagentUsage[]): SubagentUsage {
  const total = zeroUsage();
  for (const usage of usages) {
    total.input_tokens += usage.input_tokens;
    total.output_tokens += usage.output_tokens;
    total.total_tokens += usage.total_tokens;
  }
  return total;
}

/** A finished record: what the child did (from its messages) and how it ended. */
export function finishedRun(
  identity: RunIdentity,
  outcome: {
    status: SubagentRunStatus;
    messages: readonly BaseMessage[];
    maxRoundsReached: boolean;
    preview: string;
    error: string | null;
  },
): SubagentRun {
  return {
    ...identity,
    status: outcome.status,
    rounds: outcome.messages.filter((message) => message.getType() === "ai").length,
    max_rounds_reached: outcome.maxRoundsReached,
    finished_at: new Date().toISOString(),
    result_preview: outcome.preview,
    error: outcome.error,
    artifacts: writtenOutputs(outcome.messages),
    usage: sumUsage(outcome.messages),
  };
}

/**
 * The files a child wrote to the (shared) outputs folder, in first-write order: read from its
 * successful `write_file`/`edit_file` ToolMessages, so the list is rebuilt from checkpoints
 * alone (also for a child resumed after a crash) and a failed write is never listed.
 */
export function writtenOutputs(messages: readonly BaseMessage[]): string[] {
  const paths = new Set<string>();
  for (const message of messages) {
    if (message.getType() !== "tool") continue;
    const { artifact, status } = message as ToolMessage;
    if (status !== "error" && isFileWriteArtifact(artifact) && isOutputPath(artifact.path)) {
      paths.add(artifact.path);
    }
  }
  return [...paths];
}
