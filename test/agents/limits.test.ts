import { describe, expect, it } from "vitest";
import { BUILTIN_LIMITS, LIMIT_ENV_VARS, processLimits } from "../../agents/limits.js";

describe("the model timeout setting", () => {
  it("defaults to 120 s, is read from SUBAGENT_GRAPH_MODEL_TIMEOUT_MS, and the option wins", () => {
    expect(BUILTIN_LIMITS.model_timeout_ms).toBe(120_000);
    expect(LIMIT_ENV_VARS.model_timeout_ms).toBe("SUBAGENT_GRAPH_MODEL_TIMEOUT_MS");
    const env = { SUBAGENT_GRAPH_MODEL_TIMEOUT_MS: "30000" };
    expect(processLimits(env).model_timeout_ms).toBe(30_000);
    expect(processLimits(env, { model_timeout_ms: 5_000 }).model_timeout_ms).toBe(5_000);
  });

  it("ignores an unusable value with a warning naming the variable", () => {
    const warnings: string[] = [];
    const settings = processLimits({ SUBAGENT_GRAPH_MODEL_TIMEOUT_MS: "2m" }, {}, (message) =>
      warnings.push(message),
    );
    expect(settings.model_timeout_ms).toBe(120_000);
    expect(warnings).toEqual([
      'ignoring SUBAGENT_GRAPH_MODEL_TIMEOUT_MS="2m": use a whole number of at least 1',
    ]);
  });
});
