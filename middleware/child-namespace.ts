import type { BaseCallbackHandler } from "@langchain/core/callbacks/base";
import type { Callbacks } from "@langchain/core/callbacks/manager";
import { CallbackManager } from "@langchain/core/callbacks/manager";
import { AsyncLocalStorageProviderSingleton } from "@langchain/core/singletons";
import { namespaceKey, SUBAGENT_NAMESPACE_PREFIX } from "../contract.js";

/**
 * The stream namespace of a child run: the checkpoint namespace of the parent's `tools` task
 * that made the `task` call (`tools:<task id>`, after the parent's own namespace when the parent
 * is itself nested), which is the namespace LangGraph gives any graph run inside a tool. The
 * official hooks find a subagent's events there (`contract.ts`). Outside a LangGraph task (the
 * tool invoked by hand) the tool call id stands in for the task id.
 */
export function childStreamNamespace(
  parentConfigurable: Record<string, unknown> | undefined,
  toolCallId: string,
): string[] {
  const taskNamespace = parentConfigurable?.checkpoint_ns;
  if (typeof taskNamespace === "string" && taskNamespace !== "") return taskNamespace.split("|");
  return [`${SUBAGENT_NAMESPACE_PREFIX}${toolCallId}`];
}

/**
 * LangGraph's stream handlers, which place an event in a run's stream by the checkpoint namespace
 * in its callback metadata: `messages` (both stream protocols) and `tools`.
 */
const NAMESPACED_HANDLERS = new Set([
  "StreamMessagesHandler",
  "StreamProtocolMessagesHandler",
  "StreamToolsHandler",
]);

/** The position of the `metadata` argument in the callback methods that receive one. */
const METADATA_ARGUMENT: Record<string, number> = {
  handleLLMStart: 6,
  handleChatModelStart: 6,
  handleChainStart: 5,
  handleToolStart: 5,
  handleRetrieverStart: 5,
};

/** Metadata keys holding a checkpoint namespace, which the stream handlers read. */
const NAMESPACE_KEYS = ["langgraph_checkpoint_ns", "checkpoint_ns"] as const;

/**
 * The parent's callbacks as a child run must see them. A child runs on its own thread under the
 * checkpoint namespace "" (its checkpoints are its thread's own), so its model calls' metadata
 * says `model_request:<id>`, and the parent's stream handlers would take its tokens for the
 * parent's. Here those handlers see the metadata a nested subgraph's calls would carry
 * (`tools:<task id>|model_request:<id>`), so LangGraph itself, wherever it hosts the parent (our
 * runs, the official dev server, either stream protocol), streams the child's messages under the
 * child's namespace. Every other handler (tracers, the caller's own) is passed on untouched.
 */
export function namespacedCallbacks(
  callbacks: Callbacks | undefined,
  namespace: readonly string[],
) {
  if (callbacks === undefined) return undefined;
  const prefix = namespaceKey(namespace);
  const wrapped = new Map<BaseCallbackHandler, BaseCallbackHandler>();
  const wrap = (handler: BaseCallbackHandler) => {
    if (!NAMESPACED_HANDLERS.has(handler.name)) return handler;
    let proxy = wrapped.get(handler);
    if (!proxy) {
      proxy = namespacedHandler(handler, prefix);
      wrapped.set(handler, proxy);
    }
    return proxy;
  };
  if (Array.isArray(callbacks)) {
    return callbacks.map((handler) => (isHandler(handler) ? wrap(handler) : handler)) as Callbacks;
  }
  if (!(callbacks instanceof CallbackManager)) return callbacks;
  const copy = callbacks.copy();
  copy.handlers = copy.handlers.map(wrap);
  copy.inheritableHandlers = copy.inheritableHandlers.map(wrap);
  return copy;
}

function isHandler(value: unknown): value is BaseCallbackHandler {
  return typeof (value as { name?: unknown } | null)?.name === "string";
}

/** `handler`, seeing every checkpoint namespace in its metadata under `prefix`. */
function namespacedHandler(handler: BaseCallbackHandler, prefix: string): BaseCallbackHandler {
  return new Proxy(handler, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      const position = typeof property === "string" ? METADATA_ARGUMENT[property] : undefined;
      if (position === undefined || typeof value !== "function") return value;
      return (...args: unknown[]) => {
        args[position] = prefixed(args[position], prefix);
        return (value as (...a: unknown[]) => unknown).apply(receiver, args);
      };
    },
  });
}

function prefixed(metadata: unknown, prefix: string): unknown {
  if (typeof metadata !== "object" || metadata === null) return metadata;
  const copy: Record<string, unknown> = { ...(metadata as Record<string, unknown>) };
  for (const key of NAMESPACE_KEYS) {
    const namespace = copy[key];
    if (typeof namespace !== "string") continue;
    // What the child inherited from the parent's tool call is already under the prefix.
    if (namespace === prefix || namespace.startsWith(`${prefix}|`)) continue;
    copy[key] = namespace === "" ? prefix : `${prefix}|${namespace}`;
  }
  return copy;
}

/**
 * Runs `invoke` without the ambient (parent's) callbacks, so the callbacks a child's config
 * names are its only ones: LangGraph merges a nested run's callbacks with the ambient ones,
 * which would bring the parent's un-namespaced stream handlers back beside the namespaced ones.
 */
export function withoutAmbientCallbacks<T>(invoke: () => Promise<T>): Promise<T> {
  const ambient = AsyncLocalStorageProviderSingleton.getRunnableConfig() as
    | Record<string, unknown>
    | undefined;
  if (ambient?.callbacks === undefined) return invoke();
  return AsyncLocalStorageProviderSingleton.runWithConfig(
    { ...ambient, callbacks: undefined },
    invoke,
  );
}

/** The parent's callbacks, as the ambient config of the `task` tool's call holds them. */
export function ambientCallbacks(): Callbacks | undefined {
  const ambient = AsyncLocalStorageProviderSingleton.getRunnableConfig() as
    | { callbacks?: Callbacks }
    | undefined;
  return ambient?.callbacks;
}
