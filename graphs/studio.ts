/**
 * LangGraph Studio entry point (named in `langgraph.json`): the graph `agent`, served by the
 * official dev server (`npm run studio`, or `npx @langchain/langgraph-cli dev`).
 *
 * `agent` is a graph factory: the server calls it for each run with the run's config and
 * context, and it returns the compiled graph of the chosen user's chat agent, read from the data
 * dir's agent store and compiled **without a checkpointer**, because the server brings its own.
 * Subagents run on that same checkpointer (it is lent to them at run time), each on its own
 * child thread, and their updates reach the run's stream under `subagent:<child thread id>`.
 *
 * The run's context (Studio's configuration panel) picks `uid` (default `demo`), `agent`
 * (default: the user's default agent), can narrow `subagents`, and can set the limits
 * `max_rounds`, `max_result_chars`, `max_parallel_subagents`, `subagent_timeout_ms`.
 */

import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import { DEMO_UID, seedDemo } from "../agents/demo.js";
import { agentContextSchema } from "../backends/context.js";
import { createRuntime, type Runtime } from "../runtime.js";

/** The data dir the hosted graphs read agents from: `SUBAGENT_GRAPH_DATA`, else `./data`. */
function dataDir(): string {
  return process.env.SUBAGENT_GRAPH_DATA?.trim() || "data";
}

let hosted: Promise<Runtime> | undefined;

/** One runtime per server process, hosting graphs only; the demo agents exist from the start. */
function hostedRuntime(): Promise<Runtime> {
  hosted ??= (async () => {
    const runtime = await createRuntime({ dataDir: dataDir(), checkpointer: "host" });
    await seedDemo(runtime, DEMO_UID);
    return runtime;
  })();
  return hosted;
}

/** What the dev server passes a graph factory besides the config. */
interface FactoryRuntime {
  executionRuntime?: { context?: unknown } | null;
}

/** The schema Studio's configuration panel edits (the runtime context of a run). */
export const contextSchema = agentContextSchema;

/**
 * The graph of the run's agent. Outside a run (the server reading schemas) it is the default
 * agent of `demo`.
 */
export async function agent(config?: LangGraphRunnableConfig, factory?: FactoryRuntime) {
  const context = (factory?.executionRuntime?.context ?? config?.context ?? {}) as Record<
    string,
    unknown
  >;
  const uid = typeof context.uid === "string" && context.uid ? context.uid : DEMO_UID;
  const slug = typeof context.agent === "string" && context.agent ? context.agent : undefined;
  const subagents = Array.isArray(context.subagents)
    ? context.subagents.filter((item): item is string => typeof item === "string")
    : undefined;
  const runtime = await hostedRuntime();
  return runtime.graph(uid, slug, subagents ? { subagents } : {});
}
