import { ErrorCode, SubagentGraphError } from "../errors.js";
import { OFFLINE_MODEL } from "./factory.js";

const OPENAI_PREFIX = "openai:";

/** Checks an agent's `context.model` when it is saved; throws when no model could be built. */
export type ModelSpecCheck = (spec: string) => void;

/**
 * The check for a runtime given `customModels` (the keys of its `models` option): a spec is
 * known when it is `offline`, `openai:<name>` or a custom key, the specs the model factory
 * builds. Checked when an agent is saved, so a typo fails in the form that made it rather than
 * at its first chat. Whether an OpenAI key is configured is not checked: that can change
 * without the agent changing.
 *
 * @throws SubagentGraphError `VALIDATION_FAILED` on field `config_json.context.model`, naming
 *   the value and the specs to use.
 */
export function modelSpecCheck(customModels: readonly string[]): ModelSpecCheck {
  const custom = new Set(customModels);
  return (raw) => {
    const spec = raw.trim();
    if (spec === "" || spec === OFFLINE_MODEL || custom.has(spec)) return;
    if (spec.startsWith(OPENAI_PREFIX) && spec.length > OPENAI_PREFIX.length) return;
    const known = [OFFLINE_MODEL, `${OPENAI_PREFIX}<model name>`, ...customModels];
    throw new SubagentGraphError(
      ErrorCode.Validation,
      `config_json.context.model: ${JSON.stringify(raw)} is not a model this server can run: use one of ${known.map((k) => JSON.stringify(k)).join(", ")} (GET /api/catalog lists them), or leave it empty for the default`,
      { field: "config_json.context.model" },
    );
  };
}
