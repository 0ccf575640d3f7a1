import { afterEach, describe, expect, it } from "vitest";
import type { AgentRecord } from "../../agents/schema.js";
import { expectError, type HttpServer, startHttpServer } from "../support/http-server.js";
import { mainAgentPayload } from "../support/runtime-fixture.js";

/**
 * An agent's model is checked when it is saved: a spec no model factory can build is a typed
 * 422 on `config_json.context.model` naming the value and what to use, for create and update
 * alike, while the specs the server can run are accepted.
 */
describe("/api/agent checks context.model against the catalog", () => {
  let http: HttpServer | undefined;
  afterEach(async () => {
    await http?.stop();
    http = undefined;
  });

  it("refuses an unknown model on create and update, naming field, value and fix", async () => {
    http = await startHttpServer({ users: ["alice"], runtime: { saver: "sqlite" } });
    const token = http.tokenOf("alice");
    const refused = expectError(
      await http.call("POST", "/api/agent", {
        token,
        body: mainAgentPayload("typo", "nosuch:model", undefined),
      }),
      422,
      "VALIDATION_FAILED",
    );
    expect(refused.field).toBe("config_json.context.model");
    expect(refused.message).toContain('"nosuch:model"');
    expect(refused.message).toContain('"offline"');
    expect(refused.message).toContain("/api/catalog");
    const none = await http.call<{ agents: AgentRecord[] }>("GET", "/api/agent", { token });
    expect(none.body.agents).toEqual([]);

    for (const model of ["offline", "openai:gpt-4o-mini"]) {
      const created = await http.call<AgentRecord>("POST", "/api/agent", {
        token,
        body: mainAgentPayload(`ok-${model.length}`, model, undefined),
      });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
    }
    const created = await http.call<AgentRecord>("POST", "/api/agent", {
      token,
      body: mainAgentPayload("boss", "offline", undefined),
    });
    const update = expectError(
      await http.call("PUT", `/api/agent/${created.body.id}`, {
        token,
        body: {
          config_json: { context: { model: "openai:" } },
          expected_version: created.body.version,
        },
      }),
      422,
      "VALIDATION_FAILED",
    );
    expect(update.field).toBe("config_json.context.model");
    const stored = await http.call<AgentRecord>("GET", `/api/agent/${created.body.id}`, { token });
    expect(stored.body.config_json.context.model).toBe("offline");
  });
});
