import { AIMessage, type BaseMessage, ToolMessage } from "@langchain/core/messages";
import { type AgentMiddleware, humanInTheLoopMiddleware, type InterruptOnConfig } from "langchain";
import { type InterruptOn, resolveGates } from "../agents/interrupt-on.js";

/**
 * The approval gate of an agent whose `context.interrupt_on` gates any tool: langchain's
 * `humanInTheLoopMiddleware`, which pauses the run after a model turn that calls a gated tool
 * (before any of that turn's tools run) with one request for all its gated calls, and applies
 * the decisions it is resumed with. None (an empty list) when nothing is gated, so an agent
 * without approvals keeps its graph and costs exactly as before.
 */
export function createApprovalsMiddleware(interruptOn: InterruptOn | undefined): AgentMiddleware[] {
  const gates = resolveGates(interruptOn);
  if (gates.size === 0) return [];
  const config: Record<string, InterruptOnConfig> = {};
  for (const [name, gate] of gates) {
    config[name] = {
      allowedDecisions: gate.allowedDecisions,
      ...(gate.description === undefined ? {} : { description: gate.description }),
    };
  }
  return [answeringSkippedCalls(humanInTheLoopMiddleware({ interruptOn: config }))];
}

type HitlMiddleware = ReturnType<typeof humanInTheLoopMiddleware>;
type AfterModelHook = Extract<NonNullable<HitlMiddleware["afterModel"]>, { hook: unknown }>;

/**
 * langchain's middleware as it is, except for one gap it leaves: when a person rejects a call,
 * it sends the model back to work without running that turn's other calls (the approved and the
 * ungated ones) and without answering them, and an assistant turn with an unanswered call makes
 * the next model request invalid for good (OpenAI-compatible APIs answer 400). Each such call
 * gets a tool message saying it was not run and why, so the model can call it again.
 */
function answeringSkippedCalls(middleware: HitlMiddleware): HitlMiddleware {
  const afterModel = middleware.afterModel as AfterModelHook | undefined;
  if (!afterModel || typeof afterModel.hook !== "function") return middleware;
  const hook = afterModel.hook;
  const wrapped: AfterModelHook = {
    ...afterModel,
    hook: async (state, runtime) => {
      const update = await hook(state, runtime);
      if (update?.jumpTo !== "model" || !Array.isArray(update.messages)) return update;
      const messages = update.messages as BaseMessage[];
      const [turn] = messages;
      if (!turn || !AIMessage.isInstance(turn)) return update;
      const answered = new Set(
        messages.filter(ToolMessage.isInstance).map((message) => message.tool_call_id),
      );
      const rejected = messages
        .filter(ToolMessage.isInstance)
        .map((message) => message.name)
        .join(", ");
      const skipped = (turn.tool_calls ?? []).filter((call) => !answered.has(call.id ?? ""));
      return {
        ...update,
        messages: [
          ...messages,
          ...skipped.map(
            (call) =>
              new ToolMessage({
                content: `not run: the person rejected another call of this turn (${rejected}); call ${call.name} again if it is still needed`,
                name: call.name,
                tool_call_id: call.id ?? "",
                status: "error",
              }),
          ),
        ],
      };
    },
  };
  return { ...middleware, afterModel: wrapped } as HitlMiddleware;
}
