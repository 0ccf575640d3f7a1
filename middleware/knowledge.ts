import type { StructuredToolInterface } from "@langchain/core/tools";
import { createMiddleware } from "langchain";
import { type KnowledgeAgent, mayHaveKnowledge, runKnowledge } from "../knowledge/run-knowledge.js";
import type { KnowledgeBases } from "../knowledge/service.js";
import { KNOWLEDGE_TOOL_NAMES, knowledgePromptSection } from "../knowledge/tools.js";

/** What the knowledge middleware needs. */
export interface KnowledgeMiddlewareOptions {
  api: KnowledgeBases;
  agent: KnowledgeAgent;
  /** The agent's knowledge tools (`createKnowledgeTools`). */
  tools: StructuredToolInterface[];
}

const TOOL_NAMES: ReadonlySet<string> = new Set(KNOWLEDGE_TOOL_NAMES);

/**
 * Gives an agent its knowledge bases: the tools (`kb_search`, `kb_read`, `kb_list`) and a system
 * prompt section naming the run's knowledge bases with their descriptions. A run that has none
 * (the user sees none, or they were all deleted) is offered neither, so the model is never told
 * to search nothing. Mounted only for agents whose `context.knowledge_bases` is not `[]`.
 */
export function createKnowledgeMiddleware(options: KnowledgeMiddlewareOptions) {
  return createMiddleware({
    name: "KnowledgeBases",
    tools: options.tools,
    wrapModelCall: async (request, handler) => {
      const runtime = request.runtime as { context: unknown; configurable?: unknown };
      // A run that snapshotted no knowledge base (most runs) has none to offer: no read.
      const { bases } = mayHaveKnowledge(runtime.context)
        ? await runKnowledge(options.api, options.agent, runtime.context, runtime.configurable)
        : { bases: [] };
      if (bases.length === 0) {
        return handler({
          ...request,
          tools: request.tools.filter((tool) => !TOOL_NAMES.has(toolName(tool))),
        });
      }
      // concat() joins without a separator: start the section on its own paragraph.
      return handler({
        ...request,
        systemMessage: request.systemMessage.concat(`\n\n${knowledgePromptSection(bases)}`),
      });
    },
  });
}

function toolName(tool: unknown): string {
  const named = tool as { name?: unknown };
  return typeof named.name === "string" ? named.name : "";
}
