import { randomUUID } from "node:crypto";
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { HumanMessage } from "@langchain/core/messages";
import { BUILTIN_LIMITS } from "../../agents/limits.js";
import { resolveChannelStorage } from "../../checkpoints/channel-storage.js";
import { buildAgentGraph } from "../../graphs/build-agent-graph.js";
import { createModelFactory } from "../../models/factory.js";
import type { SubagentRunContext } from "../../run-context.js";
import { SandboxLayout } from "../../sandbox/layout.js";
import { prepareAgentSkills } from "../../sandbox/skills/agent-skills.js";
import { SkillLibrary } from "../../sandbox/skills/library.js";
import { builtinTools } from "../../tools/builtin.js";
import { ToolRegistry } from "../../tools/registry.js";
import { CHILD_NAME } from "./scripts.js";
import { type OurSystem, UID } from "./systems.js";

/**
 * Our subagent's graph, built the way the runtime builds it (`buildAgentGraph` on the stored
 * record, same saver and data dir), invoked directly with the context the task tool gives a
 * child: the child's cost without the dispatch around it. With `skills: false` the per-run
 * skills step (materialising the agent's skills into the child's own scope) is stubbed out, to
 * measure what it costs.
 */
export async function ourChildGraph(
  ours: OurSystem,
  childModel: BaseChatModel,
  options: { skills: boolean },
): Promise<(description: string) => Promise<unknown>> {
  const record = await ours.runtime.agents.get(UID, CHILD_NAME);
  const layout = new SandboxLayout(ours.dataDir);
  const library = new SkillLibrary(layout.skillLibrary());
  const graph = buildAgentGraph(record, [], {
    models: createModelFactory({ env: {}, models: { "bench:child": childModel } }),
    tools: new ToolRegistry(builtinTools()),
    checkpointer: ours.saver,
    // The runtime's default storage, as `openOurs` builds it.
    storage: resolveChannelStorage(undefined, ours.saver),
    loadChild: async () => undefined,
    dispatchLimits: async () => ({
      maxResultChars: BUILTIN_LIMITS.max_result_chars,
      subagentTimeoutMs: undefined,
      maxParallelSubagents: BUILTIN_LIMITS.max_parallel_subagents,
    }),
    modelTimeoutMs: () => BUILTIN_LIMITS.model_timeout_ms,
    prepareSkills: options.skills
      ? (agent, skillsThreadId) =>
          prepareAgentSkills(
            library,
            layout,
            { slug: agent.slug, skills: agent.config_json.context.skills },
            skillsThreadId,
          )
      : async () => [],
  });
  return (description) => {
    const parent = `attribution-${randomUUID()}`;
    const threadId = `${parent}_sub_${CHILD_NAME}_${randomUUID().slice(0, 8)}`;
    return graph.invoke(
      { messages: [new HumanMessage(description)] },
      {
        configurable: { thread_id: threadId, checkpoint_ns: "" },
        context: {
          uid: UID,
          thread_id: threadId,
          parent_thread_id: parent,
          file_thread_id: parent,
          skills_thread_id: threadId,
          is_subagent_runtime: true,
          allowed_tools: [],
          max_rounds: BUILTIN_LIMITS.max_rounds,
          intent: description,
        } satisfies SubagentRunContext,
      },
    );
  };
}
