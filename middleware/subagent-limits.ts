import type { BaseMessage } from "@langchain/core/messages";
import { ToolMessage } from "@langchain/core/messages";
import { Command } from "@langchain/langgraph";
import { createMiddleware } from "langchain";
import { z } from "zod";

/**
 * The per-call bounds of a subagent run, passed in its context by the task tool (so one compiled
 * subagent graph serves every call, and the values are re-read on each dispatch).
 */
export interface SubagentBounds {
  /** Model calls the child may make. */
  maxRounds: number;
  /** Tool names the child may see and run for this call. */
  allowedTools: ReadonlySet<string>;
}

/** The error a guarded tool call gets; the wording is the oh-mai-agent design's. */
export function notAllowedMessage(name: string): string {
  return `tool not in allowed set: ${name}`;
}

/**
 * Bounds a subagent's loop, reading {@link SubagentBounds} from the run's context:
 *
 * - **Rounds**: when a model call is due and `max_rounds` calls were made already, the model is
 *   not called: the step only sets `max_rounds_reached`, adds no message, and the agent ends (its
 *   last message is then the tools' answers, and langchain's model router ends an agent whose
 *   last message is not an AI message). The last assistant message (possibly tool calls only, so
 *   empty text) is the answer. Checked inside the model call, not in a `beforeModel` hook: a hook
 *   is a graph node of its own, one more superstep and checkpoint before every model call of
 *   every child (bench/README.md, "Scenario: dispatch"). Not `modelCallLimitMiddleware`, which
 *   appends an AI message of its own that would become the answer.
 * - **Schemas**: the model is offered only the allowed tools.
 * - **Execution guard**: a call to any other tool (hallucinated, injected, or merely hidden from
 *   the model) is answered `tool not in allowed set: <name>` and its handler never runs. Having a
 *   `wrapToolCall` also gives an agent with zero tools a tools node, so such a call is answered
 *   instead of being left dangling as the final message.
 */
export function createSubagentLimitsMiddleware(readBounds: (context: unknown) => SubagentBounds) {
  return createMiddleware({
    name: "SubagentLimits",
    stateSchema: z.object({ max_rounds_reached: z.boolean().default(false) }),
    wrapModelCall: async (request, handler) => {
      const { maxRounds, allowedTools } = readBounds(request.runtime.context);
      if (countRounds(request.state.messages) >= maxRounds) {
        return new Command({ update: { max_rounds_reached: true } });
      }
      const tools = request.tools.filter((tool) => allowedTools.has(toolName(tool)));
      return handler({ ...request, tools });
    },
    wrapToolCall: async (request, handler) => {
      const { allowedTools } = readBounds(request.runtime.context);
      const name = request.toolCall.name;
      if (allowedTools.has(name)) return handler(request);
      return new ToolMessage({
        content: notAllowedMessage(name),
        tool_call_id: request.toolCall.id ?? "",
        name,
        status: "error",
      });
    },
  });
}

/** Model calls made so far in this turn: one AI message per call. */
export function countRounds(messages: readonly BaseMessage[]): number {
  // Since the newest human message: a background task's child is given follow-up messages on
  // its own thread (`update_async_task`), and each gets `max_rounds` of its own.
  let rounds = 0;
  for (let index = messages.length - 1; index >= 0; index -= 1) {
    const type = messages[index]?.getType();
    if (type === "human") break;
    if (type === "ai") rounds += 1;
  }
  return rounds;
}

function toolName(tool: unknown): string {
  const name = (tool as { name?: unknown } | null)?.name;
  return typeof name === "string" ? name : "";
}
