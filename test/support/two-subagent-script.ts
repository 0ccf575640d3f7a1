import type { ChatCompletionRequestBody, FakeHandler, FakeReply } from "./fake-openai-server.js";

/**
 * One scripted turn for a fake OpenAI server: the main agent calls two subagents in one turn (a
 * researcher and a reviewer, two `task` calls), each answers, then the main agent answers. In
 * the `approval` variant the researcher first saves notes with `write_file`, which both the demo
 * researcher (agents/demo.ts) and the Deep Agents reference
 * (test/fixtures/official-hooks/deep-agent.ts) gate for a person's decision.
 */

/** The agents, told apart by their system prompts. */
export type ScriptAgent = "assistant" | "researcher" | "reviewer";

export const USER_MESSAGE = "Study tides and keep notes";
export const RESEARCH_TASK = "Research the tides of the bay";
export const REVIEW_TASK = "Review a plan to study tides";
/** Every subagent text carries one of these, so a test can spot one wherever it shows. */
export const RESEARCHER_ANSWER = "RESEARCHER: high tide at 6am, low tide at noon.";
export const REVIEWER_ANSWER = "REVIEWER: the plan is sound; add a tide gauge.";
export const RESEARCHER_SAVED = "RESEARCHER: notes saved.";
export const MAIN_ANSWER = "MAIN: both subagents reported; your tide plan is ready.";
export const SUBAGENT_MARKERS = ["RESEARCHER:", "REVIEWER:"] as const;

/** The agent a model request came from, by its system prompt. */
export function agentOf(request: ChatCompletionRequestBody): ScriptAgent {
  const system = JSON.stringify(request.messages[0]?.content ?? "");
  if (system.includes("careful researcher")) return "researcher";
  if (system.includes("critical reviewer")) return "reviewer";
  if (system.includes("helpful assistant")) return "assistant";
  throw new Error(`a model request from an unknown agent: ${system.slice(0, 80)}`);
}

/** The path argument's name of the offered `write_file` (ours: `path`; Deep Agents: `file_path`). */
function writeFileCall(request: ChatCompletionRequestBody) {
  const tool = request.tools?.find((entry) => entry.function.name === "write_file");
  const properties = Object(Object(tool?.function.parameters).properties) as Record<
    string,
    unknown
  >;
  const pathKey = "file_path" in properties ? "file_path" : "path";
  const path = pathKey === "file_path" ? "/tides.md" : "/home/gem/user-data/outputs/tides.md";
  return { name: "write_file", arguments: { [pathKey]: path, content: "High tide: 6am" } };
}

/** The fake server's handler for one variant of the turn. */
export function twoSubagentScript(variant: "plain" | "approval"): FakeHandler {
  return (request): FakeReply => {
    const agent = agentOf(request);
    const answering = request.messages.at(-1)?.role === "tool";
    if (agent === "assistant") {
      if (answering) return { content: MAIN_ANSWER };
      return {
        content: "",
        toolCalls: [
          { name: "task", arguments: { subagent_type: "researcher", description: RESEARCH_TASK } },
          { name: "task", arguments: { subagent_type: "reviewer", description: REVIEW_TASK } },
        ],
      };
    }
    if (agent === "reviewer") return { content: REVIEWER_ANSWER };
    if (variant === "plain") return { content: RESEARCHER_ANSWER };
    if (answering) return { content: RESEARCHER_SAVED };
    return { content: "", toolCalls: [writeFileCall(request)] };
  };
}
