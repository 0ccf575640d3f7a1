import { ChatOpenAI } from "@langchain/openai";
import { describe, expect, it } from "vitest";
import { ErrorCode } from "../../errors.js";
import { createModelFactory, defaultModelSpec } from "../../models/factory.js";
import { OfflineChatModel } from "../../models/offline.js";
import { ScriptedChatModel } from "../../models/scripted.js";

describe("model factory", () => {
  it("defaults to offline without a key and to OpenAI with one", () => {
    expect(defaultModelSpec({})).toBe("offline");
    expect(defaultModelSpec({ OPENAI_API_KEY: "k" })).toBe("openai:gpt-4o-mini");
    expect(defaultModelSpec({ OPENAI_BASE_URL: "http://127.0.0.1:1/v1" })).toBe(
      "openai:gpt-4o-mini",
    );
    expect(defaultModelSpec({ SUBAGENT_GRAPH_MODEL: "openai:x", OPENAI_API_KEY: "k" })).toBe(
      "openai:x",
    );
    expect(createModelFactory({ env: {} })(undefined)).toBeInstanceOf(OfflineChatModel);
  });

  it("builds ChatOpenAI with the configured base URL and key", () => {
    const factory = createModelFactory({
      env: { OPENAI_API_KEY: "sk-1", OPENAI_BASE_URL: "http://127.0.0.1:9/v1" },
    });
    const model = factory("openai:my-model");
    expect(model).toBeInstanceOf(ChatOpenAI);
    expect((model as ChatOpenAI).model).toBe("my-model");
    expect(factory("openai:my-model")).toBe(model);
  });

  it("prefers named models", () => {
    const named = new ScriptedChatModel("n", []);
    expect(createModelFactory({ env: {}, models: { "scripted:n": named } })("scripted:n")).toBe(
      named,
    );
  });

  it("explains what is wrong with a spec", () => {
    const factory = createModelFactory({ env: {} });
    expect(() => factory("openai:gpt-4o-mini")).toThrowError(
      expect.objectContaining({
        code: ErrorCode.ModelUnavailable,
        message: expect.stringContaining("needs OPENAI_API_KEY"),
      }),
    );
    expect(() => factory("openai:")).toThrowError(/names no model/);
    expect(() => factory("claude")).toThrowError(/model "claude" is not known/);
    expect(() =>
      createModelFactory({ env: { OPENAI_API_KEY: "k", OPENAI_MAX_RETRIES: "-1" } })("openai:x"),
    ).toThrowError(/OPENAI_MAX_RETRIES="-1" is invalid/);
  });
});
