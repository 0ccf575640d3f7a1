import type { BaseMessage } from "@langchain/core/messages";
import { afterEach, describe, expect, it } from "vitest";
import { hasErrorCode } from "../../errors.js";
import { ScriptedChatModel, type ScriptStep } from "../../models/scripted.js";
import type { Runtime } from "../../runtime.js";
import {
  mainAgentPayload,
  makeRuntime,
  type RuntimeFixture,
  subagentPayload,
} from "../support/runtime-fixture.js";

const KB_TOOLS = ["kb_search", "kb_read", "kb_list"];

/** The text of the last message the model was sent (the answer to its previous tool call). */
function lastText(messages: readonly BaseMessage[]): string {
  const last = messages.at(-1);
  return typeof last?.content === "string" ? last.content : JSON.stringify(last?.content);
}

/**
 * Agents and their knowledge bases, through the runtime's public entry (`runtime.run`) with
 * strict scripted models, on SQLite and PostgreSQL: default-all, `[]`, named selections, a
 * subagent with its own, unknown names, other users' knowledge bases, and a deletion mid-run.
 */
describe.each(["sqlite", "postgres"] as const)(
  "agents searching knowledge bases on %s",
  (saver) => {
    let fixture: RuntimeFixture | undefined;
    const models: ScriptedChatModel[] = [];
    afterEach(async () => {
      await fixture?.dispose();
      fixture = undefined;
      for (const model of models) model.assertComplete();
      models.length = 0;
    });

    async function setup(scripts: Record<string, ScriptStep[]>): Promise<Runtime> {
      const specs = Object.fromEntries(
        Object.entries(scripts).map(([name, steps]) => {
          const model = new ScriptedChatModel(name, steps);
          models.push(model);
          return [`scripted:${name}`, model];
        }),
      );
      fixture = await makeRuntime({ saver, models: specs });
      return fixture.runtime;
    }

    /** Alice's "handbook" (vacation rules) and "recipes" (soup), indexed. */
    async function aliceKnowledge(runtime: Runtime) {
      await runtime.kb.create("alice", { name: "handbook", description: "company rules" });
      await runtime.kb.create("alice", { name: "recipes", description: "kitchen notes" });
      await runtime.kb.addFiles("alice", "handbook", [
        {
          name: "leave.md",
          content: Buffer.from("# Leave\n\nVacation requests need two weeks notice.\n"),
        },
      ]);
      await runtime.kb.addFiles("alice", "recipes", [
        {
          name: "soup.txt",
          content: Buffer.from("Tomato soup needs basil and vacation-fresh tomatoes.\n"),
        },
      ]);
      await runtime.kb.idle();
    }

    it("gives an agent without a selection every knowledge base its user may read", async () => {
      const runtime = await setup({
        main: [
          {
            expect: (call) => {
              expect(call.tools).toEqual(expect.arrayContaining(KB_TOOLS));
              expect(call.system).toContain("- handbook: company rules");
              expect(call.system).toContain("- recipes: kitchen notes");
            },
            reply: { toolCalls: [{ name: "kb_search", args: { query: "vacation notice" } }] },
          },
          {
            expect: (call) => {
              const answer = lastText(call.messages);
              expect(answer).toContain("kb: handbook | file: leave.md");
              expect(answer).toContain("lines 1-3");
              expect(answer).toContain("Vacation requests need two weeks notice.");
              expect(answer).toContain("kb: recipes | file: soup.txt");
            },
            reply: { text: "two weeks" },
          },
        ],
      });
      await aliceKnowledge(runtime);
      await runtime.agents.create("alice", mainAgentPayload("boss", "scripted:main", undefined));
      const result = await runtime.run({ uid: "alice", agent: "boss", input: "how early to ask?" });
      expect(result.output).toBe("two weeks");
    });

    it("gives an agent with knowledge_bases: [] no knowledge tools and no prompt section", async () => {
      const runtime = await setup({
        main: [
          {
            expect: (call) => {
              for (const name of KB_TOOLS) expect(call.tools).not.toContain(name);
              expect(call.system).not.toContain("Knowledge bases");
            },
            reply: { text: "no idea" },
          },
        ],
      });
      await aliceKnowledge(runtime);
      await runtime.agents.create(
        "alice",
        mainAgentPayload("boss", "scripted:main", undefined, { knowledge_bases: [] }),
      );
      expect((await runtime.run({ uid: "alice", agent: "boss", input: "?" })).output).toBe(
        "no idea",
      );
    });

    it("limits an agent to the knowledge bases it names, and says so when asked for another", async () => {
      const runtime = await setup({
        main: [
          {
            expect: (call) => {
              expect(call.system).toContain("- handbook: company rules");
              expect(call.system).not.toContain("recipes");
            },
            reply: {
              toolCalls: [
                { name: "kb_search", args: { query: "vacation" } },
                { name: "kb_search", args: { query: "soup", kb: "recipes" } },
              ],
            },
          },
          {
            expect: (call) => {
              const [first, second] = call.messages.slice(-2).map((message) => lastText([message]));
              expect(first).toContain("file: leave.md");
              expect(first).not.toContain("soup.txt");
              expect(second).toBe(
                'kb_search failed: knowledge base "recipes" is not one of yours: use one of "handbook"',
              );
            },
            reply: {
              toolCalls: [{ name: "kb_read", args: { kb: "handbook", file_id: "missing" } }],
            },
          },
          {
            expect: (call) => expect(lastText(call.messages)).toContain('has no file "missing"'),
            reply: { text: "ok" },
          },
        ],
      });
      await aliceKnowledge(runtime);
      await runtime.agents.create(
        "alice",
        mainAgentPayload("boss", "scripted:main", undefined, { knowledge_bases: ["handbook"] }),
      );
      expect((await runtime.run({ uid: "alice", agent: "boss", input: "?" })).output).toBe("ok");
    });

    it("fails a run at its start when the agent names a knowledge base its user cannot see", async () => {
      const runtime = await setup({ main: [] });
      await aliceKnowledge(runtime);
      const bobs = await runtime.kb.create("bob", { name: "bob-private" });
      for (const named of ["ghost", bobs.id, "bob-private"]) {
        await runtime.agents.create(
          "alice",
          mainAgentPayload(`boss-${named.length}`, "scripted:main", undefined, {
            knowledge_bases: ["handbook", named],
          }),
        );
        const run = runtime.run({ uid: "alice", agent: `boss-${named.length}`, input: "?" });
        const error = await run.then(
          () => undefined,
          (thrown: unknown) => thrown,
        );
        expect(hasErrorCode(error, "UNKNOWN_KNOWLEDGE_BASE"), String(error)).toBe(true);
        expect(String(error)).toContain(JSON.stringify(named));
        expect(String(error)).not.toContain('handbook"');
      }
    });

    it("never shows one user's private knowledge base to another user's agent", async () => {
      const runtime = await setup({
        main: [
          {
            expect: (call) => {
              for (const name of KB_TOOLS) expect(call.tools).not.toContain(name);
              expect(call.system).not.toContain("handbook");
            },
            reply: { text: "nothing to search" },
          },
        ],
      });
      await aliceKnowledge(runtime);
      await runtime.agents.create("bob", mainAgentPayload("bobs", "scripted:main", undefined));
      const result = await runtime.run({ uid: "bob", agent: "bobs", input: "?" });
      expect(result.output).toBe("nothing to search");
    });

    it("lets a subagent search its own knowledge base while its parent cannot", async () => {
      const runtime = await setup({
        main: [
          {
            expect: (call) => {
              for (const name of KB_TOOLS) expect(call.tools).not.toContain(name);
            },
            reply: {
              toolCalls: [
                { name: "task", args: { description: "find the soup", subagent_type: "cook" } },
              ],
            },
          },
          {
            expect: (call) => expect(lastText(call.messages)).toBe("basil"),
            reply: { text: "the cook says basil" },
          },
        ],
        cook: [
          {
            expect: (call) => {
              expect(call.tools).toEqual(expect.arrayContaining(KB_TOOLS));
              expect(call.system).toContain("- recipes: kitchen notes");
              expect(call.system).not.toContain("handbook");
            },
            reply: { toolCalls: [{ name: "kb_search", args: { query: "tomato soup" } }] },
          },
          {
            expect: (call) => expect(lastText(call.messages)).toContain("Tomato soup needs basil"),
            reply: { text: "basil" },
          },
        ],
      });
      await aliceKnowledge(runtime);
      await runtime.agents.create(
        "alice",
        subagentPayload("cook", "scripted:cook", { knowledge_bases: ["recipes"] }),
      );
      await runtime.agents.create(
        "alice",
        mainAgentPayload("boss", "scripted:main", ["cook"], { knowledge_bases: [] }),
      );
      const result = await runtime.run({ uid: "alice", agent: "boss", input: "soup?" });
      expect(result.output).toBe("the cook says basil");
      expect(result.subagentRuns.map((run) => run.status)).toEqual(["completed"]);
    });

    it("keeps a knowledge base created during a run out of it, and gives it to the next run", async () => {
      let runtime: Runtime | undefined;
      const onlyHandbook = (call: { system: string }) => {
        expect(call.system).toContain("- handbook");
        expect(call.system).not.toContain("late");
      };
      runtime = await setup({
        main: [
          {
            expect: onlyHandbook,
            // Created while the run is under way: not in this run's snapshot.
            hold: async () => {
              await runtime?.kb.create("alice", { name: "late", description: "arrived late" });
            },
            reply: { toolCalls: [{ name: "kb_search", args: { query: "x", kb: "late" } }] },
          },
          {
            expect: (call) => {
              onlyHandbook(call);
              expect(lastText(call.messages)).toBe(
                'kb_search failed: knowledge base "late" is not one of yours: use one of "handbook"',
              );
            },
            reply: { text: "first" },
          },
          {
            expect: (call) => expect(call.system).toContain("- late: arrived late"),
            reply: { text: "second" },
          },
        ],
      });
      await runtime.kb.create("alice", { name: "handbook", description: "company rules" });
      await runtime.agents.create("alice", mainAgentPayload("boss", "scripted:main", undefined));
      expect((await runtime.run({ uid: "alice", agent: "boss", input: "?" })).output).toBe("first");
      expect((await runtime.run({ uid: "alice", agent: "boss", input: "?" })).output).toBe(
        "second",
      );
    });

    it("drops a knowledge base deleted during a run from that run's tools", async () => {
      let runtime: Runtime | undefined;
      runtime = await setup({
        main: [
          {
            expect: (call) => expect(call.system).toContain("- handbook"),
            reply: { text: "", toolCalls: [{ name: "kb_list", args: {} }] },
          },
          {
            // The knowledge base goes while the run is under way.
            hold: async () => {
              await runtime?.kb.delete("alice", "handbook");
            },
            expect: (call) => expect(lastText(call.messages)).toContain("leave.md (file_id"),
            reply: {
              toolCalls: [{ name: "kb_search", args: { query: "vacation", kb: "handbook" } }],
            },
          },
          {
            expect: (call) => {
              expect(lastText(call.messages)).toBe(
                'kb_search failed: knowledge base "handbook" is not one of yours: use one of (none)',
              );
              for (const name of KB_TOOLS) expect(call.tools).not.toContain(name);
              expect(call.system).not.toContain("Knowledge bases");
            },
            reply: { text: "it is gone" },
          },
        ],
      });
      await aliceKnowledge(runtime);
      await runtime.kb.delete("alice", "recipes");
      await runtime.agents.create("alice", mainAgentPayload("boss", "scripted:main", undefined));
      expect((await runtime.run({ uid: "alice", agent: "boss", input: "?" })).output).toBe(
        "it is gone",
      );
    });
  },
);
