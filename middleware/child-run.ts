import type { Callbacks } from "@langchain/core/callbacks/manager";
import type { BaseMessage } from "@langchain/core/messages";
import { INTERRUPT, type LangGraphRunnableConfig } from "@langchain/langgraph";
import type { SubagentRunContext } from "../run-context.js";
import { namespacedCallbacks } from "./child-namespace.js";

/** The part of a compiled agent graph the task middleware needs to run and inspect a child. */
export interface ChildGraph {
  /** The saver it was compiled with (langchain's agent has it), unless lent by the config. */
  readonly checkpointer?: unknown;
  invoke(input: unknown, config: LangGraphRunnableConfig): Promise<{ messages: BaseMessage[] }>;
  getState(config: LangGraphRunnableConfig): Promise<{
    values: unknown;
    next: readonly string[];
    metadata?: { source?: string } | undefined;
    /** The tasks of the next step, with the interrupts a paused one waits on. */
    tasks?: readonly { interrupts?: readonly unknown[] }[];
  }>;
}

/** LangGraph's internal config key under which a parent run hands its output stream down. */
const PREGEL_STREAM_KEY = "__pregel_stream";
/**
 * LangGraph's internal config key of the saver a run lends its subgraphs. A root run takes a saver
 * set there over its own (`Pregel._resolveCheckpointer`), which is how a hosted thread-less run
 * gets one (`graphs/hosted-graph.ts`).
 */
export const PREGEL_CHECKPOINTER_KEY = "__pregel_checkpointer";

/**
 * The config key (under `configurable`) with which the runtime tells the task tool that this run
 * started from new input: every task call in it then comes from a model turn of this run, so its
 * child thread cannot exist yet and is not read before the child runs. Runs without it (a resume,
 * a replay without input, a graph hosted by a LangGraph server) read the child's thread first,
 * to continue or reuse what a crashed process left. LangGraph keeps `__` keys out of checkpoint
 * metadata.
 */
export const NEW_INPUT_KEY = "__subagent_graph_new_input";

/**
 * The config key (under `configurable`) holding the id of the run the runtime started, so
 * middleware can tell two runs of one turn apart (a replay prepares the skills again, see
 * `middleware/file-scope.ts`). A LangGraph server sets `run_id` there itself.
 */
export const RUN_ID_KEY = "__subagent_graph_run_id";

/** The slice of LangGraph's stream object that child runs write to. */
interface PregelStreamLike {
  modes: Set<string>;
  push(chunk: [string[], string, unknown]): void;
}

function isPregelStream(value: unknown): value is PregelStreamLike {
  return (
    typeof value === "object" &&
    value !== null &&
    (value as { modes?: unknown }).modes instanceof Set &&
    typeof (value as { push?: unknown }).push === "function"
  );
}

export interface ChildRunConfigInput {
  childThreadId: string;
  /** The child's runtime context. */
  context: SubagentRunContext;
  signal: AbortSignal;
  /** The configurable of the parent's tool call, to find the parent's stream in. */
  parentConfigurable: Record<string, unknown> | undefined;
  /** The callbacks of the parent's tool call (its stream handlers among them). */
  parentCallbacks: Callbacks | undefined;
  /** The stream namespace of the child's events (`child-namespace.ts`). */
  namespace: readonly string[];
}

/**
 * The config a child run starts with. Built from an allowlist: a graph invoked inside a tool
 * inherits the parent's config through async-local storage, and the parent's checkpoint
 * namespace, checkpoint map, scratchpad or abort signals would land the child's checkpoints under
 * the parent's namespace, restart a resumed child from nothing, or keep a timed-out child running
 * (ARCHITECTURE.md "Decisions and why"). The parent's callbacks are passed on, namespaced
 * (`namespacedCallbacks`), so the child's tokens reach the parent's `messages` stream under the
 * child's namespace, their metadata naming the child's thread (`thread_id`); invoke the child
 * through `withoutAmbientCallbacks` so they are its only ones.
 *
 * When the parent streams with `subgraphs: true`, the child's own stream output (updates, values,
 * custom events) is forwarded into the parent's stream under the same namespace (`tools:<task
 * id>`), the way LangGraph reports a graph run inside a tool.
 */
export function childRunConfig(
  input: ChildRunConfigInput,
): LangGraphRunnableConfig & { durability: "sync" } {
  // LangGraph merges the ambient (parent's) configurable into a nested invoke key by key, so
  // every inherited key is blanked explicitly; the child then gets only what is set below.
  const configurable: Record<string, unknown> = {};
  for (const key of Object.keys(input.parentConfigurable ?? {})) configurable[key] = undefined;
  // The saver the parent runs on is lent on: a child graph compiled without one (under the
  // LangGraph dev server, which brings its own) then checkpoints to the same saver. Set
  // explicitly, since `getState` does not read the ambient config.
  const lentSaver = input.parentConfigurable?.[PREGEL_CHECKPOINTER_KEY];
  if (lentSaver !== undefined) configurable[PREGEL_CHECKPOINTER_KEY] = lentSaver;
  configurable.thread_id = input.childThreadId;
  configurable.checkpoint_ns = "";
  const parentStream = input.parentConfigurable?.[PREGEL_STREAM_KEY];
  if (isPregelStream(parentStream)) {
    const namespace = input.namespace;
    const forward: PregelStreamLike = {
      modes: parentStream.modes,
      push: ([ns, mode, payload]) => {
        const shown = withoutInterrupts(mode, payload);
        if (shown !== undefined) parentStream.push([[...namespace, ...ns], mode, shown]);
      },
    };
    configurable[PREGEL_STREAM_KEY] = forward;
  }
  return {
    configurable,
    callbacks: namespacedCallbacks(input.parentCallbacks, input.namespace),
    context: input.context,
    signal: input.signal,
    runName: input.childThreadId,
    // A child's step is saved before its next one starts, so a crash resumes it from its last
    // finished step (LangGraph's default saves while the next step already runs).
    durability: "sync",
  };
}

/**
 * A child's chunk as the parent's stream shows it: without the child's own pause. A child that
 * pauses for approval pauses its `task` call, whose interrupt (the child's request plus
 * `subagent`, see `run-child.ts`) is the one the thread waits on and a resume answers; the
 * child's own, under another id, would show every frontend a second request that nothing can
 * answer (the hooks list interrupts of every namespace). Undefined when nothing else is left.
 */
function withoutInterrupts(mode: string, payload: unknown): unknown {
  if (mode !== "updates" && mode !== "values") return payload;
  if (typeof payload !== "object" || payload === null || !(INTERRUPT in payload)) return payload;
  const { [INTERRUPT]: _pause, ...rest } = payload as Record<string, unknown>;
  return Object.keys(rest).length > 0 ? rest : undefined;
}

/** An abort signal that follows another one until {@link LinkedAbortSignal.dispose}. */
export interface LinkedAbortSignal {
  signal: AbortSignal;
  /** Stops following the source (call it once the child run is over). */
  dispose(): void;
}

/**
 * A plain signal that aborts (with the same reason) when `source` does, until disposed.
 *
 * Why not hand `source` to the child as it is: inside a tool, `source` is the composite signal
 * langchain's ToolNode made with `AbortSignal.any`. LangGraph's `stream()` adds an abort
 * listener to the signal a run is given and never removes it, and Node keeps a composite signal
 * that has abort listeners alive until it aborts (which a finished run's signal never does), so
 * every child run would leave that signal, LangGraph's controller and its listener in memory for
 * good (about 3 KB per task call). The child gets this signal instead; `dispose` removes our
 * only listener from `source`, and LangGraph's listener dies with this plain signal.
 */
export function linkedAbortSignal(source: AbortSignal): LinkedAbortSignal {
  const controller = new AbortController();
  const forward = () => controller.abort(source.reason);
  if (source.aborted) forward();
  else source.addEventListener("abort", forward, { once: true });
  return {
    signal: controller.signal,
    dispose: () => source.removeEventListener("abort", forward),
  };
}
