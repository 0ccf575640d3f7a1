/**
 * Kept agent and knowledge base lookups (`store/stamped-reads.ts`) against the writes that must
 * end them, written once and run on every database we ship: a write through another connection
 * (another process on the same database), a hand edit in plain SQL, and one through the same
 * repository.
 *
 * `openTwo` returns two connections to one new, migrated database; the suite closes them.
 */

import type { KyselyPlugin } from "kysely";
import { sql } from "kysely";
import { afterEach, describe, expect, it } from "vitest";
import { AgentRepository } from "../../agents/repository.js";
import { KnowledgeBaseRepository } from "../../knowledge/repository.js";
import type { Database } from "../../store/database.js";
import { StampedReads } from "../../store/stamped-reads.js";
import { mainAgentPayload, subagentPayload } from "../support/runtime-fixture.js";

export function runStampedReadsSuite(
  name: string,
  openTwo: () => Promise<{ first: Database; second: Database }>,
): void {
  describe(`kept lookups (${name})`, () => {
    const open: Database[] = [];
    afterEach(async () => {
      await Promise.all(open.splice(0).map((database) => database.close()));
    });

    /** Repositories on `first` that keep lookups, plain ones on `second`, and a query count. */
    async function setUp() {
      const { first, second } = await openTwo();
      open.push(first, second);
      const agentSelects = { count: 0 };
      const counting: KyselyPlugin = {
        transformQuery(args) {
          const node = args.node as { kind: string; from?: { froms?: { table?: unknown }[] } };
          if (node.kind === "SelectQueryNode" && JSON.stringify(node.from).includes('"agents"')) {
            agentSelects.count += 1;
          }
          return args.node;
        },
        async transformResult(args) {
          return args.result;
        },
      };
      const reads = new StampedReads(() => first.changeStamp());
      const kept = new AgentRepository(first.db.withPlugin(counting), { reads });
      const keptKbs = new KnowledgeBaseRepository(first, { reads });
      const elsewhere = new AgentRepository(second.db);
      const kbsElsewhere = new KnowledgeBaseRepository(second);
      return { first, second, kept, keptKbs, elsewhere, kbsElsewhere, agentSelects };
    }

    it("answers a repeated lookup without reading the agents again", async () => {
      const { kept, elsewhere, agentSelects } = await setUp();
      await elsewhere.create("alice", subagentPayload("worker", "scripted:x"));
      const first = await kept.find("alice", "worker");
      const selectsAfterFirst = agentSelects.count;
      const again = await kept.find("alice", "worker");
      expect(again).toBe(first);
      expect(agentSelects.count).toBe(selectsAfterFirst);
      // Another user's lookup is another read: what one user sees is never another's answer.
      expect(await kept.find("bob", "worker")).toBeUndefined();
      expect(agentSelects.count).toBe(selectsAfterFirst + 1);
    });

    it("follows updates, deletions and new defaults made through another connection", async () => {
      const { kept, elsewhere } = await setUp();
      const worker = await elsewhere.create("alice", subagentPayload("worker", "scripted:x"));
      const boss = await elsewhere.create("alice", {
        ...mainAgentPayload("boss", "scripted:x", ["worker"]),
        is_default: true,
      });
      expect((await kept.find("alice", boss.id))?.version).toBe(1);
      expect((await kept.findSubagents("alice", ["worker"])).map((a) => a.id)).toEqual([worker.id]);
      expect((await kept.getDefault("alice"))?.slug).toBe("boss");

      await elsewhere.update("alice", boss.id, { description: "changed elsewhere" });
      const updated = await kept.find("alice", boss.id);
      expect(updated?.description).toBe("changed elsewhere");
      expect(updated?.version).toBe(2);

      const other = await elsewhere.create("alice", {
        ...mainAgentPayload("other", "scripted:x", []),
        is_default: true,
      });
      expect((await kept.getDefault("alice"))?.id).toBe(other.id);

      await elsewhere.delete("alice", worker.id, { detach: true });
      expect(await kept.findSubagents("alice", ["worker"])).toEqual([]);
      expect(await kept.find("alice", "worker")).toBeUndefined();
    });

    it("follows a hand edit in plain SQL", async () => {
      const { second, kept, elsewhere } = await setUp();
      const worker = await elsewhere.create("alice", subagentPayload("worker", "scripted:x"));
      expect((await kept.find("alice", worker.id))?.description).toBe(worker.description);
      await sql`update agents set description = ${"edited by hand"} where id = ${worker.id}`.execute(
        second.db,
      );
      expect((await kept.find("alice", worker.id))?.description).toBe("edited by hand");
    });

    it("follows its own writes", async () => {
      const { first } = await setUp();
      const reads = new StampedReads(() => first.changeStamp());
      const repository = new AgentRepository(first.db, { reads });
      const worker = await repository.create("alice", subagentPayload("worker", "scripted:x"));
      expect((await repository.find("alice", "worker"))?.version).toBe(1);
      await repository.update("alice", worker.id, { description: "again" });
      expect((await repository.find("alice", "worker"))?.description).toBe("again");
    });

    it("follows knowledge bases created, renamed and deleted through another connection", async () => {
      const { keptKbs, kbsElsewhere } = await setUp();
      expect(await keptKbs.list("alice")).toEqual([]);
      const handbook = await kbsElsewhere.create("alice", { name: "handbook" });
      expect((await keptKbs.list("alice")).map((kb) => kb.name)).toEqual(["handbook"]);
      expect((await keptKbs.find("alice", "handbook"))?.id).toBe(handbook.id);
      expect((await keptKbs.findByIds("alice", [handbook.id])).map((kb) => kb.name)).toEqual([
        "handbook",
      ]);
      await kbsElsewhere.update("alice", handbook.id, { name: "rules" });
      expect(await keptKbs.find("alice", "handbook")).toBeUndefined();
      expect((await keptKbs.find("alice", "rules"))?.id).toBe(handbook.id);
      expect((await keptKbs.findByIds("alice", [handbook.id])).map((kb) => kb.name)).toEqual([
        "rules",
      ]);
      await kbsElsewhere.delete("alice", handbook.id);
      expect(await keptKbs.list("alice")).toEqual([]);
      expect(await keptKbs.findByIds("alice", [handbook.id])).toEqual([]);
    });

    it("hands out kept records frozen, so no caller can change what the next one reads", async () => {
      const { kept, elsewhere } = await setUp();
      await elsewhere.create("alice", subagentPayload("worker", "scripted:x"));
      const record = await kept.find("alice", "worker");
      if (!record) throw new Error("worker not found");
      expect(() => {
        (record as { description: string }).description = "changed";
      }).toThrow(TypeError);
      expect(() => {
        (record.config_json.context as { max_rounds?: number }).max_rounds = 99;
      }).toThrow(TypeError);
      expect((await kept.find("alice", "worker"))?.description).toBe(record.description);
    });
  });
}
