import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { ChatOpenAI } from "@langchain/openai";
import { ErrorCode, SubagentGraphError } from "../errors.js";
import { withBoundToolsCache } from "./bound-tools-cache.js";
import { OfflineChatModel } from "./offline.js";

/** Turns a `context.model` spec into a chat model. */
export type ModelFactory = (spec: string | undefined) => BaseChatModel;

/** The spec of the deterministic built-in model. */
export const OFFLINE_MODEL = "offline";
const OPENAI_PREFIX = "openai:";

export interface ModelFactoryOptions {
  /**
   * Environment to read `OPENAI_API_KEY`, `OPENAI_BASE_URL`, `OPENAI_MAX_RETRIES` (langchain's
   * retry count, default 6) and `SUBAGENT_GRAPH_MODEL` from.
   */
  env?: NodeJS.ProcessEnv;
  /**
   * Models by spec, consulted before the built-in prefixes: lets a library user (or a test)
   * name a model instance of their own, e.g. `{ "scripted:parent": model }`.
   */
  models?: Record<string, BaseChatModel>;
}

/**
 * The default model spec when an agent sets none: `SUBAGENT_GRAPH_MODEL`, else
 * `openai:gpt-4o-mini` when an OpenAI key or base URL is configured, else `offline`.
 */
export function defaultModelSpec(env: NodeJS.ProcessEnv = process.env): string {
  const configured = env.SUBAGENT_GRAPH_MODEL?.trim();
  if (configured) return configured;
  if (env.OPENAI_API_KEY || env.OPENAI_BASE_URL) return `${OPENAI_PREFIX}gpt-4o-mini`;
  return OFFLINE_MODEL;
}

/**
 * Makes the model factory. Specs:
 * - `offline`: {@link OfflineChatModel}, no key, no network;
 * - `openai:<name>`: `ChatOpenAI` against `OPENAI_BASE_URL` (any OpenAI-compatible server: vLLM,
 *   Ollama, LM Studio…) or api.openai.com, with `OPENAI_API_KEY`;
 * - any key of `options.models`.
 *
 * The environment is read on every call, so a changed key or URL applies to the next graph built.
 * Instances are cached per (spec, key, URL): a model object is stateless between calls. An
 * OpenAI model also keeps the models it bound tools to (`bound-tools-cache.ts`).
 */
export function createModelFactory(options: ModelFactoryOptions = {}): ModelFactory {
  const cache = new Map<string, BaseChatModel>();
  return (requested) => {
    const env = options.env ?? process.env;
    const spec = requested?.trim() || defaultModelSpec(env);
    const named = options.models?.[spec];
    if (named) return named;
    if (spec === OFFLINE_MODEL) return new OfflineChatModel();
    if (spec.startsWith(OPENAI_PREFIX)) {
      const modelName = spec.slice(OPENAI_PREFIX.length);
      if (!modelName) {
        throw new SubagentGraphError(
          ErrorCode.ModelUnavailable,
          `model ${JSON.stringify(spec)} names no model: write it as "openai:<model name>", e.g. "openai:gpt-4o-mini"`,
          { field: "context.model" },
        );
      }
      const baseURL = env.OPENAI_BASE_URL?.trim() || undefined;
      const apiKey = env.OPENAI_API_KEY?.trim() || undefined;
      if (!apiKey && !baseURL) {
        throw new SubagentGraphError(
          ErrorCode.ModelUnavailable,
          `model ${JSON.stringify(spec)} needs OPENAI_API_KEY (or OPENAI_BASE_URL for a local OpenAI-compatible server); set one, or use the model "offline"`,
          { field: "context.model" },
        );
      }
      const maxRetries = retriesFrom(env);
      const key = `${spec}\0${apiKey ?? ""}\0${baseURL ?? ""}\0${maxRetries ?? ""}`;
      let model = cache.get(key);
      if (!model) {
        model = withBoundToolsCache(
          new ChatOpenAI({
            model: modelName,
            // Local servers often need no key, but the client insists on one.
            apiKey: apiKey ?? "not-needed",
            configuration: baseURL ? { baseURL } : {},
            ...(maxRetries === undefined ? {} : { maxRetries }),
          }),
        );
        cache.set(key, model);
      }
      return model;
    }
    const known = [OFFLINE_MODEL, `${OPENAI_PREFIX}<name>`, ...Object.keys(options.models ?? {})];
    throw new SubagentGraphError(
      ErrorCode.ModelUnavailable,
      `model ${JSON.stringify(spec)} is not known: use one of ${known.map((k) => JSON.stringify(k)).join(", ")}`,
      { field: "context.model" },
    );
  };
}

function retriesFrom(env: NodeJS.ProcessEnv): number | undefined {
  const raw = env.OPENAI_MAX_RETRIES?.trim();
  if (!raw) return undefined;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0) {
    throw new SubagentGraphError(
      ErrorCode.ModelUnavailable,
      `OPENAI_MAX_RETRIES=${JSON.stringify(raw)} is invalid: use a whole number of at least 0`,
      { field: "OPENAI_MAX_RETRIES" },
    );
  }
  return value;
}
