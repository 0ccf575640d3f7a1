import type { BaseChatModel } from "@langchain/core/language_models/chat_models";

/** Bound models a model keeps: one per (tools, options) an agent binds; a graph has a few. */
const DEFAULT_MAX_BOUND = 256;

type BindTools = NonNullable<BaseChatModel["bindTools"]>;

/**
 * `model` with a `bindTools` that answers the same tools (the same objects, in the same order)
 * and the same options with the bound model it made the first time.
 *
 * langchain's `createAgent` binds the agent's tools on every model call, and
 * `ChatOpenAI.bindTools` answers with a new `ChatOpenAI` each time: two sub-models, every tool's
 * schema converted to JSON again, and on its first request a new OpenAI HTTP client. That was
 * about 2.5 % of a delegating run's CPU (bench/README.md, "Scenario: cpu"). A bound model holds
 * only its options, so one serves every call, concurrent ones included.
 *
 * Options that are not plain JSON (a structured-output schema, a callback) are not cached:
 * their text would not tell two of them apart. The cache keeps the `maxEntries` most recently
 * used bindings.
 */
export function withBoundToolsCache<M extends BaseChatModel>(
  model: M,
  maxEntries = DEFAULT_MAX_BOUND,
): M {
  const bind = model.bindTools?.bind(model);
  if (!bind) return model;
  const toolIds = new WeakMap<object, number>();
  let nextId = 0;
  const idOf = (tool: object) => {
    let id = toolIds.get(tool);
    if (id === undefined) {
      id = nextId++;
      toolIds.set(tool, id);
    }
    return id;
  };
  const bound = new Map<string, ReturnType<BindTools>>();
  const cached: BindTools = (tools, kwargs) => {
    const key = keyOf(tools, kwargs, idOf);
    if (key === undefined) return bind(tools, kwargs);
    const hit = bound.get(key);
    if (hit) {
      // Most recently used last, so the oldest is the first key.
      bound.delete(key);
      bound.set(key, hit);
      return hit;
    }
    const made = bind(tools, kwargs);
    bound.set(key, made);
    if (bound.size > maxEntries) {
      const oldest = bound.keys().next().value;
      if (oldest !== undefined) bound.delete(oldest);
    }
    return made;
  };
  model.bindTools = cached;
  return model;
}

/** The cache key of a binding, or undefined when it cannot be told apart from others by text. */
function keyOf(
  tools: Parameters<BindTools>[0],
  kwargs: Parameters<BindTools>[1],
  idOf: (tool: object) => number,
): string | undefined {
  const ids: number[] = [];
  for (const tool of tools) {
    if (typeof tool !== "object" || tool === null) return undefined;
    ids.push(idOf(tool));
  }
  const options = plainJson(kwargs ?? {});
  return options === undefined ? undefined : `${ids.join(",")}|${options}`;
}

/** `value` as JSON when it is plain data (objects, arrays, strings, numbers, booleans, null). */
function plainJson(value: unknown): string | undefined {
  let plain = true;
  const text = JSON.stringify(value, (_key, inner: unknown) => {
    if (typeof inner === "function" || typeof inner === "symbol" || typeof inner === "bigint") {
      plain = false;
    } else if (typeof inner === "object" && inner !== null && !Array.isArray(inner)) {
      const prototype = Object.getPrototypeOf(inner);
      if (prototype !== Object.prototype && prototype !== null) plain = false;
    }
    return plain ? inner : undefined;
  });
  return plain ? text : undefined;
}
