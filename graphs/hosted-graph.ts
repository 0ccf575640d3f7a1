import { IterableReadableStream } from "@langchain/core/utils/stream";
import { StateSchema } from "@langchain/langgraph";
import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";
import type { HostedAgentContext } from "../backends/context.js";
import { parseHostedContext } from "../backends/hosted-context.js";
import type { AgentGraph } from "../backends/registry.js";
import type { ChannelReducers } from "../checkpoints/delta-read.js";
import {
  SendCompactingMemorySaver,
  sendCompactingView,
} from "../checkpoints/send-compacting-savers.js";
import { ErrorCode, SubagentGraphError } from "../errors.js";
import { PREGEL_CHECKPOINTER_KEY } from "../middleware/child-run.js";
import { chunkShapeOf, withInterruptsLast } from "./hosted-interrupts.js";

/** Stream options as a LangGraph server passes them (`context`, `configurable`, modes, …). */
type StreamOptions = Record<string, unknown> & {
  context?: unknown;
  configurable?: Record<string, unknown>;
};

/** The part of a compiled LangGraph graph (a `CompiledStateGraph`) that hosting touches. */
export interface HostedGraph {
  /** The graph's builder: the server reads the state and context schemas from it. */
  builder: object;
  /** Set by the server on the graph it is handed (its own saver, or none for a thread-less run). */
  checkpointer?: unknown;
  withConfig(config: Record<string, unknown>): HostedGraph;
  stream(input: unknown, options?: StreamOptions): Promise<unknown>;
}

function isHostedGraph(value: unknown): value is HostedGraph {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as { builder?: unknown }).builder === "object" &&
    typeof (value as { withConfig?: unknown }).withConfig === "function" &&
    typeof (value as { stream?: unknown }).stream === "function"
  );
}

/**
 * The compiled graph inside an agent graph: `createAgent` returns a wrapper whose `graph` is the
 * compiled `StateGraph`, which is what a LangGraph server runs (it unwraps the wrapper itself).
 */
function compiledGraphOf(graph: AgentGraph): HostedGraph {
  const inner = (graph as { graph?: unknown }).graph;
  if (isHostedGraph(inner)) return inner;
  if (isHostedGraph(graph)) return graph;
  throw new SubagentGraphError(
    ErrorCode.Internal,
    "hosted graph: the agent graph holds no compiled LangGraph graph (createAgent's `graph`)",
  );
}

/** What the server is about to do with the graph the Studio entry returns. */
export interface HostedGraphOptions {
  /** The run's context, already checked ({@link parseHostedContext}); used when a call has none. */
  context: HostedAgentContext;
  /**
   * The server only describes the graph (its schemas, its drawing): present the state schemas
   * so that its schema reader also reports the context schema (see {@link describingBuilder}).
   */
  describe: boolean;
  /**
   * The state channels stored by reference in `Send` packets, with the reducers that rebuild
   * them (the runtime's; see `checkpoints/send-refs.ts`).
   */
  sendRefReducers: ChannelReducers;
}

/**
 * The graph a LangGraph server gets for one request, made from a cached agent graph:
 *
 * - a copy (`withConfig({})`), because the server sets `checkpointer` and `store` on whatever it
 *   is handed, and the cached graph is shared by every request;
 * - every run on it (`invoke`, `stream` and `streamEvents` all go through `stream`) gets its
 *   context checked and completed with the defaults of {@link parseHostedContext}: the middleware,
 *   the task tool and the file tools read `uid` from the context, and the server hands a graph
 *   the context exactly as the client sent it (LangGraph validates it against the schema but
 *   does not apply the schema's defaults);
 * - the saver the server sets on it is seen through the `Send` packet compaction
 *   ({@link sendCompactingView}), as our own savers store them: with delta storage (the
 *   default), a thread then grows linearly in the server's checkpoint file, which the dev server
 *   rewrites whole a few seconds after every change. Anything the server does to its saver
 *   directly (delete, copy) keeps working: a compacted packet refers only to checkpoints and
 *   writes of its own thread;
 * - a run without a saver (a thread-less run: `runs.wait(null, …)`, for which the server compiles
 *   nothing in) gets a fresh in-memory saver for that run alone. The agent and its subagents
 *   checkpoint there (subagents must: they run on child threads of the lent saver), and it is
 *   dropped with the run, as the server drops the run's temporary thread;
 * - a run that pauses ends its stream with its pending interrupts as the last `values` chunk
 *   ({@link withInterruptsLast}), so `runs.wait`'s result carries `__interrupt__` also when a
 *   sibling subagent finished in the paused step.
 */
export function hostedGraph(graph: AgentGraph, options: HostedGraphOptions): HostedGraph {
  const compiled = compiledGraphOf(graph);
  const copy = compiled.withConfig({});
  compactSaverOf(copy, options.sendRefReducers);
  const stream = copy.stream.bind(copy);
  Object.defineProperty(copy, "stream", {
    configurable: true,
    writable: true,
    value: async (input: unknown, callOptions: StreamOptions = {}) => {
      const context =
        callOptions.context === undefined
          ? options.context
          : parseHostedContext(callOptions.context);
      const configurable = { ...callOptions.configurable };
      if (!copy.checkpointer && configurable[PREGEL_CHECKPOINTER_KEY] === undefined) {
        configurable[PREGEL_CHECKPOINTER_KEY] = new SendCompactingMemorySaver(
          options.sendRefReducers,
        );
      }
      const runOptions = { ...callOptions, context, configurable };
      const shape = chunkShapeOf(runOptions);
      if (!shape) return stream(input, runOptions);
      const chunks = (await stream(input, runOptions)) as AsyncIterable<unknown>;
      return IterableReadableStream.fromAsyncGenerator(withInterruptsLast(chunks, shape));
    },
  });
  if (options.describe) {
    Object.defineProperty(copy, "builder", {
      configurable: true,
      writable: true,
      value: describingBuilder(compiled.builder),
    });
  }
  return copy;
}

/**
 * Makes `graph.checkpointer` hold, for any saver assigned to it, that saver's compacting view
 * (the server assigns its own after the graph factory returns, `graph/load.mjs` in
 * `@langchain/langgraph-api`).
 */
function compactSaverOf(graph: HostedGraph, reducers: ChannelReducers): void {
  let saver: unknown = graph.checkpointer;
  Object.defineProperty(graph, "checkpointer", {
    configurable: true,
    enumerable: true,
    get: () => saver,
    set: (value: unknown) => {
      saver = isSaver(value) ? sendCompactingView(value, reducers) : value;
    },
  });
}

function isSaver(value: unknown): value is BaseCheckpointSaver {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as { putWrites?: unknown }).putWrites === "function" &&
    typeof (value as { getTuple?: unknown }).getTuple === "function"
  );
}

/** The builder fields a LangGraph server's schema reader looks at. */
interface BuilderSchemas {
  _schemaRuntimeDefinition?: unknown;
  _inputRuntimeDefinition?: unknown;
  _outputRuntimeDefinition?: unknown;
}

/**
 * The builder as the dev server should see it to report the context schema.
 *
 * `createAgent` builds its state with `StateSchema`. The dev server
 * (`@langchain/langgraph-api` 1.5.1, `graph/parser/index.mjs`, `getRuntimeGraphSchema`) tries
 * readers in turn: the first claims any builder whose state definitions have both
 * `getJsonSchema` and `getInputJsonSchema`, and never reports a context schema ("StateSchema
 * doesn't have config schema support yet"), so `getSchemas` has no `context_schema` and
 * Studio's configuration panel stays empty. The next reader is LangGraph's own
 * (`@langchain/langgraph/zod/schema`): it recognises a `StateSchema` by its brand, calls
 * `getInputJsonSchema` for the state and the input and `getJsonSchema` for the output, and
 * reports the context schema from `_configRuntimeSchema`.
 *
 * So each state definition is presented (prototype-linked, nothing copied or changed) with only
 * the method that second reader calls: the first passes, the second describes the same state,
 * input and output, plus the context schema. Only descriptions use this view; runs never do.
 * `test/studio/studio-no-config.int.test.ts` fails if a server version changes this.
 */
function describingBuilder(builder: object): object {
  const schemas = builder as BuilderSchemas;
  return Object.create(builder, {
    _schemaRuntimeDefinition: {
      value: presentOnly(schemas._schemaRuntimeDefinition, "getInputJsonSchema"),
    },
    _inputRuntimeDefinition: {
      value: presentOnly(schemas._inputRuntimeDefinition, "getInputJsonSchema"),
    },
    _outputRuntimeDefinition: {
      value: presentOnly(schemas._outputRuntimeDefinition, "getJsonSchema"),
    },
  }) as object;
}

/** A `StateSchema` seen with one of its two JSON-schema methods only; anything else as it is. */
function presentOnly(definition: unknown, keep: "getJsonSchema" | "getInputJsonSchema"): unknown {
  if (!StateSchema.isInstance(definition)) return definition;
  const hidden = keep === "getJsonSchema" ? "getInputJsonSchema" : "getJsonSchema";
  return Object.create(definition, { [hidden]: { value: undefined } });
}
