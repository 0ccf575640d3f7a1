import type { AIMessage } from "@langchain/core/messages";
import { messagesOf } from "../util/state-messages.js";
import { TASK_TOOL_NAME } from "./task-types.js";

/**
 * Whether one `task` call may run: verdicts only, no effects. `dispatch.ts` asks `refuseCall`
 * before it loads anything (the cap and the allow-list need no subagent record, and loading
 * connects MCP servers), then `admitChild` with what it loaded; a refusal's `reason` is the
 * error ToolMessage the calling model reads, so each names the fix.
 */

/** A verdict: the call runs `child` with `allowedTools`, or is refused for `reason`. */
export type Admission<Child> =
  | { admitted: true; child: Child; allowedTools: readonly string[] }
  | { admitted: false; reason: string };

/** One task call as the caller made it. */
export interface TaskCall {
  /** The subagent asked for (`subagent_type`). */
  slug: string;
  /** The tool subset asked for; empty or absent means the subagent's whole allowed set. */
  tools?: readonly string[];
  /** Task calls in the model turn that made this one (this one included). */
  turnTaskCalls: number;
}

/** What the caller may do: its allow-list and its cap on task calls per turn. */
export interface CallerPolicy {
  allowedSlugs: readonly string[];
  maxParallelSubagents: number;
}

/**
 * The refusal of a call its caller may not make, whatever the subagent: a turn over the cap
 * (every call of that turn gets the same verdict), or a slug outside the allow-list.
 *
 * @returns the reason, or undefined when the call may go on to loading its subagent
 */
export function refuseCall(call: TaskCall, policy: CallerPolicy): string | undefined {
  const cap = policy.maxParallelSubagents;
  if (call.turnTaskCalls > cap) {
    return `refused: this turn made ${call.turnTaskCalls} task calls but at most ${cap} may run at once (max_parallel_subagents); make at most ${cap} task calls per turn`;
  }
  if (!policy.allowedSlugs.includes(call.slug)) {
    // Lists only the caller's allowed slugs: nothing about agents it may not use.
    return `unknown subagent_type ${JSON.stringify(call.slug)}: use one of ${quoted(policy.allowedSlugs)}`;
  }
  return undefined;
}

/**
 * The verdict on a call whose slug passed `refuseCall`, given the subagent loaded for it
 * (undefined when it is no longer visible to the caller).
 */
export function admitChild<Child extends { toolNames: readonly string[] }>(
  call: TaskCall,
  policy: CallerPolicy,
  child: Child | undefined,
): Admission<Child> {
  if (!child) {
    // It was allowed when this run began, and has since been deleted or unshared; the other
    // allowed slugs are all the message may name.
    const others = policy.allowedSlugs.filter((other) => other !== call.slug);
    const fix =
      others.length > 0
        ? `use one of ${quoted(others)}, or do the work without it`
        : "do the work without it";
    return refused(
      `subagent ${JSON.stringify(call.slug)} is no longer available (deleted, or no longer shared with this user, since this run began), so it did not run: ${fix}`,
    );
  }
  const requested = call.tools ?? [];
  const allowed = new Set(child.toolNames);
  const outside = requested.filter((name) => !allowed.has(name));
  if (outside.length > 0) {
    // The whole call is refused: a silent filter would run the child with tools it was not
    // meant to have, or without ones the caller counted on.
    const choices = [...child.toolNames].sort().join(", ") || "(none)";
    return refused(
      `refused: tools ${quoted(outside)} are not in the allowed set of subagent "${call.slug}"; choose from: ${choices}, or omit tools`,
    );
  }
  // An empty `tools` means the subagent's whole allowed set, as in the oh-mai-agent design.
  return {
    admitted: true,
    child,
    allowedTools: [...(requested.length > 0 ? new Set(requested) : child.toolNames)],
  };
}

/**
 * The AI message in the parent's state that made tool call `toolCallId`, and how many task
 * calls it made. createAgent sends each tool call to the tools node on its own, so the batch is
 * seen only through this message: every call of an over-cap turn reaches the same verdict,
 * also when the turn is resumed. A call not found in the state counts as a turn of one.
 */
export function callingTurn(
  state: unknown,
  toolCallId: string,
): { message: AIMessage | undefined; taskCalls: number } {
  for (const message of messagesOf(state)) {
    if (message.getType() !== "ai") continue;
    const calls = (message as AIMessage).tool_calls ?? [];
    if (!calls.some((call) => call.id === toolCallId)) continue;
    const taskCalls = calls.filter((call) => call.name === TASK_TOOL_NAME).length;
    return { message: message as AIMessage, taskCalls };
  }
  return { message: undefined, taskCalls: 1 };
}

function refused(reason: string): { admitted: false; reason: string } {
  return { admitted: false, reason };
}

function quoted(names: readonly string[]): string {
  return names.map((name) => JSON.stringify(name)).join(", ");
}
