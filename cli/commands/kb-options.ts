import { UsageError } from "../command-line.js";
import type { FlagOption, ParseInput, ScopedOption, TextOption } from "./declaration.js";

/** The options of `kb` (`cli/commands/kb.ts`) and how they make an embedder's settings. */

/** `--description`: what a knowledge base holds. May be empty: the schema judges it. */
export const DESCRIPTION: TextOption = {
  name: "description",
  type: "string",
  flag: "--description <text>",
  about: "kb create / update: what the knowledge base holds (agents see it).",
  emptyAllowed: true,
};

const EMBEDDING_MODEL: TextOption = {
  name: "embedding-model",
  type: "string",
  flag: "--embedding-model <name>",
  about: "kb create / update: an OpenAI-compatible embedding model for hybrid search.",
};

const EMBEDDING_DIMENSIONS: TextOption = {
  name: "embedding-dimensions",
  type: "string",
  flag: "--embedding-dimensions <n>",
  about: "kb create / update: that model's vector length (checked on the first batch).",
  // Judged by embedderOf, which names the fix.
  emptyAllowed: true,
};

const EMBEDDING_BASE_URL: TextOption = {
  name: "embedding-base-url",
  type: "string",
  flag: "--embedding-base-url <url>",
  about: "kb create / update: its API (…/v1; default $OPENAI_BASE_URL, else OpenAI's).",
};

const EMBEDDING_KEY_ENV: TextOption = {
  name: "embedding-key-env",
  type: "string",
  flag: "--embedding-key-env <NAME>",
  about: "kb create / update: the variable with its API key (default OPENAI_API_KEY).",
};

const NO_EMBEDDING: FlagOption = {
  name: "no-embedding",
  type: "boolean",
  flag: "--no-embedding",
  about: "kb update: drop the embedder and its vectors (words-only search).",
};

/** `--kb`: the knowledge base `kb search` searches. */
export const KB: TextOption = {
  name: "kb",
  type: "string",
  flag: "--kb <name>",
  about: "kb search: search only this knowledge base.",
};

/** The embedder's options, taken by `kb create` and `kb update` only. */
export const EMBEDDER_OPTIONS: readonly ScopedOption[] = [
  EMBEDDING_MODEL,
  EMBEDDING_DIMENSIONS,
  EMBEDDING_BASE_URL,
  EMBEDDING_KEY_ENV,
].map((option) => ({
  option,
  only: ["create", "update"],
  refusal: 'options --embedding-… are only for "kb create" and "kb update"',
}));

/** `--no-embedding`, taken by `kb update` only. */
export const NO_EMBEDDING_USE: ScopedOption = {
  option: NO_EMBEDDING,
  only: ["update"],
  refusal:
    'option --no-embedding is only for "kb update" (a new knowledge base has no embedder unless --embedding-model gives it one)',
};

/** The option that sets each embedder field (`kb create`, `kb update`). */
export const EMBEDDER_FLAGS = {
  model: "--embedding-model",
  dimensions: "--embedding-dimensions",
  base_url: "--embedding-base-url",
  api_key_env: "--embedding-key-env",
} as const;

/**
 * The embedder the options describe: `{}` for `--no-embedding` (vectors off), the settings of
 * the `--embedding-…` options, or undefined when none is given. What the command line alone
 * can judge is judged here, naming the option: the dimensions must be a whole number above 0,
 * and model and dimensions come together. The rest (a length over the limit, a URL, a
 * variable's name) is the knowledge base schema's to judge.
 *
 * @throws UsageError naming the option, the value and the fix.
 */
export function embedderOf({ text, flag }: ParseInput): Record<string, unknown> | undefined {
  if (flag(NO_EMBEDDING)) {
    const given = [EMBEDDING_MODEL, EMBEDDING_DIMENSIONS, EMBEDDING_BASE_URL, EMBEDDING_KEY_ENV]
      .filter((option) => text(option) !== undefined)
      .map((option) => `--${option.name}`);
    if (given.length > 0) {
      throw new UsageError(
        `option --no-embedding turns vectors off, so it cannot go with ${given.join(", ")}: give --no-embedding alone, or the new embedder without it`,
      );
    }
    return {};
  }
  const dimensions = text(EMBEDDING_DIMENSIONS);
  if (dimensions !== undefined && !/^[1-9]\d{0,8}$/.test(dimensions.trim())) {
    throw new UsageError(
      `option --embedding-dimensions "${dimensions}" is not a whole number above 0: give the length of the model's vectors, e.g. --embedding-dimensions 1536`,
    );
  }
  const settings = {
    model: text(EMBEDDING_MODEL),
    dimensions: dimensions === undefined ? undefined : Number(dimensions),
    base_url: text(EMBEDDING_BASE_URL),
    api_key_env: text(EMBEDDING_KEY_ENV),
  };
  const given = Object.entries(settings).filter(([, value]) => value !== undefined);
  if (given.length === 0) return undefined;
  if (settings.model === undefined || settings.dimensions === undefined) {
    const missing = settings.model === undefined ? "--embedding-model" : "--embedding-dimensions";
    throw new UsageError(
      `option ${missing} is missing: an embedder needs --embedding-model and --embedding-dimensions together (--embedding-base-url and --embedding-key-env are optional)`,
    );
  }
  return Object.fromEntries(given);
}
