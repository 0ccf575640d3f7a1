import { afterEach, describe, expect, it } from "vitest";
import type { AgentRecord } from "../../agents/schema.js";
import {
  expectError,
  type HttpServer,
  type StartHttpServerOptions,
  startHttpServer,
} from "../support/http-server.js";
import { mainAgentPayload, subagentPayload } from "../support/runtime-fixture.js";

type AgentList = { agents: AgentRecord[] };

/** `/api/agent` over real HTTP: auth, listing, create/update/delete rules and error bodies. */
describe.each(["sqlite", "postgres"] as const)("/api/agent over HTTP on %s", (saver) => {
  let http: HttpServer | undefined;
  afterEach(async () => {
    await http?.stop();
    http = undefined;
  });

  async function start(options: StartHttpServerOptions = {}) {
    http = await startHttpServer({
      users: ["alice"],
      ...options,
      runtime: { saver, ...options.runtime },
    });
    return { http, token: http.tokenOf("alice") };
  }

  /** Creates an agent as `token`'s user through the API, expecting 201. */
  async function create(server: HttpServer, token: string, payload: unknown) {
    const created = await server.call<AgentRecord>("POST", "/api/agent", { token, body: payload });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    return created.body;
  }

  describe("authentication", () => {
    it("answers 401 without a token, with an unknown token and with a malformed one", async () => {
      const { http } = await start();
      const missing = expectError(await http.call("GET", "/api/agent"), 401, "UNAUTHORIZED");
      expect(missing.message).toContain("no token");
      for (const headers of <Record<string, string>[]>[
        { authorization: "Bearer sgk_not-a-real-token" },
        { "x-api-key": "sgk_not-a-real-token" },
        { authorization: "Bearer garbage" },
      ]) {
        const refused = expectError(
          await http.call("GET", "/api/agent", { headers }),
          401,
          "UNAUTHORIZED",
        );
        expect(refused.message).toContain("unknown or revoked");
      }
      // Neither a bare token nor another scheme counts as a bearer token.
      const token = http.tokenOf("alice");
      for (const authorization of [token, `Basic ${token}`]) {
        expectError(
          await http.call("GET", "/api/agent", { headers: { authorization } }),
          401,
          "UNAUTHORIZED",
        );
      }
      // Every non-public route is guarded, unknown ones included.
      expectError(await http.call("POST", "/threads", { body: {} }), 401, "UNAUTHORIZED");
      expectError(await http.call("GET", "/threads/t1/state"), 401, "UNAUTHORIZED");
      expectError(await http.call("GET", "/no/such/route"), 401, "UNAUTHORIZED");
    });

    it("accepts Authorization: Bearer and x-api-key alike", async () => {
      const { http, token } = await start();
      await create(http, token, mainAgentPayload("boss", "offline", undefined));
      for (const headers of <Record<string, string>[]>[
        { authorization: `Bearer ${token}` },
        { authorization: `bearer ${token}` },
        { "x-api-key": token },
      ]) {
        const listed = await http.call<AgentList>("GET", "/api/agent", { headers });
        expect(listed.status, JSON.stringify(headers)).toBe(200);
        expect(listed.body.agents.map((agent) => agent.slug)).toEqual(["boss"]);
      }
    });

    it("refuses a revoked token at once, with either header, while other tokens still work", async () => {
      const { http, token } = await start();
      const second = await http.fixture.runtime.users.issueToken("alice", { label: "laptop" });
      expect((await http.call("GET", "/api/agent", { token: second.token })).status).toBe(200);

      expect(await http.fixture.runtime.users.revokeToken("alice", second.id)).toBe(true);
      expectError(
        await http.call("GET", "/api/agent", { token: second.token }),
        401,
        "UNAUTHORIZED",
      );
      expectError(
        await http.call("GET", "/api/agent", { headers: { "x-api-key": second.token } }),
        401,
        "UNAUTHORIZED",
      );
      expect((await http.call("GET", "/api/agent", { token })).status).toBe(200);
    });

    it("serves /ok, /info and the OpenAPI document without a token", async () => {
      const { http } = await start();
      const ok = await http.call("GET", "/ok");
      expect(ok).toMatchObject({ status: 200, body: { ok: true } });
      expect((await http.call("GET", "/info")).status).toBe(200);

      const openapi = await http.call<{ openapi: string; paths: Record<string, unknown> }>(
        "GET",
        "/openapi.json",
      );
      expect(openapi.status).toBe(200);
      expect(openapi.body.openapi).toMatch(/^3\./);
      const paths = Object.keys(openapi.body.paths);
      expect(paths).toEqual(
        expect.arrayContaining([
          "/api/agent",
          "/api/agent/{id}",
          "/threads/{thread_id}/runs/stream",
          "/threads/{thread_id}/runs/wait",
        ]),
      );
      // A query string does not make a public path private.
      expect((await http.call("GET", "/ok?probe=1")).status).toBe(200);
    });
  });

  describe("GET /api/agent", () => {
    it("lists chat agents only, and subagents too with include_subagents=true", async () => {
      const { http, token } = await start();
      await create(http, token, subagentPayload("researcher", "offline"));
      await create(http, token, mainAgentPayload("boss", "offline", ["researcher"]));
      await create(http, token, subagentPayload("reviewer", "offline"));
      await create(http, token, mainAgentPayload("helper", "offline", undefined));

      const chat = await http.call<AgentList>("GET", "/api/agent", { token });
      expect(chat.status).toBe(200);
      expect(chat.body.agents.map((agent) => agent.slug)).toEqual(["boss", "helper"]);
      expect(chat.body.agents.every((agent) => !agent.is_subagent)).toBe(true);

      const explicitFalse = await http.call<AgentList>(
        "GET",
        "/api/agent?include_subagents=false",
        { token },
      );
      expect(explicitFalse.body.agents.map((agent) => agent.slug)).toEqual(["boss", "helper"]);

      const all = await http.call<AgentList>("GET", "/api/agent?include_subagents=true", {
        token,
      });
      expect(all.status).toBe(200);
      expect(all.body.agents.map((agent) => [agent.slug, agent.is_subagent])).toEqual([
        ["researcher", true],
        ["boss", false],
        ["reviewer", true],
        ["helper", false],
      ]);

      const bad = expectError(
        await http.call("GET", "/api/agent?include_subagents=yes", { token }),
        422,
        "VALIDATION_FAILED",
      );
      expect(bad.message).toContain("include_subagents");
    });
  });

  describe("POST /api/agent", () => {
    it("derives is_subagent from SubAgentBackend, and the backend from is_subagent", async () => {
      const { http, token } = await start();
      const bySubagentBackend = await http.call<AgentRecord>("POST", "/api/agent", {
        token,
        body: subagentPayload("researcher", "offline", { subagents: ["someone"] }),
      });
      expect(bySubagentBackend.status).toBe(201);
      expect(bySubagentBackend.body).toMatchObject({
        slug: "researcher",
        backend_id: "SubAgentBackend",
        is_subagent: true,
        is_default: false,
        owner_uid: "alice",
        version: 1,
        share_config: { mode: "private", uids: [], editors: [] },
      });
      // Subagents never nest: their allow-list is forced empty.
      expect(bySubagentBackend.body.config_json.context.subagents).toEqual([]);
      expect(bySubagentBackend.body.id).toMatch(/^[0-9a-f-]{36}$/);

      const byFlag = await create(http, token, {
        slug: "flagged",
        name: "flagged",
        is_subagent: true,
      });
      expect(byFlag).toMatchObject({ backend_id: "SubAgentBackend", is_subagent: true });

      const chat = await create(http, token, mainAgentPayload("boss", "offline", ["researcher"]));
      expect(chat).toMatchObject({ backend_id: "ChatAgentBackend", is_subagent: false });
      expect(chat.config_json.context.subagents).toEqual(["researcher"]);

      const stored = await http.call<AgentRecord>(
        "GET",
        `/api/agent/${bySubagentBackend.body.id}`,
        {
          token,
        },
      );
      expect(stored.body).toEqual(bySubagentBackend.body);
    });

    it("refuses a backend that contradicts is_subagent, naming both fields", async () => {
      const { http, token } = await start();
      for (const [backend_id, is_subagent] of [
        ["SubAgentBackend", false],
        ["ChatAgentBackend", true],
      ] as const) {
        const error = expectError(
          await http.call("POST", "/api/agent", {
            token,
            body: { slug: "odd", name: "odd", backend_id, is_subagent },
          }),
          422,
          "BACKEND_SUBAGENT_MISMATCH",
        );
        expect(error.message).toContain("backend_id");
        expect(error.message).toContain("is_subagent");
        expect(error.message).toContain(backend_id);
        expect(error.field).toBe("is_subagent");
      }
      const all = await http.call<AgentList>("GET", "/api/agent?include_subagents=true", {
        token,
      });
      expect(all.body.agents).toEqual([]);
    });

    it("refuses a default subagent", async () => {
      const { http, token } = await start();
      const error = expectError(
        await http.call("POST", "/api/agent", {
          token,
          body: { ...subagentPayload("researcher", "offline"), is_default: true },
        }),
        422,
        "SUBAGENT_CANNOT_BE_DEFAULT",
      );
      expect(error.field).toBe("is_default");
      expect(error.message).toContain("researcher");
    });

    it("refuses unknown and invalid fields with 422 naming the field", async () => {
      const { http, token } = await start();
      const unknownTop = expectError(
        await http.call("POST", "/api/agent", {
          token,
          body: { ...mainAgentPayload("boss", "offline", undefined), colour: "blue" },
        }),
        422,
        "VALIDATION_FAILED",
      );
      expect(unknownTop.field).toBe("colour");
      expect(unknownTop.message).toContain('"colour"');

      const unknownNested = expectError(
        await http.call("POST", "/api/agent", {
          token,
          body: mainAgentPayload("boss", "offline", undefined, { temperature: 0.2 }),
        }),
        422,
        "VALIDATION_FAILED",
      );
      expect(unknownNested.field).toBe("config_json.context.temperature");
      expect(unknownNested.message).toContain("config_json.context.temperature");

      const badSlug = expectError(
        await http.call("POST", "/api/agent", {
          token,
          body: { slug: "Not_A_Slug", name: "x" },
        }),
        422,
        "VALIDATION_FAILED",
      );
      expect(badSlug.field).toBe("slug");
      expect(badSlug.message).toContain("Not_A_Slug");

      const missingName = expectError(
        await http.call("POST", "/api/agent", { token, body: { slug: "boss" } }),
        422,
        "VALIDATION_FAILED",
      );
      expect(missingName.field).toBe("name");

      const notAnObject = expectError(
        await http.call("POST", "/api/agent", { token, body: ["boss"] }),
        422,
        "VALIDATION_FAILED",
      );
      expect(notAnObject.field).toBeUndefined();

      const list = await http.call<AgentList>("GET", "/api/agent?include_subagents=true", {
        token,
      });
      expect(list.body.agents).toEqual([]);
    });

    it("answers 409 SLUG_TAKEN for a slug the owner already uses, subagents included", async () => {
      const { http, token } = await start();
      await create(http, token, subagentPayload("researcher", "offline"));
      const error = expectError(
        await http.call("POST", "/api/agent", {
          token,
          body: mainAgentPayload("researcher", "offline", undefined),
        }),
        409,
        "SLUG_TAKEN",
      );
      expect(error.field).toBe("slug");
      expect(error.message).toContain('"researcher"');
      const list = await http.call<AgentList>("GET", "/api/agent?include_subagents=true", {
        token,
      });
      expect(list.body.agents.map((agent) => agent.slug)).toEqual(["researcher"]);
    });
  });

  describe("PUT /api/agent/:id", () => {
    it("bumps the version, accepts a matching backend or flag, and refuses backend changes", async () => {
      const { http, token } = await start();
      const sub = await create(http, token, subagentPayload("researcher", "offline"));
      const path = `/api/agent/${sub.id}`;

      const renamed = await http.call<AgentRecord>("PUT", path, {
        token,
        body: { name: "Researcher", is_subagent: true },
      });
      expect(renamed.status).toBe(200);
      expect(renamed.body).toMatchObject({
        id: sub.id,
        name: "Researcher",
        is_subagent: true,
        backend_id: "SubAgentBackend",
        version: 2,
      });
      const same = await http.call<AgentRecord>("PUT", path, {
        token,
        body: { backend_id: "SubAgentBackend", description: "digs" },
      });
      expect(same.body).toMatchObject({ description: "digs", version: 3 });

      const toChat = expectError(
        await http.call("PUT", path, { token, body: { backend_id: "ChatAgentBackend" } }),
        422,
        "BACKEND_ID_IMMUTABLE",
      );
      expect(toChat.field).toBe("backend_id");
      // is_subagent false implies the chat backend: the same refusal, about that field.
      const byFlag = expectError(
        await http.call("PUT", path, { token, body: { is_subagent: false } }),
        422,
        "BACKEND_ID_IMMUTABLE",
      );
      expect(byFlag.field).toBe("is_subagent");
      const contradiction = expectError(
        await http.call("PUT", path, {
          token,
          body: { backend_id: "SubAgentBackend", is_subagent: false },
        }),
        422,
        "BACKEND_SUBAGENT_MISMATCH",
      );
      expect(contradiction.message).toContain("backend_id");
      expect(contradiction.message).toContain("is_subagent");
      expectError(
        await http.call("PUT", path, { token, body: { is_default: true } }),
        422,
        "SUBAGENT_CANNOT_BE_DEFAULT",
      );
      const unknown = expectError(
        await http.call("PUT", path, { token, body: { nickname: "r" } }),
        422,
        "VALIDATION_FAILED",
      );
      expect(unknown.field).toBe("nickname");

      // Failed updates change nothing.
      const stored = await http.call<AgentRecord>("GET", path, { token });
      expect(stored.body).toMatchObject({ version: 3, backend_id: "SubAgentBackend" });
      expect(stored.body).toEqual(same.body);

      const chat = await create(http, token, mainAgentPayload("boss", "offline", undefined));
      const toSub = expectError(
        await http.call("PUT", `/api/agent/${chat.id}`, { token, body: { is_subagent: true } }),
        422,
        "BACKEND_ID_IMMUTABLE",
      );
      expect(toSub.message).toContain("ChatAgentBackend");
      expect(toSub.message).toContain("SubAgentBackend");
    });

    it("answers 409 for a stale expected_version and applies a current one", async () => {
      const { http, token } = await start();
      const boss = await create(http, token, mainAgentPayload("boss", "offline", undefined));
      const path = `/api/agent/${boss.id}`;
      const first = await http.call<AgentRecord>("PUT", path, {
        token,
        body: { name: "Boss", expected_version: 1 },
      });
      expect(first.status).toBe(200);
      expect(first.body.version).toBe(2);

      const stale = expectError(
        await http.call("PUT", path, { token, body: { name: "Stale", expected_version: 1 } }),
        409,
        "VERSION_CONFLICT",
      );
      expect(stale.field).toBe("expected_version");
      expect(stale.message).toContain("version 2");

      const current = await http.call<AgentRecord>("PUT", path, {
        token,
        body: { name: "Current", expected_version: 2 },
      });
      expect(current.body).toMatchObject({ name: "Current", version: 3 });
      // The slug names the agent too.
      const bySlug = await http.call<AgentRecord>("PUT", "/api/agent/boss", {
        token,
        body: { description: "by slug" },
      });
      expect(bySlug.body).toMatchObject({ id: boss.id, description: "by slug", version: 4 });
    });

    it("answers 409 SLUG_TAKEN when renaming onto another agent's slug", async () => {
      const { http, token } = await start();
      await create(http, token, mainAgentPayload("boss", "offline", undefined));
      const other = await create(http, token, mainAgentPayload("helper", "offline", undefined));
      expectError(
        await http.call("PUT", `/api/agent/${other.id}`, { token, body: { slug: "boss" } }),
        409,
        "SLUG_TAKEN",
      );
      const stored = await http.call<AgentRecord>("GET", `/api/agent/${other.id}`, { token });
      expect(stored.body).toMatchObject({ slug: "helper", version: 1 });
    });
  });

  describe("subagents by id", () => {
    it("gets, updates and deletes a subagent", async () => {
      const { http, token } = await start();
      const sub = await create(http, token, subagentPayload("researcher", "offline"));
      const byId = await http.call<AgentRecord>("GET", `/api/agent/${sub.id}`, { token });
      expect(byId.status).toBe(200);
      expect(byId.body).toEqual(sub);
      const bySlug = await http.call<AgentRecord>("GET", "/api/agent/researcher", { token });
      expect(bySlug.body.id).toBe(sub.id);

      const updated = await http.call<AgentRecord>("PUT", `/api/agent/${sub.id}`, {
        token,
        body: { config_json: { context: { model: "offline", system_prompt: "Dig deeper." } } },
      });
      expect(updated.status).toBe(200);
      expect(updated.body.config_json.context).toEqual({
        model: "offline",
        system_prompt: "Dig deeper.",
        subagents: [],
      });

      const deleted = await http.call("DELETE", `/api/agent/${sub.id}`, { token });
      expect(deleted.status).toBe(204);
      expect(deleted.body).toBe("");
      const gone = expectError(
        await http.call("GET", `/api/agent/${sub.id}`, { token }),
        404,
        "NOT_FOUND",
      );
      expect(gone.message).toContain(sub.id);
      expectError(await http.call("DELETE", `/api/agent/${sub.id}`, { token }), 404, "NOT_FOUND");
      expectError(
        await http.call("PUT", `/api/agent/${sub.id}`, { token, body: { name: "x" } }),
        404,
        "NOT_FOUND",
      );
    });

    it("refuses to delete a subagent main agents list (naming them) unless detach=true", async () => {
      const { http, token } = await start();
      const sub = await create(http, token, subagentPayload("researcher", "offline"));
      const keep = await create(http, token, subagentPayload("reviewer", "offline"));
      const boss = await create(
        http,
        token,
        mainAgentPayload("boss", "offline", ["researcher", "reviewer"]),
      );
      const helper = await create(
        http,
        token,
        mainAgentPayload("helper", "offline", ["researcher"]),
      );
      const bystander = await create(http, token, mainAgentPayload("solo", "offline", undefined));

      const inUse = expectError(
        await http.call("DELETE", `/api/agent/${sub.id}`, { token }),
        409,
        "AGENT_IN_USE",
      );
      expect(inUse.message).toContain('"boss"');
      expect(inUse.message).toContain('"helper"');
      expect(inUse.message).not.toContain('"solo"');
      expect(inUse.message).toContain("detach=true");
      expectError(
        await http.call("DELETE", `/api/agent/${sub.id}?detach=false`, { token }),
        409,
        "AGENT_IN_USE",
      );
      expect((await http.call("GET", `/api/agent/${sub.id}`, { token })).status).toBe(200);

      const detached = await http.call("DELETE", `/api/agent/${sub.id}?detach=true`, { token });
      expect(detached.status).toBe(204);
      expectError(await http.call("GET", `/api/agent/${sub.id}`, { token }), 404, "NOT_FOUND");

      const bossAfter = await http.call<AgentRecord>("GET", `/api/agent/${boss.id}`, { token });
      expect(bossAfter.body.config_json.context.subagents).toEqual(["reviewer"]);
      expect(bossAfter.body.version).toBe(boss.version + 1);
      const helperAfter = await http.call<AgentRecord>("GET", `/api/agent/${helper.id}`, {
        token,
      });
      expect(helperAfter.body.config_json.context.subagents).toEqual([]);
      const soloAfter = await http.call<AgentRecord>("GET", `/api/agent/${bystander.id}`, {
        token,
      });
      expect(soloAfter.body).toEqual(bystander);
      expect((await http.call("GET", `/api/agent/${keep.id}`, { token })).status).toBe(200);

      // Only the detached slug left the lists: boss still lists the other subagent.
      expectError(
        await http.call("DELETE", `/api/agent/${keep.id}`, { token }),
        409,
        "AGENT_IN_USE",
      );
      // A chat agent is deleted without any check of lists.
      expect((await http.call("DELETE", `/api/agent/${boss.id}`, { token })).status).toBe(204);
      expect((await http.call("DELETE", `/api/agent/${keep.id}`, { token })).status).toBe(204);
    });
  });

  describe("malformed requests", () => {
    it("answers 400 MALFORMED_JSON for a body that is not JSON", async () => {
      const { http, token } = await start();
      const boss = await create(http, token, mainAgentPayload("boss", "offline", undefined));
      const posted = expectError(
        await http.call("POST", "/api/agent", { token, raw: '{"slug": "x",' }),
        400,
        "MALFORMED_JSON",
      );
      expect(posted.message).toContain("malformed JSON");
      expectError(
        await http.call("PUT", `/api/agent/${boss.id}`, { token, raw: "{name: 'x'}" }),
        400,
        "MALFORMED_JSON",
      );
      expectError(
        await http.call("POST", "/threads", { token, raw: "nope" }),
        400,
        "MALFORMED_JSON",
      );
      const stored = await http.call<AgentRecord>("GET", `/api/agent/${boss.id}`, { token });
      expect(stored.body).toEqual(boss);
    });

    it("answers 413 for a body over the limit, writing nothing", async () => {
      const { http, token } = await start({ server: { bodyLimit: 1024 } });
      const small = await create(http, token, mainAgentPayload("small", "offline", undefined));
      expect(small.slug).toBe("small");
      const big = {
        ...mainAgentPayload("big", "offline", undefined),
        description: "x".repeat(2048),
      };
      const error = expectError(
        await http.call("POST", "/api/agent", { token, body: big }),
        413,
        "TOO_LARGE",
      );
      expect(error.message).toContain("smaller body");
      expectError(
        await http.call("PUT", `/api/agent/${small.id}`, {
          token,
          body: { description: "y".repeat(2048) },
        }),
        413,
        "TOO_LARGE",
      );
      const list = await http.call<AgentList>("GET", "/api/agent", { token });
      expect(list.body.agents).toEqual([small]);
    });

    it("answers 415 for a body that is not JSON by content type", async () => {
      const { http, token } = await start();
      expectError(
        await http.call("POST", "/api/agent", {
          token,
          raw: "slug=boss",
          headers: { "content-type": "text/csv" },
        }),
        415,
        "UNSUPPORTED_MEDIA_TYPE",
      );
    });

    it("answers a URL the router cannot decode in our error shape (400 BAD_REQUEST)", async () => {
      const { http, token } = await start();
      // Fastify's router refuses it before any hook, in its own shape unless told otherwise.
      const error = expectError(
        await http.call("GET", "/api/agent/%E0%A4%A", { token }),
        400,
        "BAD_REQUEST",
      );
      expect(error.message).toContain("percent-encode the path");
    });

    it("answers an unknown route with a JSON 404 naming it", async () => {
      const { http, token } = await start();
      for (const [method, path] of [
        ["GET", "/api/agents"],
        ["PATCH", "/api/agent/some-id"],
        ["GET", "/api/agent/some-id/extra?x=1"],
      ] as const) {
        const error = expectError(await http.call(method, path, { token }), 404, "NOT_FOUND");
        expect(error.message).toBe(`no route ${method} ${path.split("?")[0]}`);
      }
    });
  });
});
