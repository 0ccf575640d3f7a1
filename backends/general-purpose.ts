import type { InterruptOn } from "../agents/interrupt-on.js";
import { type AgentRecord, GENERAL_PURPOSE_SLUG } from "../agents/schema.js";

export { GENERAL_PURPOSE_SLUG };

/** How the general-purpose subagent is described to the calling model. */
export const GENERAL_PURPOSE_DESCRIPTION =
  "A general-purpose agent with your own model and tools (minus delegation and user-facing ones), for any self-contained task that needs no specialist.";

/**
 * The general-purpose subagent of `parent`: the parent's model, tool, MCP server and knowledge
 * base selection and approval gates (the
 * never-allowed tools are removed like for any subagent), no skills (they belong to the agent
 * that lists them), its own max_rounds default, and a
 * system prompt rendered per call from {@link generalPurposePrompt}. Its id and version derive
 * from the parent's, so a parent update rebuilds it.
 */
export function generalPurposeRecord(parent: AgentRecord): AgentRecord {
  const parentContext = parent.config_json.context;
  return {
    ...parent,
    id: `${GENERAL_PURPOSE_SLUG}:${parent.id}`,
    slug: GENERAL_PURPOSE_SLUG,
    name: "General-purpose subagent",
    description: GENERAL_PURPOSE_DESCRIPTION,
    backend_id: "SubAgentBackend",
    is_subagent: true,
    is_default: false,
    config_json: {
      context: {
        ...(parentContext.model === undefined ? {} : { model: parentContext.model }),
        ...(parentContext.tools === undefined ? {} : { tools: parentContext.tools }),
        ...(parentContext.mcp_servers === undefined
          ? {}
          : { mcp_servers: parentContext.mcp_servers }),
        // The caller's knowledge bases, resolved again for the same user when it is called.
        ...(parentContext.knowledge_bases === undefined
          ? {}
          : { knowledge_bases: parentContext.knowledge_bases }),
        // The caller's gates apply to the same tools in the child (`task` it cannot call).
        ...(parentContext.interrupt_on === undefined
          ? {}
          : { interrupt_on: withoutTask(parentContext.interrupt_on) }),
        // Skills belong to the agent that lists them: a parent's never reach its children.
        skills: [],
        subagents: [],
      },
    },
  };
}

function withoutTask(interruptOn: InterruptOn): InterruptOn {
  const { task: _task, ...rest } = interruptOn;
  return rest;
}

/** True for the record made by {@link generalPurposeRecord} (never a stored agent). */
export function isGeneralPurpose(record: AgentRecord): boolean {
  return record.id.startsWith(`${GENERAL_PURPOSE_SLUG}:`);
}

/**
 * The general-purpose subagent's system prompt for one call: its role, the intent and the tools
 * it may use. Both are escaped where they go into the XML-like markup, so an intent cannot close
 * a tag and inject instructions; the human message still carries the intent verbatim.
 */
export function generalPurposePrompt(intent: string, toolNames: readonly string[]): string {
  const tools = toolNames.length > 0 ? toolNames.map(escapeMarkup).join(", ") : "(none)";
  return [
    "<role>",
    "You are a general-purpose subagent. Another agent handed you one self-contained task. Work",
    "on it alone: you cannot ask questions, talk to the user or delegate further.",
    "</role>",
    "<intent>",
    escapeMarkup(intent),
    "</intent>",
    `<tools>${tools}</tools>`,
    "<completion>",
    "Use your tools where they help; call independent tools in the same turn so they run in",
    "parallel. When you are done, answer with a final message without tool calls: it is the only",
    "thing the other agent will see, so make it complete, concise and self-contained.",
    "</completion>",
  ].join("\n");
}

function escapeMarkup(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}
