import { humanInTheLoopMiddleware, type InterruptOnConfig } from "langchain";
import { type InterruptOn, resolveGates } from "../agents/interrupt-on.js";

/**
 * The approval gate of an agent whose `context.interrupt_on` gates any tool: langchain's
 * `humanInTheLoopMiddleware`, which pauses the run after a model turn that calls a gated tool
 * (before any of that turn's tools run) with one request for all its gated calls, and applies
 * the decisions it is resumed with. None (an empty list) when nothing is gated, so an agent
 * without approvals keeps its graph and costs exactly as before.
 */
export function createApprovalsMiddleware(interruptOn: InterruptOn | undefined) {
  const gates = resolveGates(interruptOn);
  if (gates.size === 0) return [];
  const config: Record<string, InterruptOnConfig> = {};
  for (const [name, gate] of gates) {
    config[name] = {
      allowedDecisions: gate.allowedDecisions,
      ...(gate.description === undefined ? {} : { description: gate.description }),
    };
  }
  return [humanInTheLoopMiddleware({ interruptOn: config })];
}
