/**
 * Test helpers for users of subagent-graph: a strict scripted chat model to drive agents and
 * subagents without a network. Import from `subagent-graph/testing`.
 */

export type {
  ScriptedCall,
  ScriptedReply,
  ScriptedToolCall,
  ScriptStep,
} from "./models/scripted.js";
export { ScriptedChatModel } from "./models/scripted.js";
