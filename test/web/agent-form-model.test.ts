import { describe, expect, it } from "vitest";
import { parseAgentCreate, parseAgentUpdate } from "../../agents/schema.js";
import {
  type AgentRecord,
  agentPayload,
  formFieldOf,
  formValues,
} from "../../web/src/agent-form-model.js";

const stored: AgentRecord = {
  id: "a1",
  slug: "boss",
  name: "Boss",
  description: "Delegates.",
  backend_id: "ChatAgentBackend",
  is_subagent: false,
  is_default: true,
  owner_uid: "alice",
  share_config: { mode: "users", uids: ["bob", "carol"], editors: ["bob"] },
  config_json: {
    context: {
      model: "offline",
      system_prompt: "Be brief.",
      tools: ["read_file"],
      knowledge_bases: ["handbook"],
      subagents: ["scout"],
      max_rounds: 4,
    },
  },
  version: 3,
  created_at: "2026-01-01T00:00:00.000Z",
  updated_at: "2026-01-02T00:00:00.000Z",
};

describe("the agent form model", () => {
  it("round-trips a stored agent into an update the server's schema accepts unchanged", () => {
    const payload = agentPayload(formValues(stored), stored);
    expect(parseAgentUpdate(payload)).toMatchObject({
      slug: "boss",
      is_default: true,
      share_config: { mode: "users", uids: ["bob", "carol"], editors: ["bob"] },
      config_json: { context: stored.config_json.context },
      expected_version: 3,
    });
    // Lists left at "all" stay out of the config (the default-all rule), never become [].
    expect(payload.config_json.context).not.toHaveProperty("skills");
    expect(payload.config_json.context).not.toHaveProperty("mcp_servers");
    expect(
      agentPayload({ ...formValues(stored), knowledge_bases: null }).config_json.context,
    ).not.toHaveProperty("knowledge_bases");
    expect(
      agentPayload({ ...formValues(stored), knowledge_bases: [] }).config_json.context,
    ).toHaveProperty("knowledge_bases", []);
  });

  it("makes a create payload without subagents for a subagent, whatever was ticked", () => {
    const values = {
      ...formValues(),
      backend_id: "SubAgentBackend" as const,
      slug: " scout ",
      name: "Scout",
      subagents: ["general-purpose"],
      tools: [],
    };
    const payload = agentPayload(values);
    expect(parseAgentCreate(payload)).toMatchObject({
      slug: "scout",
      backend_id: "SubAgentBackend",
      config_json: { context: { tools: [] } },
    });
    expect(payload.config_json.context).not.toHaveProperty("subagents");
    expect(payload).not.toHaveProperty("expected_version");
  });

  it("sends limits that are not numbers as typed, so the server names the field", () => {
    const values = formValues(stored);
    values.limits.max_rounds = "lots";
    values.limits.subagent_timeout_ms = " 1500 ";
    const payload = agentPayload(values, stored);
    expect(payload.config_json.context).toMatchObject({
      max_rounds: "lots",
      subagent_timeout_ms: 1500,
    });
    expect(() => parseAgentUpdate(payload)).toThrow(/config_json\.context\.max_rounds/);
  });

  it("maps the API's error fields to the form's fields", () => {
    expect(formFieldOf("config_json.context.max_rounds")).toBe("max_rounds");
    expect(formFieldOf("config_json.context.subagents.1")).toBe("subagents");
    expect(formFieldOf("context.tools")).toBe("tools");
    expect(formFieldOf("share_config.uids.0")).toBe("share_uids");
    expect(formFieldOf("share_config.mode")).toBe("share_mode");
    expect(formFieldOf("is_subagent")).toBe("backend_id");
    expect(formFieldOf("is_default")).toBe("is_default");
    expect(formFieldOf("expected_version")).toBeUndefined();
    expect(formFieldOf(undefined)).toBeUndefined();
  });
});
