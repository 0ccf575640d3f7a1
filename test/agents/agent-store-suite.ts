/**
 * The agent store's contract, written once and run on every database we ship.
 *
 * Each dialect's test file is two lines: `runAgentStoreSuite("sqlite", openFresh)`. The opener
 * must return an empty, migrated database on every call; the suite closes it.
 */

import { randomUUID } from "node:crypto";
import type { Kysely } from "kysely";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { AgentRepository } from "../../agents/repository.js";
import type { AgentRecord } from "../../agents/schema.js";
import { ErrorCode } from "../../errors.js";
import type { Database } from "../../store/database.js";
import type { DatabaseSchema } from "../../store/schema.js";
import { expectFailure, steppingClock } from "./helpers.js";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** Runs the agent store suite against databases made by `openDatabase`. */
export function runAgentStoreSuite(name: string, openDatabase: () => Promise<Database>): void {
  describe(`agent store on ${name}`, () => {
    let database: Database;
    let db: Kysely<DatabaseSchema>;
    let agents: AgentRepository;

    beforeEach(async () => {
      database = await openDatabase();
      db = database.db;
      agents = new AgentRepository(db, { now: steppingClock() });
    });
    afterEach(async () => {
      await database.close();
    });

    async function countAgents(): Promise<number> {
      return (await db.selectFrom("agents").select("id").execute()).length;
    }

    /** The stored row, to prove a rejected write changed nothing. */
    async function rowOf(id: string) {
      return db.selectFrom("agents").selectAll().where("id", "=", id).executeTakeFirst();
    }

    function chat(uid: string, slug: string, extra: Record<string, unknown> = {}) {
      return agents.create(uid, { slug, name: `Agent ${slug}`, ...extra });
    }

    function subagent(uid: string, slug: string, extra: Record<string, unknown> = {}) {
      return agents.create(uid, {
        slug,
        name: `Sub ${slug}`,
        backend_id: "SubAgentBackend",
        ...extra,
      });
    }

    const slugs = (records: readonly AgentRecord[]) => records.map((record) => record.slug);

    describe("create", () => {
      it("stores a minimal payload with every default and reads it back unchanged", async () => {
        const created = await chat("alice", "helper");
        expect(created.id).toMatch(UUID);
        expect(created).toMatchObject({
          slug: "helper",
          description: "",
          backend_id: "ChatAgentBackend",
          is_subagent: false,
          is_default: false,
          owner_uid: "alice",
          share_config: { mode: "private", uids: [], editors: [] },
          config_json: { context: {} },
          version: 1,
        });
        expect(created.updated_at).toBe(created.created_at);
        expect(await agents.get("alice", created.id)).toEqual(created);
        expect(await agents.get("alice", "helper")).toEqual(created);
      });

      it("keeps unset lists unset and empty lists empty through the database", async () => {
        const created = await chat("alice", "helper", {
          config_json: { context: { tools: [], skills: ["pdf"], max_rounds: 4 } },
        });
        const read = await agents.get("alice", created.id);
        expect(read.config_json.context).toEqual({ tools: [], skills: ["pdf"], max_rounds: 4 });
        expect("mcp_servers" in read.config_json.context).toBe(false);
        expect("subagents" in read.config_json.context).toBe(false);
      });

      it("derives is_subagent from SubAgentBackend", async () => {
        const created = await agents.create("alice", {
          slug: "researcher",
          name: "R",
          backend_id: "SubAgentBackend",
        });
        expect(created.is_subagent).toBe(true);
        expect((await agents.get("alice", created.id)).is_subagent).toBe(true);
      });

      it("derives SubAgentBackend from is_subagent", async () => {
        const created = await agents.create("alice", {
          slug: "researcher",
          name: "R",
          is_subagent: true,
        });
        expect(created.backend_id).toBe("SubAgentBackend");
        expect((await agents.get("alice", created.id)).backend_id).toBe("SubAgentBackend");
      });

      it("rejects a contradiction between backend_id and is_subagent and writes nothing", async () => {
        const error = await expectFailure(
          agents.create("alice", {
            slug: "researcher",
            name: "R",
            backend_id: "SubAgentBackend",
            is_subagent: false,
          }),
          ErrorCode.BackendMismatch,
          "is_subagent",
        );
        expect(error.message).toContain("backend_id");
        expect(error.message).toContain("is_subagent");
        await expectFailure(
          agents.create("alice", {
            slug: "x",
            name: "X",
            backend_id: "ChatAgentBackend",
            is_subagent: true,
          }),
          ErrorCode.BackendMismatch,
          "is_subagent",
        );
        expect(await countAgents()).toBe(0);
      });

      it("rejects a default subagent and writes nothing", async () => {
        await expectFailure(
          subagent("alice", "researcher", { is_default: true }),
          ErrorCode.SubagentDefault,
          "is_default",
        );
        expect(await countAgents()).toBe(0);
      });

      it("forces a subagent's subagents to []", async () => {
        const created = await subagent("alice", "researcher", {
          config_json: { context: { model: "offline", subagents: ["helper"] } },
        });
        expect(created.config_json.context).toEqual({ model: "offline", subagents: [] });
        expect((await agents.get("alice", created.id)).config_json.context.subagents).toEqual([]);
      });

      it.each(["My_Agent", "my_agent", "Agent", "-agent", ""])(
        "rejects slug %j and writes nothing",
        async (slug) => {
          const error = await expectFailure(
            agents.create("alice", { slug, name: "x" }),
            ErrorCode.Validation,
            "slug",
          );
          expect(error.message).toContain(`slug ${JSON.stringify(slug)} is invalid`);
          expect(await countAgents()).toBe(0);
        },
      );

      it("rejects unknown keys and writes nothing", async () => {
        await expectFailure(
          agents.create("alice", { slug: "a", name: "x", owner_uid: "mallory" }),
          ErrorCode.Validation,
          "owner_uid",
        );
        await expectFailure(
          agents.create("alice", {
            slug: "a",
            name: "x",
            config_json: { context: { tool: ["a"] } },
          }),
          ErrorCode.Validation,
          "config_json.context.tool",
        );
        expect(await countAgents()).toBe(0);
      });

      it("keeps slugs unique per owner, and lets another owner reuse one", async () => {
        await chat("alice", "helper");
        const error = await expectFailure(chat("alice", "helper"), ErrorCode.SlugTaken, "slug");
        expect(error.message).toContain('"helper"');
        expect(await countAgents()).toBe(1);
        const bobs = await chat("bob", "helper");
        expect(bobs.owner_uid).toBe("bob");
        expect(await countAgents()).toBe(2);
      });

      it("rolls back the default switch when the insert fails", async () => {
        const first = await chat("alice", "helper", { is_default: true });
        await expectFailure(chat("alice", "helper", { is_default: true }), ErrorCode.SlugTaken);
        expect(await rowOf(first.id)).toMatchObject({ is_default: 1, version: 1 });
        expect((await agents.getDefault("alice"))?.id).toBe(first.id);
      });
    });

    describe("visibility", () => {
      it("hides a private agent from others, with the same answer as for an absent one", async () => {
        const secret = await chat("alice", "secret");
        const hidden = await expectFailure(agents.get("bob", secret.id), ErrorCode.NotFound);
        expect(await agents.find("bob", secret.id)).toBeUndefined();
        expect(await agents.find("bob", "secret")).toBeUndefined();
        expect(await agents.list("bob")).toEqual([]);
        await agents.delete("alice", secret.id);
        const absent = await expectFailure(agents.get("bob", secret.id), ErrorCode.NotFound);
        expect(hidden.message).toBe(absent.message);
      });

      it("shows a users-mode agent to the listed users only", async () => {
        const shared = await chat("alice", "shared", {
          share_config: { mode: "users", uids: ["bob"] },
        });
        expect((await agents.get("bob", "shared")).id).toBe(shared.id);
        expect(slugs(await agents.list("bob"))).toEqual(["shared"]);
        await expectFailure(agents.get("carol", shared.id), ErrorCode.NotFound);
        expect(await agents.list("carol")).toEqual([]);
      });

      it("shows a public agent to everyone", async () => {
        const open = await chat("alice", "open", { share_config: { mode: "public" } });
        expect((await agents.get("anyone", open.id)).slug).toBe("open");
        expect(slugs(await agents.list("anyone"))).toEqual(["open"]);
      });

      it("shows a private agent to its editors", async () => {
        const edited = await chat("alice", "edited", { share_config: { editors: ["carol"] } });
        expect((await agents.get("carol", edited.id)).id).toBe(edited.id);
        expect(slugs(await agents.list("carol"))).toEqual(["edited"]);
        await expectFailure(agents.get("bob", edited.id), ErrorCode.NotFound);
      });

      it("resolves a shared slug to the user's own agent, else the oldest visible one", async () => {
        const alices = await chat("alice", "helper", { share_config: { mode: "public" } });
        const bobs = await chat("bob", "helper");
        await chat("dave", "helper", { share_config: { mode: "public" } });
        expect((await agents.get("bob", "helper")).id).toBe(bobs.id);
        expect((await agents.get("carol", "helper")).id).toBe(alices.id);
        expect((await agents.get("dave", "helper")).owner_uid).toBe("dave");
      });
    });

    describe("update and delete rights", () => {
      it("lets a viewer see but not change or delete: FORBIDDEN, nothing written", async () => {
        const shared = await chat("alice", "shared", { share_config: { mode: "public" } });
        const before = await rowOf(shared.id);
        await expectFailure(agents.update("bob", shared.id, { name: "mine" }), ErrorCode.Forbidden);
        await expectFailure(agents.delete("bob", shared.id), ErrorCode.Forbidden);
        expect(await rowOf(shared.id)).toEqual(before);
      });

      it("answers NOT_FOUND to someone who cannot see the agent, nothing written", async () => {
        const secret = await chat("alice", "secret");
        const before = await rowOf(secret.id);
        await expectFailure(agents.update("bob", secret.id, { name: "mine" }), ErrorCode.NotFound);
        await expectFailure(agents.delete("bob", secret.id), ErrorCode.NotFound);
        await expectFailure(agents.update("bob", randomUUID(), { name: "x" }), ErrorCode.NotFound);
        expect(await rowOf(secret.id)).toEqual(before);
      });

      it("lets an editor update and delete", async () => {
        const edited = await chat("alice", "edited", { share_config: { editors: ["carol"] } });
        const updated = await agents.update("carol", edited.id, { description: "by carol" });
        expect(updated).toMatchObject({ description: "by carol", owner_uid: "alice", version: 2 });
        await agents.delete("carol", edited.id);
        expect(await countAgents()).toBe(0);
      });

      it("deletes for the owner", async () => {
        const mine = await chat("alice", "mine");
        await agents.delete("alice", mine.id);
        await expectFailure(agents.get("alice", mine.id), ErrorCode.NotFound);
        expect(await countAgents()).toBe(0);
      });

      it("refuses to delete a subagent its owner's main agents list, naming them", async () => {
        const researcher = await subagent("alice", "researcher", {
          share_config: { mode: "public" },
        });
        const boss = await chat("alice", "boss", {
          config_json: { context: { subagents: ["researcher", "general-purpose"] } },
        });
        // Another user's reference is by slug only: it neither blocks nor is named.
        await chat("bob", "bobs", { config_json: { context: { subagents: ["researcher"] } } });
        const before = await rowOf(boss.id);

        const failure = await expectFailure(
          agents.delete("alice", researcher.id),
          ErrorCode.AgentInUse,
        );
        expect(failure.message).toContain('"boss"');
        expect(failure.message).not.toContain("bobs");
        expect(failure.message).toContain("detach");
        expect(await rowOf(boss.id)).toEqual(before);
        expect(await countAgents()).toBe(3);
      });

      it("names the referencing agents in byte order of their slugs", async () => {
        const researcher = await subagent("alice", "researcher");
        for (const slug of ["b", "ab", "a-c", "a1"]) {
          await chat("alice", slug, { config_json: { context: { subagents: ["researcher"] } } });
        }
        const failure = await expectFailure(
          agents.delete("alice", researcher.id),
          ErrorCode.AgentInUse,
        );
        expect(failure.message).toContain('of "a-c", "a1", "ab", "b":');
      });

      it("detaches a listed subagent on request, bumping each referencing agent's version", async () => {
        const researcher = await subagent("alice", "researcher");
        const boss = await chat("alice", "boss", {
          config_json: { context: { subagents: ["researcher", "general-purpose"], max_rounds: 4 } },
        });

        await agents.delete("alice", researcher.id, { detach: true });

        await expectFailure(agents.get("alice", researcher.id), ErrorCode.NotFound);
        const after = await agents.get("alice", boss.id);
        expect(after.version).toBe(boss.version + 1);
        expect(after.config_json.context).toEqual({
          subagents: ["general-purpose"],
          max_rounds: 4,
        });
      });
    });

    describe("update", () => {
      it("bumps the version by exactly one per update and keeps created_at", async () => {
        const created = await chat("alice", "helper");
        const second = await agents.update("alice", created.id, { name: "Two" });
        expect(second.version).toBe(2);
        expect(second.created_at).toBe(created.created_at);
        expect(second.updated_at > created.updated_at).toBe(true);
        const third = await agents.update("alice", created.id, {});
        expect(third.version).toBe(3);
        expect(await agents.get("alice", created.id)).toEqual(third);
      });

      it("refuses a stale expected_version and writes nothing", async () => {
        const created = await chat("alice", "helper");
        await agents.update("alice", created.id, { name: "Two", expected_version: 1 });
        const before = await rowOf(created.id);
        await expectFailure(
          agents.update("alice", created.id, { name: "Lost", expected_version: 1 }),
          ErrorCode.VersionConflict,
          "expected_version",
        );
        expect(await rowOf(created.id)).toEqual(before);
        expect(before?.version).toBe(2);
      });

      it("refuses to change the backend either way, and accepts repeating it", async () => {
        const helper = await chat("alice", "helper");
        const researcher = await subagent("alice", "researcher");
        const before = await rowOf(helper.id);
        await expectFailure(
          agents.update("alice", helper.id, { backend_id: "SubAgentBackend" }),
          ErrorCode.BackendImmutable,
          "backend_id",
        );
        await expectFailure(
          agents.update("alice", helper.id, { is_subagent: true }),
          ErrorCode.BackendImmutable,
          "is_subagent",
        );
        await expectFailure(
          agents.update("alice", researcher.id, { backend_id: "ChatAgentBackend" }),
          ErrorCode.BackendImmutable,
          "backend_id",
        );
        expect(await rowOf(helper.id)).toEqual(before);
        const same = await agents.update("alice", researcher.id, {
          backend_id: "SubAgentBackend",
          is_subagent: true,
        });
        expect(same.version).toBe(2);
      });

      it("refuses to make a subagent the default and writes nothing", async () => {
        const researcher = await subagent("alice", "researcher");
        const before = await rowOf(researcher.id);
        await expectFailure(
          agents.update("alice", researcher.id, { is_default: true }),
          ErrorCode.SubagentDefault,
          "is_default",
        );
        expect(await rowOf(researcher.id)).toEqual(before);
      });

      it("forces a subagent's subagents to [] on update", async () => {
        const researcher = await subagent("alice", "researcher");
        const updated = await agents.update("alice", researcher.id, {
          config_json: { context: { model: "offline", subagents: ["other"] } },
        });
        expect(updated.config_json.context).toEqual({ model: "offline", subagents: [] });
        expect((await agents.get("alice", researcher.id)).config_json.context.subagents).toEqual(
          [],
        );
      });

      it("replaces the context as a whole, so a list can be unset again", async () => {
        const helper = await chat("alice", "helper", {
          config_json: { context: { tools: ["a"] } },
        });
        const updated = await agents.update("alice", helper.id, {
          config_json: { context: { model: "offline" } },
        });
        expect(updated.config_json.context).toEqual({ model: "offline" });
      });

      it("renames the slug, but not onto another of the owner's slugs", async () => {
        const helper = await chat("alice", "helper");
        await chat("alice", "taken");
        await chat("bob", "bobs");
        const before = await rowOf(helper.id);
        const error = await expectFailure(
          agents.update("alice", helper.id, { slug: "taken" }),
          ErrorCode.SlugTaken,
          "slug",
        );
        expect(error.message).toContain('"taken"');
        expect(await rowOf(helper.id)).toEqual(before);
        await expectFailure(
          agents.update("alice", helper.id, { slug: "Bad_Slug" }),
          ErrorCode.Validation,
          "slug",
        );
        expect(await rowOf(helper.id)).toEqual(before);
        expect((await agents.update("alice", helper.id, { slug: "bobs" })).slug).toBe("bobs");
        expect((await agents.get("alice", "bobs")).id).toBe(helper.id);
      });

      it("rejects unknown keys in a patch and writes nothing", async () => {
        const helper = await chat("alice", "helper");
        const before = await rowOf(helper.id);
        await expectFailure(
          agents.update("alice", helper.id, { version: 7 }),
          ErrorCode.Validation,
          "version",
        );
        expect(await rowOf(helper.id)).toEqual(before);
      });
    });

    describe("ensure", () => {
      const payload = {
        slug: "researcher",
        name: "Researcher",
        backend_id: "SubAgentBackend",
        config_json: { context: { system_prompt: "Find facts.", tools: ["read_file"] } },
      };

      it("creates the agent once; declaring it again writes nothing and keeps the version", async () => {
        const first = await agents.ensure("alice", payload);
        expect(first).toMatchObject({ slug: "researcher", is_subagent: true, version: 1 });
        const before = await rowOf(first.id);
        // Same definition, other key order: still no write.
        const again = await agents.ensure("alice", {
          config_json: { context: { tools: ["read_file"], system_prompt: "Find facts." } },
          backend_id: "SubAgentBackend",
          name: "Researcher",
          slug: "researcher",
        });
        expect(again.id).toBe(first.id);
        expect(again.version).toBe(1);
        expect(await rowOf(first.id)).toEqual(before);
        expect(await countAgents()).toBe(1);
      });

      it("brings a changed definition to the payload, fields left out back to their defaults", async () => {
        const first = await agents.ensure("alice", { ...payload, description: "old" });
        const changed = await agents.ensure("alice", {
          ...payload,
          config_json: { context: { system_prompt: "Find sources." } },
        });
        expect(changed.id).toBe(first.id);
        expect(changed.version).toBe(2);
        expect(changed.description).toBe("");
        expect(changed.config_json.context.system_prompt).toBe("Find sources.");
        expect(changed.config_json.context.tools).toBeUndefined();
        expect(await agents.get("alice", first.id)).toEqual(changed);
      });

      it("leaves another owner's shared agent with the same slug alone", async () => {
        const shared = await agents.create("bob", {
          ...payload,
          share_config: { mode: "public" },
        });
        const own = await agents.ensure("alice", payload);
        expect(own.id).not.toBe(shared.id);
        expect(own.owner_uid).toBe("alice");
        expect((await agents.get("bob", shared.id)).version).toBe(1);
      });

      it("refuses to change the backend of the owned agent, writing nothing", async () => {
        const sub = await agents.ensure("alice", payload);
        const before = await rowOf(sub.id);
        await expectFailure(
          agents.ensure("alice", { slug: "researcher", name: "Researcher" }),
          ErrorCode.BackendImmutable,
          "backend_id",
        );
        expect(await rowOf(sub.id)).toEqual(before);
      });

      it("validates like create: a bad payload names the field and writes nothing", async () => {
        await expectFailure(
          agents.ensure("alice", { slug: "Bad_Slug", name: "x" }),
          ErrorCode.Validation,
          "slug",
        );
        expect(await countAgents()).toBe(0);
      });

      it("lets two concurrent declarations of one agent end with one agent", async () => {
        const [a, b] = await Promise.all([
          agents.ensure("alice", payload),
          agents.ensure("alice", payload),
        ]);
        expect(a.id).toBe(b.id);
        expect(await countAgents()).toBe(1);
      });
    });

    describe("default agent", () => {
      it("keeps one default per owner, on create and on update", async () => {
        expect(await agents.getDefault("alice")).toBeUndefined();
        const first = await chat("alice", "first", { is_default: true });
        const bobs = await chat("bob", "bobs", { is_default: true });
        const second = await chat("alice", "second", { is_default: true });

        expect((await agents.getDefault("alice"))?.id).toBe(second.id);
        // Losing the flag is a change like any other: the version moves.
        expect(await agents.get("alice", first.id)).toMatchObject({
          is_default: false,
          version: 2,
        });
        expect((await agents.getDefault("bob"))?.id).toBe(bobs.id);

        await agents.update("alice", first.id, { is_default: true });
        expect((await agents.getDefault("alice"))?.id).toBe(first.id);
        expect((await agents.get("alice", second.id)).is_default).toBe(false);
        const defaults = await db
          .selectFrom("agents")
          .select("id")
          .where("owner_uid", "=", "alice")
          .where("is_default", "=", 1)
          .execute();
        expect(defaults).toEqual([{ id: first.id }]);
      });

      it("never returns someone else's default", async () => {
        await chat("alice", "open", { is_default: true, share_config: { mode: "public" } });
        expect(await agents.getDefault("bob")).toBeUndefined();
      });
    });

    describe("list", () => {
      it("leaves subagents out unless asked, oldest first", async () => {
        await chat("alice", "b-chat");
        await subagent("alice", "a-sub");
        await chat("alice", "c-chat");
        await chat("bob", "bobs");
        expect(slugs(await agents.list("alice"))).toEqual(["b-chat", "c-chat"]);
        expect(slugs(await agents.list("alice", { include_subagents: true }))).toEqual([
          "b-chat",
          "a-sub",
          "c-chat",
        ]);
        expect(slugs(await agents.list("alice", { include_subagents: false }))).toEqual([
          "b-chat",
          "c-chat",
        ]);
      });
    });

    describe("findSubagents", () => {
      it("returns visible subagents in the order asked, dropping everything else", async () => {
        await subagent("alice", "writer", { share_config: { mode: "public" } });
        await subagent("bob", "researcher");
        await subagent("carol", "reviewer");
        await chat("bob", "chatty");
        const found = await agents.findSubagents("bob", [
          "writer",
          "reviewer",
          "chatty",
          "ghost",
          "researcher",
          "writer",
        ]);
        expect(found.map((record) => [record.owner_uid, record.slug])).toEqual([
          ["alice", "writer"],
          ["bob", "researcher"],
        ]);
        expect(await agents.findSubagents("bob", [])).toEqual([]);
      });

      it("never returns another user's private subagent, even with a matching slug", async () => {
        await subagent("carol", "researcher");
        expect(await agents.findSubagents("bob", ["researcher"])).toEqual([]);
        const bobs = await subagent("bob", "researcher");
        await subagent("alice", "researcher", { share_config: { mode: "public" } });
        expect((await agents.findSubagents("bob", ["researcher"])).map((r) => r.id)).toEqual([
          bobs.id,
        ]);
      });
    });

    describe("stored data", () => {
      it("keeps non-ASCII and escaped NUL text intact through the database", async () => {
        const created = await chat("alice", "intl", {
          name: "Tōkyō \u{1f5fc}",
          description: "multi\nline, 'quoted', \"double\"",
          config_json: { context: { system_prompt: "nul\u0000 inside JSON is escaped" } },
        });
        expect(await agents.get("alice", created.id)).toEqual(created);
      });

      it("refuses NUL in a stored text column, alike on every database, writing nothing", async () => {
        await expectFailure(
          chat("alice", "nul", { name: "a\u0000b" }),
          ErrorCode.Validation,
          "name",
        );
        await expectFailure(
          chat("alice", "nul", { description: "\u0000" }),
          ErrorCode.Validation,
          "description",
        );
        expect(await countAgents()).toBe(0);
        const helper = await chat("alice", "helper");
        await expectFailure(
          agents.update("alice", helper.id, { description: "x\u0000" }),
          ErrorCode.Validation,
          "description",
        );
        expect((await agents.get("alice", helper.id)).version).toBe(1);
      });

      it("answers an id or slug containing NUL as absent, without a database error", async () => {
        const helper = await chat("alice", "helper");
        await subagent("alice", "researcher");
        await expectFailure(agents.get("alice", "helper\u0000"), ErrorCode.NotFound);
        expect(await agents.find("alice", `${helper.id}\u0000`)).toBeUndefined();
        await expectFailure(
          agents.update("alice", `${helper.id}\u0000`, { name: "x" }),
          ErrorCode.NotFound,
        );
        await expectFailure(agents.delete("alice", "\u0000"), ErrorCode.NotFound);
        expect(
          slugs(await agents.findSubagents("alice", ["researcher\u0000", "researcher"])),
        ).toEqual(["researcher"]);
      });

      it("matches slugs case-sensitively (slugs are lower case, so an upper-case one is absent)", async () => {
        await chat("alice", "helper");
        expect(await agents.find("alice", "HELPER")).toBeUndefined();
        expect(await agents.findSubagents("alice", ["Helper"])).toEqual([]);
      });

      it("reports a corrupt JSON column as INTERNAL naming the agent", async () => {
        const helper = await chat("alice", "helper");
        await db
          .updateTable("agents")
          .set({ share_config: "{not json" })
          .where("id", "=", helper.id)
          .execute();
        const error = await expectFailure(agents.get("alice", helper.id), ErrorCode.Internal);
        expect(error.message).toContain(helper.id);
        await db
          .updateTable("agents")
          .set({ share_config: '{"mode":"everyone","uids":[],"editors":[]}' })
          .where("id", "=", helper.id)
          .execute();
        const invalid = await expectFailure(agents.get("alice", helper.id), ErrorCode.Internal);
        expect(invalid.message).toContain(helper.id);
      });
    });
  });
}
