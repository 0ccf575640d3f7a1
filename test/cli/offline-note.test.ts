import { describe, expect, it } from "vitest";
import type { AgentRecord } from "../../agents/schema.js";
import { offlineNote } from "../../cli/session.js";

function agent(model?: string): AgentRecord {
  return {
    id: "a1",
    slug: "assistant",
    name: "Assistant",
    description: "",
    backend_id: "ChatAgentBackend",
    is_subagent: false,
    is_default: true,
    owner_uid: "demo",
    share_config: { mode: "private", uids: [], editors: [] },
    config_json: { context: model === undefined ? {} : { model } },
    version: 1,
    created_at: "2025-01-01T00:00:00.000Z",
    updated_at: "2025-01-01T00:00:00.000Z",
  };
}

describe("offlineNote", () => {
  it("names the offline model and the variables that switch to a real one", () => {
    const note = offlineNote(agent(), {});
    expect(note).toContain("[offline model]");
    expect(note).toContain("OPENAI_API_KEY");
    expect(note?.split("\n")).toHaveLength(1);
  });

  it.each([
    { OPENAI_API_KEY: "sk-test" },
    { OPENAI_BASE_URL: "http://127.0.0.1:8000/v1" },
    { SUBAGENT_GRAPH_MODEL: "openai:gpt-4o" },
  ])("says nothing when a real model is configured (%j)", (env) => {
    expect(offlineNote(agent(), env)).toBeUndefined();
  });

  it("blames the agent's own context.model when that pins the offline model", () => {
    const note = offlineNote(agent("offline"), { OPENAI_API_KEY: "sk-test" });
    expect(note).toContain('context.model "offline"');
  });

  it("says nothing for an agent pinned to a real model, even without a key", () => {
    expect(offlineNote(agent("openai:gpt-4o-mini"), {})).toBeUndefined();
  });
});
