/**
 * LangGraph Studio entry point (named in `langgraph.json`): the graph `agent`, served by the
 * official dev server (`npx @langchain/langgraph-cli dev`, or `npm run studio`), with no
 * configuration needed.
 *
 * `agent` is a graph factory: the server calls it for each run with the run's context, and it
 * returns the compiled graph of the chosen user's chat agent, read from the data dir's agent
 * store (`SUBAGENT_GRAPH_DATA`, else `./data`) and compiled **without a checkpointer**, because
 * the server brings its own. Subagents run on that same checkpointer (it is lent to them at run
 * time), each on its own child thread, and their events reach the run's stream under
 * `tools:<task id>`, the namespace LangGraph gives a graph run inside the tool that called it,
 * where the official hooks look for a subagent's messages (`contract.ts`). A thread-less run gets an in-memory saver of its own
 * (`graphs/hosted-graph.ts`).
 *
 * A main agent with `context.async_subagents` gets the background tools here too. Their tasks
 * are rows of the data dir's agent store, claimed by this process's runner (started with the
 * hosted runtime, at the first use of the graph), and their children run on our own saver (the
 * data dir's `checkpoints.sqlite`, or PostgreSQL with `DATABASE_URL`), since they run after the
 * server's run that started them. The parent thread is told at its next model call;
 * `notify_parent` cannot start a run on the server's thread and only logs a warning.
 *
 * The run's context (Studio's configuration panel; `hostedAgentContextSchema` in
 * `backends/context.ts`) picks `uid` (default `demo`), `agent` (default: the user's default
 * agent), can narrow `subagents`, and can set the limits `max_rounds`, `max_result_chars`,
 * `max_parallel_subagents`, `subagent_timeout_ms`.
 */

import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import { DEMO_UID, seedDemo } from "./agents/demo.js";
import { parseHostedContext } from "./backends/hosted-context.js";
import { hostedGraph } from "./graphs/hosted-graph.js";
import { createRuntime, type Runtime } from "./runtime.js";
import { AGENT_STATE_REDUCERS } from "./threads/thread-state.js";

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
  /** `threads.create_run` for a run, `assistants.read` to describe the graph, `threads.*`. */
  accessContext?: string;
  /** Set for a run: the context the run was sent with (the assistant's, then the run's own). */
  executionRuntime?: { context?: unknown } | null;
}

/**
 * The graph of the run's agent, for the LangGraph dev server (`langgraph.json` names it).
 *
 * Needs no configuration: every context field may be left out (`backends/context.ts`,
 * `hostedAgentContextSchema`), so a fresh `.langgraph_api/`, an assistant made with
 * `assistants.create` and one whose saved context is `{}` all run the demo user's default agent
 * with its subagents. A bad context value is refused here, before any model call, with one
 * line naming the field (`SubagentGraphError` `VALIDATION_FAILED`). Outside a run (the server
 * describing the graph or reading a thread) it is the default agent of the default user.
 *
 * @throws SubagentGraphError `VALIDATION_FAILED` for a bad context, `NOT_FOUND` for a user
 *   without that agent (or without a default one)
 */
export async function agent(config?: LangGraphRunnableConfig, factory?: FactoryRuntime) {
  const run = factory?.executionRuntime;
  const context = parseHostedContext(run ? run.context : config?.context);
  const runtime = await hostedRuntime();
  const graph = await runtime.graph(
    context.uid,
    context.agent,
    context.subagents ? { subagents: context.subagents } : {},
  );
  return hostedGraph(graph, {
    context,
    describe: factory?.accessContext === "assistants.read",
    sendRefReducers: AGENT_STATE_REDUCERS,
  });
}
