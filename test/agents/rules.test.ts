import { describe, expect, it } from "vitest";
import { applyAgentUpdate, buildAgentRecord, resolveBackend } from "../../agents/rules.js";
import {
  type AgentRecord,
  parseAgentCreate,
  parseAgentUpdate,
  SLUG_PATTERN,
} from "../../agents/schema.js";
import { ErrorCode } from "../../errors.js";
import { expectFailure } from "./helpers.js";

const FACTS = { id: "id-1", owner_uid: "alice", now: "2025-01-01T00:00:00.000Z" };
const LATER = "2025-01-02T00:00:00.000Z";

function build(payload: unknown): AgentRecord {
  return buildAgentRecord(parseAgentCreate(payload), FACTS);
}

function update(record: AgentRecord, patch: unknown): AgentRecord {
  return applyAgentUpdate(record, parseAgentUpdate(patch), LATER);
}

describe("resolveBackend", () => {
  it("derives is_subagent from backend_id and back", () => {
    expect(resolveBackend("SubAgentBackend", undefined)).toEqual({
      backend_id: "SubAgentBackend",
      is_subagent: true,
    });
    expect(resolveBackend("ChatAgentBackend", undefined)).toEqual({
      backend_id: "ChatAgentBackend",
      is_subagent: false,
    });
    expect(resolveBackend(undefined, true)).toEqual({
      backend_id: "SubAgentBackend",
      is_subagent: true,
    });
    expect(resolveBackend(undefined, false)).toEqual({
      backend_id: "ChatAgentBackend",
      is_subagent: false,
    });
    expect(resolveBackend(undefined, undefined)).toBeUndefined();
  });

  it("rejects a contradiction, naming both fields and values", async () => {
    const sub = await expectFailure(
      () => resolveBackend("SubAgentBackend", false),
      ErrorCode.BackendMismatch,
      "is_subagent",
    );
    expect(sub.message).toContain('backend_id "SubAgentBackend"');
    expect(sub.message).toContain("is_subagent false");
    const chat = await expectFailure(
      () => resolveBackend("ChatAgentBackend", true),
      ErrorCode.BackendMismatch,
      "is_subagent",
    );
    expect(chat.message).toContain('backend_id "ChatAgentBackend"');
    expect(chat.message).toContain("is_subagent true");
  });
});

describe("buildAgentRecord", () => {
  it("fills the defaults of a minimal payload", () => {
    expect(build({ slug: "helper", name: "Helper" })).toEqual({
      id: "id-1",
      slug: "helper",
      name: "Helper",
      description: "",
      backend_id: "ChatAgentBackend",
      is_subagent: false,
      is_default: false,
      owner_uid: "alice",
      share_config: { mode: "private", uids: [], editors: [] },
      config_json: { context: {} },
      version: 1,
      created_at: FACTS.now,
      updated_at: FACTS.now,
    });
  });

  it("makes a SubAgentBackend payload a subagent with no subagents of its own", () => {
    const record = build({
      slug: "researcher",
      name: "Researcher",
      backend_id: "SubAgentBackend",
      config_json: { context: { model: "offline", subagents: ["other"] } },
    });
    expect(record.is_subagent).toBe(true);
    expect(record.config_json.context).toEqual({ model: "offline", subagents: [] });
  });

  it("forces subagents to [] even when the payload leaves them out", () => {
    const record = build({ slug: "researcher", name: "R", is_subagent: true });
    expect(record.backend_id).toBe("SubAgentBackend");
    expect(record.config_json.context.subagents).toEqual([]);
  });

  it("keeps unset lists unset and empty lists empty for a chat agent", () => {
    const record = build({
      slug: "helper",
      name: "Helper",
      config_json: { context: { tools: [], subagents: ["researcher"] } },
    });
    expect(record.config_json.context).toEqual({ tools: [], subagents: ["researcher"] });
    expect("skills" in record.config_json.context).toBe(false);
  });

  it("refuses a default subagent", async () => {
    await expectFailure(
      () => build({ slug: "r", name: "R", backend_id: "SubAgentBackend", is_default: true }),
      ErrorCode.SubagentDefault,
      "is_default",
    );
  });

  it("refuses a contradiction between backend_id and is_subagent", async () => {
    await expectFailure(
      () => build({ slug: "r", name: "R", backend_id: "ChatAgentBackend", is_subagent: true }),
      ErrorCode.BackendMismatch,
      "is_subagent",
    );
  });
});

describe("applyAgentUpdate", () => {
  const chat = build({
    slug: "helper",
    name: "Helper",
    config_json: { context: { tools: ["a"] } },
  });
  const sub = build({ slug: "researcher", name: "R", backend_id: "SubAgentBackend" });

  it("replaces present fields, bumps the version by one and keeps the rest", () => {
    const next = update(chat, { name: "Renamed", config_json: { context: { model: "offline" } } });
    expect(next).toEqual({
      ...chat,
      name: "Renamed",
      config_json: { context: { model: "offline" } },
      version: 2,
      updated_at: LATER,
    });
    expect(chat.version).toBe(1);
  });

  it("refuses to change backend_id, either way it is asked", async () => {
    await expectFailure(
      () => update(chat, { backend_id: "SubAgentBackend" }),
      ErrorCode.BackendImmutable,
      "backend_id",
    );
    await expectFailure(
      () => update(chat, { is_subagent: true }),
      ErrorCode.BackendImmutable,
      "is_subagent",
    );
    await expectFailure(
      () => update(sub, { backend_id: "ChatAgentBackend" }),
      ErrorCode.BackendImmutable,
      "backend_id",
    );
    await expectFailure(
      () => update(sub, { is_subagent: false }),
      ErrorCode.BackendImmutable,
      "is_subagent",
    );
  });

  it("accepts an update that repeats the stored backend", () => {
    expect(update(sub, { backend_id: "SubAgentBackend", is_subagent: true }).version).toBe(2);
    expect(update(chat, { backend_id: "ChatAgentBackend" }).version).toBe(2);
  });

  it("reports a contradiction inside the patch as a mismatch", async () => {
    await expectFailure(
      () => update(sub, { backend_id: "SubAgentBackend", is_subagent: false }),
      ErrorCode.BackendMismatch,
      "is_subagent",
    );
  });

  it("refuses to make a subagent the default", async () => {
    await expectFailure(
      () => update(sub, { is_default: true }),
      ErrorCode.SubagentDefault,
      "is_default",
    );
  });

  it("forces a subagent's subagents to [] on update", () => {
    const next = update(sub, { config_json: { context: { subagents: ["x", "y"] } } });
    expect(next.config_json.context.subagents).toEqual([]);
  });

  it("refuses a stale expected_version", async () => {
    const error = await expectFailure(
      () => update(update(chat, { name: "v2" }), { expected_version: 1, name: "v3" }),
      ErrorCode.VersionConflict,
      "expected_version",
    );
    expect(error.message).toContain("version 2");
    expect(update(chat, { expected_version: 1 }).version).toBe(2);
  });
});

describe("payload validation", () => {
  it("explains a bad slug with the field, the value and the fix", async () => {
    const error = await expectFailure(
      () => parseAgentCreate({ slug: "My_Agent", name: "x" }),
      ErrorCode.Validation,
      "slug",
    );
    expect(error.message).toBe(
      'slug "My_Agent" is invalid: use 1-63 lowercase letters, digits or "-", starting with a letter or digit',
    );
  });

  it.each([
    ["underscore", "my_agent"],
    ["uppercase", "Agent"],
    ["leading dash", "-agent"],
    ["empty", ""],
    ["64 characters", "a".repeat(64)],
    ["space", "my agent"],
  ])("rejects a slug with %s", async (_label, slug) => {
    await expectFailure(() => parseAgentCreate({ slug, name: "x" }), ErrorCode.Validation, "slug");
    expect(SLUG_PATTERN.test(slug)).toBe(false);
  });

  it("accepts slugs of 1 and 63 characters", () => {
    expect(parseAgentCreate({ slug: "a", name: "x" }).slug).toBe("a");
    expect(parseAgentCreate({ slug: `a${"-".repeat(62)}`, name: "x" }).slug).toHaveLength(63);
  });

  it("names an unknown key, even a nested one", async () => {
    const top = await expectFailure(
      () => parseAgentCreate({ slug: "a", name: "x", colour: "red" }),
      ErrorCode.Validation,
      "colour",
    );
    expect(top.message).toContain('unknown field "colour"');
    await expectFailure(
      () => parseAgentCreate({ slug: "a", name: "x", config_json: { context: { temprature: 1 } } }),
      ErrorCode.Validation,
      "config_json.context.temprature",
    );
    await expectFailure(
      () => parseAgentUpdate({ share_config: { mode: "public", viewers: [] } }),
      ErrorCode.Validation,
      "share_config.viewers",
    );
    await expectFailure(() => parseAgentUpdate({ id: "x" }), ErrorCode.Validation, "id");
  });

  it("points at the bad element of a list", async () => {
    const error = await expectFailure(
      () =>
        parseAgentCreate({
          slug: "a",
          name: "x",
          config_json: { context: { subagents: ["ok", "Not_Ok"] } },
        }),
      ErrorCode.Validation,
      "config_json.context.subagents.1",
    );
    expect(error.message).toContain('"Not_Ok"');
  });

  it("says which field is missing", async () => {
    const error = await expectFailure(
      () => parseAgentCreate({ slug: "a" }),
      ErrorCode.Validation,
      "name",
    );
    expect(error.message).toBe("name is missing: use a string of 1 to 200 characters");
  });

  it("shortens a long bad value", async () => {
    const error = await expectFailure(
      () => parseAgentCreate({ slug: "a", name: "x".repeat(500) }),
      ErrorCode.Validation,
      "name",
    );
    expect(error.message.length).toBeLessThan(120);
    expect(error.message).toContain("…");
  });

  it.each([
    ["max_rounds", 0],
    ["max_result_chars", -5],
    ["max_parallel_subagents", 1.5],
    ["subagent_timeout_ms", "100"],
  ])("rejects a non-positive-integer limit %s = %j", async (key, value) => {
    await expectFailure(
      () => parseAgentCreate({ slug: "a", name: "x", config_json: { context: { [key]: value } } }),
      ErrorCode.Validation,
      `config_json.context.${key}`,
    );
  });

  it("rejects an empty model and wrong types", async () => {
    await expectFailure(
      () => parseAgentCreate({ slug: "a", name: "x", config_json: { context: { model: "" } } }),
      ErrorCode.Validation,
      "config_json.context.model",
    );
    await expectFailure(
      () => parseAgentCreate({ slug: "a", name: "x", is_default: "yes" }),
      ErrorCode.Validation,
      "is_default",
    );
    await expectFailure(
      () => parseAgentCreate({ slug: "a", name: "x", backend_id: "GraphBackend" }),
      ErrorCode.Validation,
      "backend_id",
    );
    await expectFailure(
      () => parseAgentCreate({ slug: "a", name: "x", share_config: { mode: "friends" } }),
      ErrorCode.Validation,
      "share_config.mode",
    );
    await expectFailure(
      () => parseAgentUpdate({ expected_version: 0 }),
      ErrorCode.Validation,
      "expected_version",
    );
  });

  it("rejects a payload that is not an object, with no field", async () => {
    const error = await expectFailure(() => parseAgentCreate(null), ErrorCode.Validation);
    expect(error.field).toBeUndefined();
    expect(error.message).toContain("the payload null is invalid");
  });

  it("fills share_config defaults for missing keys", () => {
    expect(
      parseAgentCreate({ slug: "a", name: "x", share_config: { mode: "public" } }).share_config,
    ).toEqual({
      mode: "public",
      uids: [],
      editors: [],
    });
  });
});
