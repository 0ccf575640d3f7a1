import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resolveGates } from "../../agents/interrupt-on.js";
import type { AgentRecord } from "../../agents/schema.js";
import { expectError, type HttpServer, startHttpServer } from "../support/http-server.js";

describe("context.interrupt_on", () => {
  it("resolves langchain's semantics: true = every decision, false and unset = none", () => {
    expect(resolveGates(undefined).size).toBe(0);
    const gates = resolveGates({
      write_file: true,
      read_file: false,
      task: { allowed_decisions: ["approve", "reject"], description: "delegation" },
    });
    expect([...gates.keys()]).toEqual(["write_file", "task"]);
    expect(gates.get("write_file")?.allowedDecisions).toEqual(["approve", "edit", "reject"]);
    expect(gates.get("task")).toEqual({
      allowedDecisions: ["approve", "reject"],
      description: "delegation",
    });
  });

  describe("saved over HTTP", () => {
    let server: HttpServer;
    beforeAll(async () => {
      server = await startHttpServer();
    });
    afterAll(() => server.stop());

    const create = (slug: string, interrupt_on: unknown) =>
      server.call<AgentRecord>("POST", "/api/agent", {
        token: server.tokenOf("alice"),
        body: { slug, name: slug, config_json: { context: { model: "offline", interrupt_on } } },
      });

    it("keeps a valid map as it was sent", async () => {
      const gates = { write_file: true, ls: false, task: { allowed_decisions: ["approve"] } };
      const created = await create("gated", gates);
      expect(created.status).toBe(201);
      expect(created.body.config_json.context.interrupt_on).toEqual(gates);
    });

    const refusals: [string, unknown, string, string][] = [
      ["a string", "all", "config_json.context.interrupt_on", "tool names to gates"],
      [
        "a gate that is not a boolean or an object",
        { write_file: "yes" },
        "config_json.context.interrupt_on.write_file",
        "true, false",
      ],
      [
        "an unknown decision type",
        { write_file: { allowed_decisions: ["maybe"] } },
        "config_json.context.interrupt_on.write_file.allowed_decisions.0",
        '"approve", "edit", "reject"',
      ],
      [
        "no decisions",
        { write_file: { allowed_decisions: [] } },
        "config_json.context.interrupt_on.write_file.allowed_decisions",
        "non-empty",
      ],
      [
        "a misspelt key",
        { write_file: { allowed_decision: ["approve"] } },
        "config_json.context.interrupt_on.write_file.allowed_decisions",
        "is missing",
      ],
    ];
    for (const [label, gates, field, fix] of refusals) {
      it(`refuses ${label} with a 422 naming the field, the value and the fix`, async () => {
        const error = expectError(await create("bad", gates), 422, "VALIDATION_FAILED");
        expect(error.field).toBe(field);
        expect(error.message).toContain(field);
        expect(error.message).toContain(fix);
        const listed = await server.call<{ agents: AgentRecord[] }>("GET", "/api/agent", {
          token: server.tokenOf("alice"),
        });
        expect(listed.body.agents.map((agent) => agent.slug)).toContain("gated");
        expect(listed.body.agents.map((agent) => agent.slug)).not.toContain("bad");
      });
    }
  });
});
