import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { mainAgentResolver, narrowSubagents } from "../../agents/main-agent.js";
import { AgentRepository } from "../../agents/repository.js";
import { ErrorCode } from "../../errors.js";
import { type Database, openDatabase } from "../../store/database.js";
import { expectFailure } from "./helpers.js";

const context = (extra: Record<string, unknown> = {}) => ({
  context: { model: "offline", system_prompt: "You help.", ...extra },
});

describe("mainAgentResolver", () => {
  let database: Database;
  let agents: AgentRepository;
  beforeEach(async () => {
    database = await openDatabase(":memory:");
    agents = new AgentRepository(database.db);
  });
  afterEach(async () => {
    await database.close();
  });

  it("resolves the user's default agent when none is named, else the one named", async () => {
    const resolve = mainAgentResolver(agents);
    const helper = await agents.create("alice", {
      slug: "helper",
      name: "helper",
      is_default: true,
      config_json: context(),
    });
    const other = await agents.create("alice", {
      slug: "other",
      name: "other",
      config_json: context(),
    });
    // Bob's default is his own, never Alice's.
    const bobs = await agents.create("bob", {
      slug: "helper",
      name: "helper",
      is_default: true,
      config_json: context(),
    });

    expect((await resolve("alice", undefined)).id).toBe(helper.id);
    expect((await resolve("alice", "other")).id).toBe(other.id);
    expect((await resolve("alice", other.id)).id).toBe(other.id);
    expect((await resolve("bob", undefined)).id).toBe(bobs.id);
  });

  it("without a default agent refuses NOT_FOUND on field agent", async () => {
    const resolve = mainAgentResolver(agents);
    await agents.create("alice", { slug: "plain", name: "plain", config_json: context() });
    const error = await expectFailure(resolve("alice", undefined), ErrorCode.NotFound, "agent");
    expect(error.message).toContain('"alice"');
    await expectFailure(resolve("carol", undefined), ErrorCode.NotFound, "agent");
    // A named agent the user cannot see is NOT_FOUND too.
    await expectFailure(resolve("carol", "plain"), ErrorCode.NotFound);
  });

  it("refuses a subagent with AGENT_IS_SUBAGENT naming it", async () => {
    const resolve = mainAgentResolver(agents);
    const researcher = await agents.create("alice", {
      slug: "researcher",
      name: "researcher",
      backend_id: "SubAgentBackend",
      config_json: context(),
    });
    const bySlug = await expectFailure(
      resolve("alice", "researcher"),
      ErrorCode.AgentIsSubagent,
      "agent",
    );
    expect(bySlug.message).toContain('"researcher"');
    await expectFailure(resolve("alice", researcher.id), ErrorCode.AgentIsSubagent, "agent");
  });

  describe("narrowSubagents", () => {
    it("keeps the record's own order, drops what is not allowed, never widens", async () => {
      const boss = await agents.create("alice", {
        slug: "boss",
        name: "boss",
        config_json: context({ subagents: ["alpha", "beta", "gamma"] }),
      });

      const narrowed = narrowSubagents(boss, ["gamma", "zeta", "alpha"]);
      expect(narrowed.config_json.context.subagents).toEqual(["alpha", "gamma"]);
      // Everything else of the record is kept.
      expect(narrowed.id).toBe(boss.id);
      expect(narrowed.config_json.context.model).toBe("offline");
      expect(narrowed.config_json.context.system_prompt).toBe("You help.");
      // The stored record is not changed.
      expect(boss.config_json.context.subagents).toEqual(["alpha", "beta", "gamma"]);

      expect(narrowSubagents(boss, []).config_json.context.subagents).toEqual([]);
      expect(narrowSubagents(boss, undefined)).toBe(boss);
    });

    it("an agent with no subagents gets none, whatever is allowed", async () => {
      const solo = await agents.create("alice", {
        slug: "solo",
        name: "solo",
        config_json: context(),
      });
      expect(narrowSubagents(solo, ["alpha"]).config_json.context.subagents).toEqual([]);
    });
  });
});
