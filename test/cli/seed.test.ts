import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, inject, it } from "vitest";
import { seedDemo } from "../../agents/demo.js";
import { createRuntime, type Runtime } from "../../runtime.js";
import { createTestDatabase } from "../support/postgres-cluster.js";

describe("seedDemo", () => {
  let dataDir: string;
  let runtime: Runtime;

  beforeEach(async () => {
    dataDir = await mkdtemp(join(tmpdir(), "cli-seed-"));
    runtime = await createRuntime({ dataDir, env: {} });
  });
  afterEach(async () => {
    await runtime.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  it("creates two subagents and a default main agent that may call both", async () => {
    const created = await seedDemo(runtime, "alice");
    expect(created.map((agent) => [agent.slug, agent.backend_id, agent.is_default])).toEqual([
      ["researcher", "SubAgentBackend", false],
      ["reviewer", "SubAgentBackend", false],
      ["assistant", "ChatAgentBackend", true],
    ]);
    for (const agent of created) {
      expect(agent.owner_uid).toBe("alice");
      expect(agent.description).not.toBe("");
      expect(agent.config_json.context.system_prompt).toBeTruthy();
      // Unset so the process default (offline, or OpenAI with a key) applies.
      expect(agent.config_json.context.model).toBeUndefined();
    }
    const main = await runtime.agents.getDefault("alice");
    expect(main?.slug).toBe("assistant");
    expect(main?.config_json.context.subagents).toEqual(["researcher", "reviewer"]);
  });

  it("lets two processes seed one database at once: each agent is created once, nobody fails", async () => {
    // Two runtimes on one PostgreSQL database stand for two server processes starting together.
    const database = await createTestDatabase(inject("postgresUrl"), "seed");
    const open = () => createRuntime({ dataDir, env: {}, database, checkpointer: "memory" });
    const [first, second] = await Promise.all([open(), open()]);
    try {
      const [mine, theirs] = await Promise.all([
        seedDemo(first, "alice"),
        seedDemo(second, "alice"),
      ]);
      expect([...mine, ...theirs].map((agent) => agent.slug).sort()).toEqual([
        "assistant",
        "researcher",
        "reviewer",
      ]);
      expect(await first.agents.list("alice", { include_subagents: true })).toHaveLength(3);
    } finally {
      await first.close();
      await second.close();
    }
  });

  it("defaults to the demo user", async () => {
    await seedDemo(runtime);
    expect((await runtime.agents.getDefault("demo"))?.slug).toBe("assistant");
  });

  it("is idempotent: a second call creates nothing", async () => {
    await seedDemo(runtime, "alice");
    expect(await seedDemo(runtime, "alice")).toEqual([]);
    const agents = await runtime.agents.list("alice", { include_subagents: true });
    expect(agents.map((agent) => agent.slug).sort()).toEqual([
      "assistant",
      "researcher",
      "reviewer",
    ]);
  });

  it("leaves a user who already has a default agent alone", async () => {
    await runtime.agents.create("bob", { slug: "mine", name: "Mine", is_default: true });
    expect(await seedDemo(runtime, "bob")).toEqual([]);
    const agents = await runtime.agents.list("bob", { include_subagents: true });
    expect(agents.map((agent) => agent.slug)).toEqual(["mine"]);
  });

  it("completes a half-done seed without touching the agents already there", async () => {
    const existing = await runtime.agents.create("carol", {
      slug: "researcher",
      name: "My researcher",
      is_subagent: true,
    });
    const created = await seedDemo(runtime, "carol");
    expect(created.map((agent) => agent.slug)).toEqual(["reviewer", "assistant"]);
    expect(await runtime.agents.get("carol", "researcher")).toEqual(existing);
  });

  it("gives an agent that runs offline and delegates to both subagents", async () => {
    await seedDemo(runtime, "alice");
    const result = await runtime.run({ uid: "alice", input: "Compare solar and wind power" });
    expect(result.output).toContain("[offline model]");
    expect(result.subagentRuns.map((run) => [run.subagent_type, run.status])).toEqual([
      ["researcher", "completed"],
      ["reviewer", "completed"],
    ]);
  });
});
